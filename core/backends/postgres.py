"""The ``postgres`` backend: a team's memory in one shared PostgreSQL database (documents, history, full text).

The project's ``memoryBackendConfig`` is ``{"connection": "team", "projectKey": "acme-api", "mirror": true}``:
the connection is a name from the user's ``connections.json`` (:mod:`core.settings.connections`), never a DSN (one
in a project is refused with ``INVALID_CONFIG``). Documents are keyed by project key + layout path (both
layouts' paths). Writes are transactions that lock their document and re-read it (see
:mod:`core.backends.pg.documents`); a replacing write with a stale ``expected_hash`` is a ``CONFLICT``.
With the mirror on (the default) every document is also written to its file so agents that only read
files see it, and an agent's edit of that file is imported by content (:mod:`core.backends.pg.mirror`).
An unknown connection, a server that is down or refuses the password make :meth:`initialize` raise, so
the seed's resolution falls back to ``file`` with the reason, having written nothing anywhere.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from pydantic import Field, field_validator, model_validator

from core.backends import mirror_ledger as ledger_mod
from core.backends.base import (
    BackendSettings,
    MemoryBackend,
    MemorySearchOptions,
    MemorySearchResult,
    screen_import,
)
from core.backends.pg import documents as docs
from core.backends.pg import mirror as mirror_mod
from core.backends.pg import search as pg_search
from core.backends.pg.db import PgDatabase
from core.backends.pg.documents import check_document_path
from core.backends.pg.notify import ChangeFeed, DocumentChange, Watch, watch
from core.errors import MemoryBackendError, SettingsError
from core.settings.connections import get_connection
from core.storage import fileio
from core.storage.history.versions import RetentionPolicy, Version, project_retention_policy
from core.storage.writers import MIRROR

log = logging.getLogger(__name__)

_KEY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
#: Keys that would put a DSN or its parts into a project's (shared, untrusted) config.
_DSN_KEYS = {"dsn", "url", "uri", "conninfo", "connectionstring", "connection_string", "password", "passfile",
             "host", "hostaddr", "port", "user", "dbname", "database"}
KEYWORD_ONLY = ("the postgres backend searches by keyword only (PostgreSQL full text); vector search would "
                "need pgvector, which it does not use")


class PostgresSettings(BackendSettings):
    """Settings of the ``postgres`` backend (the DSN itself is in the user's connections, never here)."""

    connection: str = Field("", title="Connection",
                            description="Name of a connection in your user config (add one with "
                                        "'memdesk connections set NAME --dsn DSN'). Never a DSN.")
    project_key: str = Field("", alias="projectKey", title="Project key",
                             description="Names this project's memory in the shared database "
                                         "(letters, digits, '.', '_', '-'); every host of the team uses the same.")
    mirror: bool = Field(True, title="Mirror to files",
                         description="Also write each document to its file so agents that only read files see "
                                     "it; an agent's edit of a mirrored file is imported, never overwritten.")

    @model_validator(mode="before")
    @classmethod
    def _no_dsn(cls, data: Any) -> Any:
        if isinstance(data, dict):
            bad = sorted(k for k in data if str(k).lower() in _DSN_KEYS)
            if bad:
                raise ValueError(f"{', '.join(bad)} must not be in a project's config: a DSN belongs to your "
                                 "user config ('memdesk connections set NAME --dsn DSN'); name it with \"connection\"")
        return data

    @field_validator("connection")
    @classmethod
    def _name_only(cls, value: str) -> str:
        if value and ("=" in value or "://" in value or " " in value or "@" in value):
            raise ValueError("looks like a DSN; a project names a connection from your user config "
                             "('memdesk connections set NAME --dsn DSN'), never the DSN itself")
        return value

    @field_validator("project_key")
    @classmethod
    def _key(cls, value: str) -> str:
        if value and not _KEY_RE.match(value):
            raise ValueError("must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit")
        return value


class PostgresMemoryBackend(MemoryBackend):
    """Memory in a shared PostgreSQL database: documents, history, ranked full-text search, live changes."""

    id = "postgres"
    name = "PostgreSQL (team)"
    version = "1.0.0"
    description = ("A shared PostgreSQL database for a team: documents, history and full-text search; "
                   "the connection is yours (user config), the project only names it.")
    capabilities = frozenset({"read", "write", "search", "transactions"})
    settings_model = PostgresSettings

    def on_initialize(self) -> None:
        """Connect (named connection → DSN), migrate, then bring the primary document's mirror in step."""
        assert self.root is not None
        s: PostgresSettings = self.settings  # type: ignore[assignment]
        if not s.connection:
            raise MemoryBackendError('memoryBackendConfig.connection is not set: name one of your connections '
                                     "('memdesk connections list')", "INVALID_CONFIG", self.id)
        if not s.project_key:
            raise MemoryBackendError('memoryBackendConfig.projectKey is not set: every host of the team uses the '
                                     "same key for this project", "INVALID_CONFIG", self.id)
        try:
            conn = get_connection(s.connection)
        except SettingsError as exc:
            raise MemoryBackendError(str(exc), "INVALID_CONFIG", self.id, exc) from exc
        self.connection_name = s.connection
        self.project_key = s.project_key
        self._dsn = conn.dsn
        self.db = PgDatabase(conn.dsn, self.id)
        self.db.open()  # nothing local is touched before the server has answered
        self.origin = uuid.uuid4().hex
        self.primary = self.primary_path  # the layout's long-term document (set by the base class)
        self.memory_path = self.primary if s.mirror else None  # type: ignore[misc]
        self.mirror = mirror_mod.MirrorFiles(self.root, self.project_key, self.id) if s.mirror else None
        self._chunks = docs.ChunkCache()
        self._seen: dict[str, tuple[tuple[int, int] | None, str | None]] = {}
        self._unmirrorable: set[str] = set()
        self._imports: dict[str, list[tuple[str, str | None, str]]] = {}
        self._watches: list[Watch] = []
        self._policy: RetentionPolicy = project_retention_policy(self.root)
        self.warnings: list[str] = []
        try:
            if self.mirror is not None and (self.mirror.stat(self.primary) is not None or self._has(self.primary)):
                self._synced(self.primary)
        except MemoryBackendError as exc:
            if exc.code in ("BACKEND_UNAVAILABLE", "NOT_INITIALIZED"):  # the server went away: fall back
                self.db.close()
                raise
            log.warning("mirror of %s not brought in step: %s", self.primary, exc)  # must not block opening

    # -- documents ----------------------------------------------------------------------------------
    def _has(self, path: str) -> bool:
        with self.db.connection("read") as conn:
            return docs.fetch_hash(conn, self.project_key, path) is not None

    def _file_lock(self, path: str) -> AbstractContextManager[Any]:
        assert self.root is not None
        return fileio.file_lock(self.root, path) if self.mirror is not None else nullcontext()

    def _whole(self, conn: Any, path: str, row: docs.DocRow | None) -> Callable[[str], str]:
        """The decision for a mirror file the ledger cannot split (no note, a replaced or edited file):
        :func:`core.backends.pg.mirror.reconcile` by content. Returns the database's new text."""
        assert self.mirror is not None
        mirror = self.mirror

        def decide(text: str) -> str:
            current = row.content if row else ""
            if row is not None and text == row.content:
                return current
            digest = fileio.content_hash(text)
            last = mirror.last(path)
            base = mirror.base_of(path, text)  # the file is what was mirrored, perhaps with an agent's append
            if base is None and last is not None:  # edited inside: the mirrored text may be a kept version
                base = docs.version_content(conn, self.project_key, path, last.hash)
            known_old = (row is not None and row.content != "" and base != text
                         and docs.version_content(conn, self.project_key, path, digest) is not None)
            d = mirror_mod.reconcile(text, row.content if row else None, base, known_old)
            if d.action == "conflict":
                docs.record_history(conn, self.project_key, path, text, "mirror-conflict", MIRROR.label, self._policy)
                self._warn(f"{path} was edited both in the database and in its file; the database's text was kept "
                           "and the file's text saved in history (source mirror-conflict)")
            if d.action in ("keep", "conflict"):
                return current
            if d.action == "append":
                return current + (d.appended or "")
            if row is not None and row.content:
                docs.record_history(conn, self.project_key, path, row.content, "mirror-import", MIRROR.label,
                                    self._policy)
            return d.content or ""

        return decide

    def _take_in(self, conn: Any, path: str, row: docs.DocRow | None, look: ledger_mod.Look | None
                 ) -> tuple[docs.DocRow | None, ledger_mod.Step | None]:
        """Take the agents' additions to the mirror file into the database, once (:mod:`core.backends.mirror_ledger`)."""
        if self.mirror is None or look is None:
            return row, None
        self._imports[path] = []  # the text this transaction takes in, screened once it commits (_mirror_out)
        try:
            step = self._ledger(path).step(look, row.content if row else None, self._whole(conn, path, row))
        except MemoryBackendError as exc:  # not UTF-8...: never imported, never overwritten
            if row is not None and look.data is not None and self.mirror.torn(path, row.content):
                return row, ledger_mod.Step(row.content, False, 0, "", False)  # a cut append: rewritten
            self._warn(f"{path} is not mirrored: {exc}")
            self._unmirrorable.add(path)
            return row, None
        self._other_hosts(path, row, step)
        if not step.changed:
            return row, step
        try:
            fileio.check_size(step.base.encode("utf-8"), path, self.id)
        except MemoryBackendError as exc:
            self._warn(f"the edit of {path} was not imported: {exc}")
            self._unmirrorable.add(path)
            return row, None
        self._imports[path].append((step.imported, row.content if row else None, "mirror"))
        if step.in_step and look.data is not None:
            # Agents' lines taken in: their note is put down as pending before the commit (the ledger's crash
            # rule), else a crash after the commit and before the note takes them in again on the next look.
            led = self._ledger(path)
            led.save(led.load(fileio.content_hash(row.content if row else "")),
                     led.note_for(look.dev, look.ino, look.data[:step.upto], step.base))
        return self._put(conn, path, step.base, row, "mirror-import", "mirror"), step

    def _other_hosts(self, path: str, row: docs.DocRow | None, step: ledger_mod.Step) -> None:
        """Queue for the screen what other hosts changed since this host last mirrored ``path`` (their appended
        text, or the whole text they replaced it with). Looked at only when the file is out of step with the
        database (an append in step costs nothing more)."""
        if row is None or step.in_step or self.mirror is None:
            return
        last = self.mirror.last(path)
        if last is None or last.hash == row.hash:
            return
        head = row.content[:last.length]
        if len(row.content) >= last.length and fileio.content_hash(head) == last.hash:
            self._imports[path].append((row.content[last.length:], head, "other-host"))
        else:
            self._imports[path].append((row.content, None, "other-host"))

    def _screen_imports(self, path: str) -> None:
        """After the commit: the text taken in is shown to the firewall, once (it reports; the text stays)."""
        for text, before, origin in self._imports.pop(path, ()):
            screen_import(self.root, path, text, before, origin)

    def _put(self, conn: Any, path: str, text: str, row: docs.DocRow | None, source: str,
             author: str | None) -> docs.DocRow:
        digest = docs.store(conn, self.project_key, path, text, row, source=source, author=author,
                            origin=self.origin, chunks=self._chunks)
        return docs.DocRow(text, digest, (row.revision if row else 0) + 1)

    def _ledger(self, path: str) -> ledger_mod.Ledger:
        assert self.root is not None
        return ledger_mod.Ledger(self.root, path, self.project_key, self.id)

    def _look(self, path: str, *, writing: bool = False) -> AbstractContextManager[ledger_mod.Look | None]:
        """The mirror file as it is now; ``writing``: its ledger notes must be writable first (a link out of the
        project refuses the write in one line, before anything changed)."""
        if self.mirror is None or path in self._unmirrorable:
            return nullcontext(None)
        led = self._ledger(path)
        if writing:
            led.check()
        return led.safe_look()

    def _mirror_out(self, path: str, look: ledger_mod.Look | None, step: ledger_mod.Step | None,
                    row: docs.DocRow | None, *, appended: str | None = None) -> None:
        """After the commit (still under the file lock): make the mirror file hold the database's text.

        memdesk's ``appended`` entry (the end of ``row``'s text) goes to a file in step with ``O_APPEND``
        (noted first, so a crash part-way is finished, never imported as an agent's text); anything else
        is renamed over the file. Agents' bytes that land meanwhile (found by offset) are taken in, once,
        in one more transaction, and the file rewritten if their order differs from the database's."""
        self._screen_imports(path)
        if self.mirror is None or look is None or step is None or row is None or path in self._unmirrorable:
            return
        led = self._ledger(path)
        try:
            if appended and step.in_step and look.data is not None and look.plain:
                between, _end = led.append(look.dev, look.ino, look.data[:step.upto], appended, row.hash)
                if not between:  # the entry's note goes once the ledger's is down (save ends it): a crash
                    prefix = look.data[:step.upto] + appended.encode("utf-8")  # between, the entry is not retaken
                    return self._noted(path, row, led.note_for(look.dev, look.ino, prefix, row.content))
                led.end_append()
                row = self._take_late(path, between)  # an agent's bytes went in before memdesk's entry
                with led.look() as look:  # the file's order differs from the database's: rewritten
                    late, _end, dev, ino = led.replace(look, row.content)
            elif step.in_step and look.data is not None and not appended and step.base == row.content:
                return self._noted(path, row, led.note_for(look.dev, look.ino, look.data[:step.upto], row.content))
            else:
                late, _end, dev, ino = led.replace(look, row.content)
            if late:  # agents appended to the old file up to the rename: put after the text, in both
                row = self._take_late(path, late)
            self._noted(path, row, led.note_for(dev, ino, row.content.encode("utf-8"), row.content))
        except ledger_mod.Moved:  # changed by another program since the look: taken in, by content, next time
            led.end_append()
            led.forget()
            self._seen.pop(path, None)
        except MemoryBackendError as exc:  # the database holds the text; the file is a copy
            self._warn(f"saved in the database, but the mirror {path} could not be written: {exc}")
            led.end_append()
            led.forget()
            self._seen.pop(path, None)

    def _take_late(self, path: str, text: str) -> docs.DocRow:
        """Append agents' ``text`` (found in the file past memdesk's look) to the document, in its own transaction."""
        with self.db.transaction(f"mirror import {path}") as conn:
            docs.lock(conn, self.project_key, path)
            row = docs.fetch(conn, self.project_key, path, self._chunks)
            done = self._put(conn, path, (row.content if row else "") + text, row, "mirror-import", "mirror")
        screen_import(self.root, path, text, row.content if row else None, "mirror")
        return done

    def _noted(self, path: str, row: docs.DocRow, note: ledger_mod.Note) -> None:
        """The file is in step: note it (and the old-style note of what was mirrored, which merges use)."""
        assert self.mirror is not None
        self._ledger(path).save(note)
        last = self.mirror.last(path)
        if last is None or last.hash != row.hash:
            self.mirror.remember(path, row.content, row.hash)
        st = self.mirror.stat(path)
        if st is not None and st[1] == note.size:
            self._seen[path] = (st, row.hash)
        else:
            self._seen.pop(path, None)

    def _warn(self, message: str) -> None:
        log.warning("%s", message)
        self.warnings.append(message)
        del self.warnings[:-20]

    def _document_path(self, relpath: str) -> str:
        """A memory document of either layout (stage "what" of :mod:`core.storage.pipeline`), else ``INVALID_CONFIG``.

        Rows and notifications are other hosts' data: a path such as ``.fusion/config.json`` or
        ``src/evil.py`` is never read, imported or mirrored.
        """
        from core.storage.pipeline import check_memory_path

        return check_memory_path(check_document_path(relpath, self.id), self.id)

    def _synced(self, path: str) -> str | None:
        """The document's text, after taking in an outside edit of its mirror file (skipped while nothing moved)."""
        assert self.mirror is not None
        with self.db.connection("read") as conn:
            row = docs.fetch(conn, self.project_key, path, self._chunks)
        st = self.mirror.stat(path)
        if st is None and row is None:
            return None  # nothing to import, nothing to mirror
        if st is not None and self._seen.get(path) == (st, row.hash if row else None) and not _racy(st):
            return row.content if row else None
        with self._file_lock(path), self._look(path) as look:
            with self.db.transaction("mirror import") as conn:
                docs.lock(conn, self.project_key, path)
                row = docs.fetch(conn, self.project_key, path, self._chunks)
                row, step = self._take_in(conn, path, row, look)
            self._mirror_out(path, look, step, row)
        return row.content if row else None

    def read_document(self, relpath: str) -> str | None:
        """The document's text, ``None`` when it was never written."""
        self.require_initialized()
        path = self._document_path(relpath)
        if self.mirror is not None:
            return self._synced(path)
        with self.db.connection("read") as conn:
            row = docs.fetch(conn, self.project_key, path, self._chunks)
        return row.content if row else None

    def write_document(self, relpath: str, content: str, *, expected_hash: str | None = None,
                       source: str = "write", author: str | None = None) -> None:
        """Replace the document in one transaction (history first); ``CONFLICT`` on a stale ``expected_hash``."""
        self.require_initialized()
        path = self._document_path(relpath)
        if not isinstance(content, str):
            raise MemoryBackendError(f"content must be a string, not {type(content).__name__}", "WRITE_FAILED",
                                     self.id)
        fileio.check_size(content.encode("utf-8"), path, self.id)
        with self._file_lock(path), self._look(path, writing=True) as look:
            with self.db.transaction(f"write {path}") as conn:
                docs.lock(conn, self.project_key, path)
                row, step = self._take_in(conn, path, docs.fetch(conn, self.project_key, path, self._chunks), look)
                current = row.hash if row else fileio.content_hash("")
                if expected_hash is not None and expected_hash != current:
                    raise MemoryBackendError(f"{path} changed since it was loaded (another host or agent wrote "
                                             "it); reload or merge before saving", "CONFLICT", self.id)
                if row is None or row.content != content:
                    if row is not None and row.content:
                        docs.record_history(conn, self.project_key, path, row.content, source, author, self._policy)
                    row = self._put(conn, path, content, row, source, author)
                    step = step or (ledger_mod.Step(content, False, 0, "", False) if look is not None else None)
            self._mirror_out(path, look, step, row)

    def append_document(self, relpath: str, build: Callable[[str], str | None], *, author: str | None = None,
                        source: str = "append") -> str | None:
        """Append ``build(current)`` under the document's lock, re-reading it first; return what was appended."""
        self.require_initialized()
        path = self._document_path(relpath)
        with self._file_lock(path), self._look(path, writing=True) as look:
            with self.db.transaction(f"append to {path}") as conn:
                docs.lock(conn, self.project_key, path)
                row, step = self._take_in(conn, path, docs.fetch(conn, self.project_key, path, self._chunks), look)
                current = row.content if row else ""
                addition = build(current)
                if addition:
                    new = current + addition
                    fileio.check_size(new.encode("utf-8"), path, self.id)
                    row = self._put(conn, path, new, row, source, author)
                    step = step or (ledger_mod.Step(current, False, 0, "", False) if look is not None else None)
                    if step is not None and step.in_step and look is not None and look.plain:
                        self._ledger(path).begin_append(step.upto, addition, row.hash)  # before the commit
            self._mirror_out(path, look, step, row, appended=addition or None)
        return addition or None

    def list_documents(self) -> list[tuple[str, int, Any, str | None]]:
        """``(path, size, updated_at, updated_by)`` of every document this project key holds."""
        self.require_initialized()
        with self.db.connection("list documents") as conn:
            return docs.list_documents(conn, self.project_key)

    # -- the seed's single-document API --------------------------------------------------------------
    def read(self) -> str:
        """The layout's memory document (``""`` when there is none)."""
        self.require_initialized()
        return self.read_document(self.primary) or ""

    def write(self, content: str, *, expected_hash: str | None = None, source: str = "write",
              author: str | None = None) -> None:
        """Replace the layout's memory document."""
        self.require_initialized()
        self.write_document(self.primary, content, expected_hash=expected_hash, source=source, author=author)

    # -- history ------------------------------------------------------------------------------------
    def list_versions(self, relpath: str | None = None, limit: int | None = None) -> list[Version]:
        """Versions kept in the database, newest first (of one document when ``relpath`` is given)."""
        self.require_initialized()
        with self.db.connection("history") as conn:
            return docs.list_versions(conn, self.project_key, relpath, limit)

    def get_version(self, version_id: int) -> tuple[Version, str] | None:
        """One kept version and its text, or ``None``."""
        self.require_initialized()
        with self.db.connection("history") as conn:
            return docs.get_version(conn, self.project_key, version_id)

    # -- search -------------------------------------------------------------------------------------
    def search(self, query: str, options: MemorySearchOptions | None = None) -> list[MemorySearchResult]:
        """Ranked full-text search over every document of the project (keyword in every mode)."""
        self.require_initialized()
        if self.mirror is not None:
            self._synced(self.primary)
        with self.db.connection("search") as conn:
            return pg_search.search(conn, self.project_key, query, options or MemorySearchOptions())

    def search_note(self, mode: str) -> str | None:
        """Semantic and hybrid modes run as keyword search here."""
        return None if mode == "keyword" else KEYWORD_ONLY

    def status_note(self) -> str | None:
        """Keyword-only, always (no pgvector; the search note says so)."""
        return "keyword search only (PostgreSQL full text)"

    # -- live changes -------------------------------------------------------------------------------
    def change_feed(self) -> ChangeFeed:
        """A new ``LISTEN`` feed of this project's committed changes (the caller closes it)."""
        self.require_initialized()
        return ChangeFeed(self._dsn, self.project_key, self.origin)

    def changes(self, timeout: float | None = None) -> Iterator[DocumentChange]:
        """Yield this project's committed changes as they happen; ends after ``timeout`` s without one."""
        feed = self.change_feed()
        try:
            yield from feed.changes(timeout)
        finally:
            feed.close()

    def watch(self, callback: Callable[[DocumentChange], None]) -> Watch:
        """Call ``callback`` (on a feed thread) for every change; another host's change refreshes the mirror first."""
        def on_change(change: DocumentChange) -> None:
            if change.path is not None and self.initialized:
                try:
                    self._document_path(change.path)
                except MemoryBackendError as exc:  # another host's notification names a file that is no document
                    self._warn(f"a change notification was skipped: {exc}")
                    return
            if self.mirror is not None and not change.own and self.initialized:
                try:
                    self._synced(change.path or self.primary)
                except MemoryBackendError as exc:
                    log.warning("mirror not refreshed after a change: %s", exc)
            callback(change)

        try:
            handle = watch(self.change_feed(), on_change)
        except Exception as exc:
            raise self.db.error(exc, "cannot listen for changes") from exc
        self._watches.append(handle)
        return handle

    def shutdown(self) -> None:
        """Stop the watches and close the pool."""
        super().shutdown()
        for w in getattr(self, "_watches", []):
            w.stop()
        self._watches = []
        db = getattr(self, "db", None)
        if db is not None:
            db.close()


def _racy(st: tuple[int, int]) -> bool:
    """A file modified within the timestamp granularity may change again without its mtime moving."""
    import time

    return st[0] + 2_000_000_000 >= time.time_ns()
