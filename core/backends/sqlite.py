"""The ``sqlite`` backend: memory kept in a SQLite database under ``.fusion/memdesk/``, searched with FTS5.

The database holds the canonical content and its keyword index; a write updates both in one
transaction. With the mirror on (the default) every write is also copied to ``.fusion/memory.md`` so
agents that read the file still see the memory; an edit made to that file outside memdesk (an agent
appending an entry) is imported into the database before the next read, write or search, so nothing
an agent wrote is lost. History: the previous content is recorded under ``.fusion/memory.md`` (the
working memory's logical path) before every replacement.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import Field

from core import fileio, history, saving
from core.backends.base import BackendSettings, MemoryBackend, MemorySearchOptions, MemorySearchResult
from core.errors import MemoryBackendError, PathOutsideRootError
from core.layout import SEED_MEMORY as MEMORY_FILE_PATH
from core.search.db import Database
from core.search.service import RACY_NS, SearchService

log = logging.getLogger(__name__)

DEFAULT_DATABASE = ".fusion/memdesk/memory.db"


class SqliteSettings(BackendSettings):
    """Settings of the ``sqlite`` backend."""

    database: str = Field(DEFAULT_DATABASE, min_length=1, title="Database file",
                          description="Path of the SQLite database, relative to the project root "
                                      "(it must stay inside the project).")
    mirror: bool = Field(True, title="Mirror to .fusion/memory.md",
                         description="Copy the memory to .fusion/memory.md after every write, so agents "
                                     "that read the file still see it; edits made to that file are imported.")
    tokenizer: Literal["porter", "unicode61", "trigram"] = Field(
        "porter", title="Search tokenizer",
        description="porter: English word stems (claims finds claim); unicode61: exact words; "
                    "trigram: any part of a word (three letters or more).")


class SqliteMemoryBackend(MemoryBackend):
    """Memory in a SQLite database with an FTS5 BM25 keyword index and an optional file mirror."""

    id = "sqlite"
    name = "SQLite"
    version = "1.0.0"
    description = "Memory in a SQLite database under .fusion/memdesk/, FTS5 keyword search, optional file mirror."
    capabilities = frozenset({"read", "write", "search", "transactions"})
    settings_model = SqliteSettings

    def on_initialize(self) -> None:
        """Open the database (confined to the project root) and import the file when it is new."""
        assert self.root is not None
        settings: SqliteSettings = self.settings  # type: ignore[assignment]
        try:
            db_path = fileio.resolve_in_root(self.root, settings.database)
        except PathOutsideRootError as exc:
            raise MemoryBackendError(f'invalid setting "database": {exc}', "INVALID_CONFIG", self.id, exc) from exc
        if db_path.is_dir():
            raise MemoryBackendError(f'invalid setting "database": {settings.database} is a folder',
                                     "INVALID_CONFIG", self.id)
        self.memory_path = MEMORY_FILE_PATH if settings.mirror else None  # type: ignore[misc]
        self._mirror_seen: tuple[int, ...] | None = None
        self._db = Database(db_path, self.id)
        with self._db.transaction() as c:
            c.execute("CREATE TABLE IF NOT EXISTS memory(id INTEGER PRIMARY KEY CHECK (id = 1), content TEXT NOT NULL,"
                      " hash TEXT NOT NULL, updated_at TEXT NOT NULL, updated_ns INTEGER NOT NULL,"
                      " mirror_hash TEXT)")
        self.search_service = SearchService(self.root, self._db, tokenizer=settings.tokenizer, embedder=None,
                                            working=self._content,
                                            keyword_only_reason="the sqlite backend searches by keyword (FTS5) only")
        if self._row() is None:
            self._import_file(source="import")
        else:
            self._sync_mirror()

    # -- content ------------------------------------------------------------------------------
    def _row(self) -> tuple[str, str, str | None, int] | None:
        with self._db.lock:
            return self._db.conn.execute(
                "SELECT content, hash, mirror_hash, updated_ns FROM memory WHERE id = 1").fetchone()

    def _content(self) -> str:
        row = self._row()
        return row[0] if row else ""

    def _import_file(self, source: str) -> bool:
        """Take ``.fusion/memory.md`` into the database when it was changed outside memdesk.

        Decided by content, never by clock: the file is an outside edit unless it holds the
        database's content or what memdesk last mirrored (``mirror_hash``); a file that is what was
        last mirrored while the database moved on (the mirror was off) is rewritten from the
        database, its old text kept in history. A modification time can be old for an edit made a
        second ago (``cp -p``, ``rsync -t``, a skewed clock), so it is never trusted here. A mirror
        that is not a regular file inside the root (a link to ``~/.ssh``, a FIFO) is never read.
        """
        assert self.root is not None
        settings: SqliteSettings = self.settings  # type: ignore[assignment]
        row = self._row()
        if row is not None and not settings.mirror:
            return False
        try:
            text = fileio.read_in_root(self.root, MEMORY_FILE_PATH, self.id)
        except MemoryBackendError as exc:
            log.warning("not importing %s: %s", MEMORY_FILE_PATH, exc)
            return False
        if text is None:
            if row is None:
                self._store("", source, record=False)
            return False
        digest = fileio.content_hash(text)
        if row is not None and digest == row[1]:
            return False
        if row is not None and digest == row[2]:  # the last mirror, left behind while the mirror was off
            if not self._db.in_transaction:  # inside a write, the commit rewrites the mirror anyway
                self._write_mirror(row[0], "mirror-refresh")
            return False
        self._store(text, source, mirror_hash=digest)
        return True

    def _store(self, content: str, source: str, *, mirror_hash: str | None = None, record: bool = True) -> None:
        """Replace the content and its index rows in one transaction (history first)."""
        assert self.root is not None
        self._mirror_seen = None
        with self._db.transaction() as c:
            row = c.execute("SELECT content, mirror_hash FROM memory WHERE id = 1").fetchone()
            if record and row and row[0]:
                history.record_version(self.root, MEMORY_FILE_PATH, row[0], source)
            now = datetime.now(UTC).isoformat(timespec="seconds")
            keep_mirror = mirror_hash if mirror_hash is not None else (row[1] if row else None)
            c.execute("INSERT OR REPLACE INTO memory(id, content, hash, updated_at, updated_ns, mirror_hash) "
                      "VALUES (1,?,?,?,?,?)", (content, fileio.content_hash(content), now, time.time_ns(), keep_mirror))
            self.search_service.sync_text(MEMORY_FILE_PATH, content)

    def sync_external_changes(self) -> None:
        """Import an edit of the mirror file made outside memdesk (no-op with the mirror off)."""
        self.require_initialized()
        self._sync_mirror()

    def _sync_mirror(self) -> None:
        """Import an outside edit of the mirror file, unless nothing can have changed since the last look.

        Reading and hashing the file costs milliseconds for a big memory, and every search and read
        comes here; so the look is skipped while the file's identity, change and modification times
        and size, and the database (``data_version``: no other connection committed), are what they
        were at a look that found everything in step and that came more than the timestamp-granularity
        window after the file's last change. Any write of this backend forgets that look.
        """
        assert self.root is not None
        if self.memory_path is None:
            return
        seen = self._mirror_state()
        if seen is not None and seen == self._mirror_seen:
            return
        with fileio.file_lock(self.root, MEMORY_FILE_PATH):
            try:
                self._import_file(source="mirror-import")
            except MemoryBackendError as exc:  # the database still answers; the mirror is best effort
                log.warning("mirror %s not refreshed: %s", MEMORY_FILE_PATH, exc)
                return
        self._mirror_seen = seen if seen == self._mirror_state() else None

    def _mirror_state(self) -> tuple[int, ...] | None:
        """The mirror file's identity (device, inode), change time, modification time and size, and the
        database's ``data_version``; ``None`` when the file is missing, unreadable, or changed too
        recently for its timestamps to tell two changes apart.

        The change time is set by the kernel on every change and cannot be put back (``touch -d`` and
        ``cp -p`` set only the modification time), so an edit whose modification time was restored
        still shows here; the content itself is compared by :meth:`_import_file`.
        """
        assert self.root is not None
        try:
            st = os.stat(self.root / MEMORY_FILE_PATH)
        except OSError:
            return None
        if st.st_ctime_ns + RACY_NS >= time.time_ns():
            return None
        return st.st_dev, st.st_ino, st.st_ctime_ns, st.st_mtime_ns, st.st_size, self._db.data_version()

    def read(self) -> str:
        """Return the content (importing an outside edit of the mirror file first)."""
        self.require_initialized()
        self.sync_external_changes()
        return self._content()

    def write(self, content: str, *, expected_hash: str | None = None, source: str = "write") -> None:
        """Replace the content in one transaction; ``CONFLICT`` when it changed since ``expected_hash``."""
        root = self.require_initialized()
        if not isinstance(content, str):
            raise MemoryBackendError(f"content must be a string, not {type(content).__name__}", "WRITE_FAILED",
                                     self.id)
        fileio.check_size(content.encode("utf-8"), "the memory", self.id)
        with fileio.file_lock(root, MEMORY_FILE_PATH), self.transaction():
            if self.memory_path is not None:
                self._import_file(source="mirror-import")
            row = self._row()
            current = row[1] if row else fileio.content_hash("")
            if expected_hash is not None and expected_hash != current:
                raise MemoryBackendError("the memory changed since it was loaded; reload or merge before saving",
                                         "CONFLICT", self.id)
            if row is not None and row[0] == content:
                return
            self._store(content, source)
            if self.memory_path is not None:
                self._db.after_commit(lambda: self._write_mirror(content, source))

    def _write_mirror(self, content: str, source: str) -> None:
        assert self.root is not None
        self._mirror_seen = None
        try:
            saving.replace_text(self.root, MEMORY_FILE_PATH, content, source=source, backend_id=self.id)
        except MemoryBackendError as exc:
            raise MemoryBackendError(f"the memory was saved in the database, but the mirror {MEMORY_FILE_PATH} "
                                     f"could not be updated: {exc}", "WRITE_FAILED", self.id, exc) from exc
        with self._db.transaction() as c:
            c.execute("UPDATE memory SET mirror_hash = ? WHERE id = 1", (fileio.content_hash(content),))

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Group writes into one database transaction: all of them are kept, or none."""
        self.require_initialized()
        with self._db.transaction():
            yield

    # -- search -------------------------------------------------------------------------------
    def search(self, query: str, options: MemorySearchOptions | None = None) -> list[MemorySearchResult]:
        """FTS5 BM25 search over the memory, archive, insights and layered files."""
        self.require_initialized()
        self.sync_external_changes()
        return self.search_service.search(query, options)

    def search_note(self, mode: str) -> str | None:
        """The note to show with results of ``mode`` (semantic modes run keyword-only here)."""
        return self.search_service.note(mode) if self.initialized else None

    def status_note(self) -> str | None:
        """Keyword-only, always."""
        return "keyword search only (FTS5)"

    def shutdown(self) -> None:
        """Close the database."""
        super().shutdown()
        db = getattr(self, "_db", None)
        if db is not None:
            db.close()

    @property
    def database_path(self) -> Path:
        """Absolute path of the database file."""
        return self._db.path
