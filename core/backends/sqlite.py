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
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import Field

from core.backends import mirror_ledger as ledger_mod
from core.backends.base import (
    BackendSettings,
    MemoryBackend,
    MemorySearchOptions,
    MemorySearchResult,
    screen_import,
)
from core.documents.layout import SEED_MEMORY as MEMORY_FILE_PATH
from core.errors import MemoryBackendError, PathOutsideRootError
from core.search.db import Database
from core.search.service import RACY_NS, SearchService
from core.storage import fileio
from core.storage.history import versions as history
from core.storage.writers import MIRROR

log = logging.getLogger(__name__)

DEFAULT_DATABASE = ".fusion/memdesk/memory.db"


STATE_DIR = ".fusion/memdesk"
_DB_SUFFIXES = (".db", ".sqlite", ".sqlite3")
_OTHER_STATE = {"history.db", "search.db"}  # memdesk's own databases in the same folder (history, hybrid's index)


def _not_a_memory_database(root: Path, db_path: Path) -> str | None:
    """Why ``db_path`` (resolved, inside ``root``) may not be the memory database, or ``None``.

    The setting comes from the project's settings, so from whoever made the repository: it must name a
    database in memdesk's state folder, never a project file (an empty ``__init__.py`` would become a
    database) nor memdesk's history, and a file already there must be an SQLite database."""
    state = Path(os.path.realpath(root / STATE_DIR))
    db_path = Path(os.path.realpath(db_path))
    if state not in db_path.parents:
        return f"is not in {STATE_DIR}/ (where memdesk keeps its state; links are followed)"
    if db_path.suffix.lower() not in _DB_SUFFIXES or db_path.name.lower() in _OTHER_STATE:
        return f"must be a .db, .sqlite or .sqlite3 file other than {', '.join(sorted(_OTHER_STATE))}"
    try:
        st = os.lstat(db_path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be checked: {exc.strerror or exc}"
    import stat

    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    if st.st_size:
        try:  # not through a link, and never waiting on a FIFO swapped in since the lstat
            fd = os.open(db_path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            try:
                head = os.read(fd, 16)
            finally:
                os.close(fd)
        except OSError as exc:
            return f"cannot be read: {exc.strerror or exc}"
        if head != b"SQLite format 3\x00":
            return "is not an SQLite database (move it aside, or name another database)"
    return None


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
        why = _not_a_memory_database(self.root, db_path)
        if why:
            raise MemoryBackendError(f'invalid setting "database": {settings.database} {why}; nothing was opened',
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
        """Bring the database and ``.fusion/memory.md`` in step (see :meth:`_sync_locked`); whether the
        database's text changed."""
        assert self.root is not None
        settings: SqliteSettings = self.settings  # type: ignore[assignment]
        row = self._row()
        if row is not None and not settings.mirror:
            return False
        if not settings.mirror:  # a new database: the file's text, once
            try:
                text = fileio.read_in_root(self.root, MEMORY_FILE_PATH, self.id)
            except MemoryBackendError as exc:
                log.warning("not importing %s: %s", MEMORY_FILE_PATH, exc)
                text = None
            self._store(text or "", source, record=False)
            return bool(text)
        before = row[0] if row else None
        self._sync_locked(source)
        return self._content() != before

    def _whole(self, row: tuple[str, str, str | None, int] | None) -> Callable[[str], str]:
        """The decision for a mirror file the ledger cannot split (no note; replaced or edited by a program).

        Decided by content, never by clock: the file is an outside edit unless it holds the database's
        content or what memdesk last mirrored (``mirror_hash``, left behind while the mirror was off: then
        it is rewritten from the database). A modification time can be old for an edit made a second ago
        (``cp -p``, ``rsync -t``, a skewed clock), so it is never trusted here.
        """
        def decide(text: str) -> str:
            if row is None:
                return text
            digest = fileio.content_hash(text)
            if digest == row[1] or digest == row[2]:
                return row[0]
            return text

        return decide

    def _look(self, *, writing: bool = False) -> AbstractContextManager[ledger_mod.Look | None]:
        """The mirror file as it is now; ``writing``: its ledger notes must be writable first (a link out of the
        project refuses the write in one line, before anything changed)."""
        if self.memory_path is None:
            return nullcontext(None)
        led = self._ledger
        if writing:
            led.check()
        return led.safe_look()

    def _take_in(self, look: ledger_mod.Look | None, source: str) -> ledger_mod.Step | None:
        """Inside a transaction: the agents' additions to the mirror taken in once (:mod:`core.backends.mirror_ledger`)."""
        if look is None:
            return None
        row = self._row()
        try:
            step = self._ledger.step(look, row[0] if row else None, self._whole(row))
        except MemoryBackendError as exc:  # not UTF-8, a link out...: never imported, never overwritten
            log.warning("not importing %s: %s", MEMORY_FILE_PATH, exc)
            if row is None:
                self._store("", source, record=False)
            return None
        if row is None and not step.changed:
            self._store("", source, record=False)
        if step.changed and step.in_step and look.data is not None:
            # Agents' lines taken in: their note is put down as pending before the commit (the ledger's crash
            # rule), else a crash after the commit and before the note takes them in again on the next look.
            led = self._ledger
            led.save(led.load(fileio.content_hash(row[0] if row else "")),
                     led.note_for(look.dev, look.ino, look.data[:step.upto], step.base))
        if step.changed:
            fileio.check_size(step.base.encode("utf-8"), MEMORY_FILE_PATH, self.id)
            # The version before an agent's change is kept too (it is a change memdesk did not make).
            self._store(step.base, source, mirror_hash=fileio.content_hash(step.base))
            self._screen_import(step.imported, row[0] if row else None)
        return step

    def _screen_import(self, text: str, before: str | None) -> None:
        """The firewall sees the agents' ``text`` once the transaction taking it in commits (only that text)."""
        if text:
            self._db.after_commit(lambda: screen_import(self.root, MEMORY_FILE_PATH, text, before, "mirror"))

    def _sync_locked(self, source: str) -> None:
        """Under the file lock: take the mirror's news in, then bring the file in step (after the commit)."""
        with self._look() as look:
            with self._db.transaction():
                step = self._take_in(look, source)
            self._mirror_out(look, step)

    def _mirror_out(self, look: ledger_mod.Look | None, step: ledger_mod.Step | None,
                    appended: str | None = None) -> None:
        """After the commit, under the file lock: the file holds the database's text (see the postgres
        backend's ``_mirror_out``: the same rule). Deferred to the outer commit inside a transaction."""
        if look is not None and look.error is not None and (appended or step is not None):
            raise MemoryBackendError(f"the memory was saved in the database, but the mirror {MEMORY_FILE_PATH} "
                                     f"could not be updated: {look.error}", "WRITE_FAILED", self.id, look.error)
        if look is None or step is None:
            return
        if self._db.in_transaction:  # a caller's transaction: the file follows once it commits
            self._db.after_commit(self._resync)
            return
        assert self.root is not None
        led, content = self._ledger, self._content()
        self._mirror_seen = None
        try:
            if appended and step.in_step and look.data is not None and look.plain:
                between, _end = led.append(look.dev, look.ino, look.data[:step.upto], appended, "-")
                if not between:  # the entry's note goes once the ledger's is down (save ends it): a crash
                    prefix = look.data[:step.upto] + appended.encode("utf-8")  # between, the entry is not retaken
                    return led.save(led.note_for(look.dev, look.ino, prefix, content))
                led.end_append()
                content = self._take_late(between)
                with led.look() as look:
                    late, _end, dev, ino = led.replace(look, content)
            elif step.in_step and look.data is not None and not appended and step.base == content:
                return led.save(led.note_for(look.dev, look.ino, look.data[:step.upto], content))
            else:
                late, _end, dev, ino = led.replace(look, content)
            if late:
                content = self._take_late(late)
            led.save(led.note_for(dev, ino, content.encode("utf-8"), content))
            with self._db.transaction() as c:
                c.execute("UPDATE memory SET mirror_hash = ? WHERE id = 1", (fileio.content_hash(content),))
        except ledger_mod.Moved:  # changed by another program since the look: taken in, by content, next time
            led.end_append()
            led.forget()
        except MemoryBackendError as exc:
            led.end_append()
            led.forget()
            raise MemoryBackendError(f"the memory was saved in the database, but the mirror {MEMORY_FILE_PATH} "
                                     f"could not be updated: {exc}", "WRITE_FAILED", self.id, exc) from exc

    def _take_late(self, text: str) -> str:
        """Agents' ``text`` found past memdesk's look, appended to the content in its own transaction."""
        with self._db.transaction():
            before = self._content()
            content = before + text
            self._store(content, "mirror-import", record=False, mirror_hash=fileio.content_hash(content))
            self._screen_import(text, before)
        return content

    def _resync(self) -> None:
        assert self.root is not None
        with fileio.file_lock(self.root, MEMORY_FILE_PATH):
            self._sync_locked("mirror-import")

    @property
    def _ledger(self) -> ledger_mod.Ledger:
        assert self.root is not None
        return ledger_mod.Ledger(self.root, MEMORY_FILE_PATH, "sqlite", self.id)

    def _store(self, content: str, source: str, *, mirror_hash: str | None = None, record: bool = True) -> None:
        """Replace the content and its index rows in one transaction (history first)."""
        assert self.root is not None
        self._mirror_seen = None
        with self._db.transaction() as c:
            row = c.execute("SELECT content, mirror_hash FROM memory WHERE id = 1").fetchone()
            if record and row and row[0]:
                history.record_version(self.root, MEMORY_FILE_PATH, row[0], source,
                                       author=MIRROR.label if source == "mirror-import" else None)
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
        with fileio.file_lock(root, MEMORY_FILE_PATH), self._look(writing=True) as look:
            with self.transaction():
                step = self._take_in(look, "mirror-import")
                row = self._row()
                current = row[1] if row else fileio.content_hash("")
                if expected_hash is not None and expected_hash != current:
                    raise MemoryBackendError("the memory changed since it was loaded; reload or merge before saving",
                                             "CONFLICT", self.id)
                if row is None or row[0] != content:
                    self._store(content, source)
                    step = step or (ledger_mod.Step(content, False, 0, "", False) if look is not None else None)
            self._mirror_out(look, step)

    def append_document(self, relpath: str, build: Callable[[str], str | None], *,
                        author: str | None = None, source: str = "append") -> str | None:
        """Append ``build(current)`` to the memory in one transaction, taking the mirror's news in first; the
        mirror gets the entry with ``O_APPEND`` (agents appending meanwhile lose nothing, repeat nothing)."""
        root = self.require_initialized()
        if not self.is_primary(relpath):
            return super().append_document(relpath, build, author=author, source=source)
        self.require_writable()
        with fileio.file_lock(root, MEMORY_FILE_PATH), self._look(writing=True) as look:
            with self.transaction():
                step = self._take_in(look, "mirror-import")
                current = self._content()
                addition = build(current)
                if addition:
                    new = current + addition
                    fileio.check_size(new.encode("utf-8"), MEMORY_FILE_PATH, self.id)
                    self._store(new, source, record=False)
                    step = step or (ledger_mod.Step(current, False, 0, "", False) if look is not None else None)
                    if step is not None and step.in_step and look is not None and look.plain:
                        self._ledger.begin_append(step.upto, addition, fileio.content_hash(new))
            self._mirror_out(look, step, addition or None)
        return addition or None

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
