"""The history database: its schema (versioned with ``PRAGMA user_version``), migration, and clear errors.

Schema 1 keeps version rows apart from their content: ``versions`` (path, hash, size, time, source,
author) point at ``objects`` by content hash, and an object is either a zlib-compressed snapshot
(``base`` NULL) or a delta against another object (:mod:`core.storage.history.delta`). ``events`` holds the
appends (the appended text, compressed, and who wrote it). Schema 0 is the first release's single
``versions`` table with the whole content in each row; :func:`connect` migrates it in one
transaction and checks that every version comes back byte-exact before the old rows go.

A database that cannot be opened (garbage bytes, a folder, a read-only file) raises
:class:`HistoryUnavailable`, one line that names the file and says what to do.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
from collections import OrderedDict
from pathlib import Path

from core.errors import MemoryBackendError, PathOutsideRootError
from core.logs import get_logger
from core.storage.fileio import MEMDESK_DIR
from core.storage.history import store as history_store
from core.storage.safepath import resolve_both_in_root

log = get_logger(__name__)

HISTORY_DB = f"{MEMDESK_DIR}/history.db"
SCHEMA_VERSION = 1

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS versions (id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL, "
    "hash TEXT NOT NULL, size INTEGER NOT NULL, created_at TEXT NOT NULL, source TEXT NOT NULL, author TEXT)",
    "CREATE INDEX IF NOT EXISTS versions_path ON versions(path, id)",
    "CREATE UNIQUE INDEX IF NOT EXISTS versions_path_hash ON versions(path, hash)",
    # depth: deltas between this object and its snapshot; chain: compressed bytes of those deltas.
    "CREATE TABLE IF NOT EXISTS objects (id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, size INTEGER NOT NULL, "
    "base TEXT, depth INTEGER NOT NULL, chain INTEGER NOT NULL, data BLOB NOT NULL)",
    "CREATE INDEX IF NOT EXISTS objects_base ON objects(base)",
    "CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL, "
    "created_at TEXT NOT NULL, source TEXT NOT NULL, author TEXT, size INTEGER NOT NULL, data BLOB NOT NULL)",
    "CREATE INDEX IF NOT EXISTS events_path ON events(path, id)",
)


class HistoryUnavailable(MemoryBackendError):
    """The history database cannot be used; the message names the file and what to do."""

    def __init__(self, db: Path, problem: str, advice: str = "", cause: BaseException | None = None) -> None:
        advice = advice or f"move it aside (for example to {db.name}.broken) and memdesk starts a new one"
        super().__init__(f"the history database {db} {problem}; {advice}", "BACKEND_UNAVAILABLE", "history", cause)
        self.db = db


def db_path(root: Path | str) -> Path:
    """The history database of the project ``root``."""
    return Path(root) / HISTORY_DB


def _explain(db: Path, exc: BaseException) -> HistoryUnavailable:
    text = str(exc).lower()
    if "readonly" in text or "read-only" in text or isinstance(exc, PermissionError):
        return HistoryUnavailable(db, "is read-only", "make it and its folder writable, or move it aside", exc)
    if "not a database" in text or "malformed" in text or "file is encrypted" in text:
        return HistoryUnavailable(db, "is damaged or not a SQLite database", cause=exc)
    if "unable to open" in text or isinstance(exc, OSError):
        return HistoryUnavailable(db, f"cannot be opened ({exc})", cause=exc)
    return HistoryUnavailable(db, f"cannot be used ({exc})", cause=exc)


class _Connections:
    """A few open connections per thread (one per database file), reopened when the file was replaced."""

    KEEP = 4

    def __init__(self) -> None:
        self._local = threading.local()

    def _cache(self) -> OrderedDict[str, tuple[tuple[int, int], sqlite3.Connection]]:
        return self._local.__dict__.setdefault("c", OrderedDict())

    def get(self, db: Path, create: bool, root: Path | str | None = None) -> sqlite3.Connection | None:
        cache = self._cache()
        key = str(db)
        try:
            st = os.stat(db)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            raise _explain(db, exc) from exc
        found = cache.get(key)
        if found is not None and st is not None and found[0] == (st.st_dev, st.st_ino):
            cache.move_to_end(key)
            return found[1]
        self.drop(db)
        if st is None and not create:
            return None
        if root is not None:
            check_confined(root)
        conn = _open(db)
        st = os.stat(db)
        cache[key] = ((st.st_dev, st.st_ino), conn)
        while len(cache) > self.KEEP:
            _k, (_id, old) = cache.popitem(last=False)
            old.close()
        return conn

    def drop(self, db: Path) -> None:
        found = self._cache().pop(str(db), None)
        if found is not None:
            found[1].close()


_connections = _Connections()


class HistoryConnection(sqlite3.Connection):
    """A history connection that remembers its ``PRAGMA synchronous`` (so a commit sets it only when it changes)."""

    synchronous = "FULL"


def set_synchronous(conn: sqlite3.Connection, durable: bool) -> None:
    """Before a write transaction: ``FULL`` when what it commits must be on disk when it returns, else ``NORMAL``.

    What each of history's syncs protects (a rollback journal, ``journal_mode=TRUNCATE``):

    * ``NORMAL`` and ``FULL``: the journal (and, when it was just created, its folder) is synced before a page
      of ``history.db`` is overwritten, and ``history.db`` is synced before the journal is truncated. A power cut
      at any point then leaves the database as before the transaction or after it, never torn: every version
      history keeps survives.
    * ``FULL`` only: a second journal sync (its header) and a sync after the truncation, which make the commit
      itself durable when it returns. Versions (the text before a save, a restore, another program's change)
      need that: the new file is written right after. An append's event row and the note of what memdesk wrote
      only say who wrote text whose own write was synced (``O_APPEND`` + ``fsync``); a power cut right after
      can lose that row, not the text. So they commit ``NORMAL``: 3 syncs instead of 5.
    """
    level = "FULL" if durable else "NORMAL"
    if getattr(conn, "synchronous", None) != level:
        conn.execute(f"PRAGMA synchronous={level}")
        try:
            conn.synchronous = level  # type: ignore[attr-defined]
        except AttributeError:  # a plain connection (tests): set each time
            pass


def _open(db: Path) -> sqlite3.Connection:
    try:
        if db.exists() and not db.is_file():
            raise HistoryUnavailable(db, "is not a file")
        db.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(db, timeout=30, isolation_level=None, factory=HistoryConnection)
    except HistoryUnavailable:
        raise
    except (sqlite3.Error, OSError) as exc:
        raise _explain(db, exc) from exc
    try:
        # A rollback journal, truncated after each commit, not a write-ahead log: a reader then changes
        # no byte on disk (a WAL reader writes its marks into the -shm file), a read-only database
        # can still be listed, and no log of MiBs outweighs the history. A save does not wait for
        # the extra sync: history is written on its own thread while the new file is (fileio).
        conn.execute("PRAGMA journal_mode=TRUNCATE")
        conn.execute("PRAGMA synchronous=FULL")  # the default, made explicit: set_synchronous relaxes it per commit
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise HistoryUnavailable(db, f"was written by a newer memdesk (schema {version})", "update memdesk")
        if version < SCHEMA_VERSION or not _has_schema(conn):
            _migrate(conn, version, db)
    except HistoryUnavailable:
        conn.close()
        raise
    except history_store.CorruptObject as exc:
        conn.close()
        raise HistoryUnavailable(db, f"could not be migrated to schema {SCHEMA_VERSION} ({exc}); nothing in it "
                                 "was changed", "move it aside to start a new history, and keep it to inspect",
                                 exc) from exc
    except sqlite3.Error as exc:
        conn.close()
        raise _explain(db, exc) from exc
    return conn


def _has_schema(conn: sqlite3.Connection) -> bool:
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    return {"versions", "objects", "events"} <= names


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}


def _migrate(conn: sqlite3.Connection, version: int, db: Path) -> None:
    """Bring the schema to :data:`SCHEMA_VERSION` in one transaction (schema 0: whole copies per row)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        old = "versions" in {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        legacy = old and "content" in _columns(conn, "versions")
        if legacy:
            conn.execute("DROP INDEX IF EXISTS versions_path")
            conn.execute("DROP INDEX IF EXISTS versions_path_hash")
            conn.execute("ALTER TABLE versions RENAME TO versions_v0")
        for sql in _SCHEMA:
            conn.execute(sql)
        if legacy:
            moved = _copy_legacy(conn)
            log.info("history: migrated %d version(s) of %s to schema %d", moved, db, SCHEMA_VERSION)
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _copy_legacy(conn: sqlite3.Connection) -> int:
    """Move every schema-0 row into versions + objects, verifying each one before the old table goes."""
    rows = conn.execute("SELECT id, path, size, created_at, source, content FROM versions_v0 "
                        "ORDER BY path, created_at, id").fetchall()
    base_of: dict[str, str] = {}
    for vid, path, _size, created_at, source, content in rows:
        data = content.encode("utf-8", "surrogatepass") if isinstance(content, str) else bytes(content)
        # The stored hash is not trusted: the row is kept under the hash of what it really holds.
        digest = history_store.sha256_hex(data)
        if conn.execute("SELECT 1 FROM versions WHERE path=? AND hash=?", (path, digest)).fetchone():
            continue
        history_store.store(conn, data, digest, base_of.get(path))
        base_of[path] = digest
        conn.execute("INSERT INTO versions(id, path, hash, size, created_at, source, author) "
                     "VALUES (?,?,?,?,?,?,NULL)", (vid, path, digest, len(data), created_at, source))
        history_store.recent.forget(digest)
        if history_store.load(conn, digest) != data:
            raise history_store.CorruptObject(f"version {vid} did not come back byte-exact")
    conn.execute("DROP TABLE versions_v0")
    return len(rows)


def check_confined(root: Path | str) -> None:
    """Refuse (:class:`HistoryUnavailable`) a history database, journal or folder that leads out of the project.

    The database is memdesk's state inside the project, so untrusted: a ``.fusion/memdesk`` or a
    ``history.db`` (or its ``-journal``) that is a link out of the root, or a database with other
    hard links, would make saves create or change a database elsewhere. Checked before each open.
    """
    db = db_path(root)
    for rel in (HISTORY_DB, f"{HISTORY_DB}-journal"):
        try:
            logical, _real = resolve_both_in_root(root, rel)
        except PathOutsideRootError as exc:
            raise HistoryUnavailable(db, f"leads out of the project ({exc}); nothing was written",
                                     f"remove the link {rel} (memdesk keeps its history inside the project) and "
                                     "memdesk starts a new one", exc) from exc
        except (RuntimeError, OSError) as exc:
            raise HistoryUnavailable(db, f"cannot be resolved ({exc}); nothing was written", cause=exc) from exc
        try:
            st = os.stat(logical)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            raise HistoryUnavailable(db, f"has {st.st_nlink - 1} other hard link(s), so writing it would change "
                                     "another file too; nothing was written",
                                     f"give it its own copy (cp {rel} {rel}.new && mv {rel}.new {rel})")


def connection(root: Path | str, *, create: bool) -> sqlite3.Connection | None:
    """The project's history connection (``None`` when there is no database and ``create`` is false)."""
    db = db_path(root)
    return _connections.get(db, create, root)


def forget_connection(root: Path | str) -> None:
    """Close this thread's connection to the project's history (tests moving the file aside)."""
    _connections.drop(db_path(root))


def wrap_error(root: Path | str, exc: sqlite3.Error) -> HistoryUnavailable:
    """A :class:`HistoryUnavailable` for an error met while using an open database."""
    forget_connection(root)
    return _explain(db_path(root), exc)
