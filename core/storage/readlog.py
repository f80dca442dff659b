"""Reads on record: every document a client read through ``memdesk serve`` or ``memdesk mcp``.

Each read is one row: when, which project (key and folder), which document, the hash and size of the
whole document as served, the lines served, the client (its MCP name or HTTP ``User-Agent``), the
token's name and the route or tool. Never any text. The rows live in ``reads.db`` in the user's
memdesk folder (beside ``tokens.json``), not in a project: a read-only project's reads are recorded
too, and nothing is written inside a project for a read.

Recording costs a request a deque append: a single writer thread inserts the rows in batches, woken once
per spell of reads (not once per read). The log is bounded: rows older than :data:`MAX_AGE_DAYS` go, and
past :data:`MAX_ROWS` the oldest go, checked on a process's first batch, then every :data:`PRUNE_EVERY` rows
or :data:`PRUNE_INTERVAL_S`. :func:`version_read` gives back exactly the text a read served (checked against
its hash): the current text, a stored version, or a prefix of either when only appends followed.

This is the small core API behind ``memdesk activity`` and the app's Activity view.
"""

from __future__ import annotations

import atexit
import collections
import logging
import os
import sqlite3
import threading
import time
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import MemoryBackendError
from core.storage.fileio import sha256_hex

if TYPE_CHECKING:
    from typing import Protocol

    from core.storage.history.versions import Version

    class HoldsVersions(Protocol):
        """What :func:`version_read` asks of a project (:class:`core.project.model.Project`, above storage)."""

        def read(self, path: str | None = None) -> str: ...

        def list_versions(self, path: str | None = None, limit: int | None = None) -> list[Version]: ...

        def get_version(self, version_id: int) -> tuple[Version, str] | None: ...

__all__ = ["MAX_AGE_DAYS", "MAX_ROWS", "ReadEvent", "flush", "log_path", "query", "record", "version_read"]

log = logging.getLogger(__name__)

READS_DB = "reads.db"
MAX_AGE_DAYS = 90
MAX_ROWS = 200_000
PRUNE_EVERY = 1_000
#: ...and at least this often (seconds), and on the first batch a process writes to a log: a short-lived
#: ``memdesk mcp`` or a quiet server never reaches :data:`PRUNE_EVERY` rows of its own.
PRUNE_INTERVAL_S = 3_600.0
#: How long the writer gathers reads after the first of a spell before it inserts them (seconds).
LINGER_S = 0.25

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS reads (id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, root TEXT NOT NULL, "
    "project TEXT NOT NULL, path TEXT NOT NULL, hash TEXT NOT NULL, size INTEGER NOT NULL, start_line INTEGER NOT "
    "NULL, end_line INTEGER NOT NULL, total_lines INTEGER NOT NULL, client TEXT, token TEXT, via TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS reads_at ON reads(at)",
    "CREATE INDEX IF NOT EXISTS reads_client ON reads(client, at)",
)


@dataclass(frozen=True)
class ReadEvent:
    """One document read by a client. ``size`` is the whole document's UTF-8 size as served."""

    at: str
    root: str
    project: str
    path: str
    hash: str
    size: int
    start_line: int
    end_line: int
    total_lines: int
    client: str | None
    token: str | None
    via: str
    id: int | None = None

    def to_json(self) -> dict[str, Any]:
        """camelCase JSON (``memdesk activity --json``)."""
        d = asdict(self)
        return {"id": d["id"], "at": self.at, "project": self.project, "root": self.root, "path": self.path,
                "hash": self.hash, "size": self.size, "startLine": self.start_line, "endLine": self.end_line,
                "totalLines": self.total_lines, "client": self.client, "token": self.token, "via": self.via}


MAX_NAME = 120
"""Longest client or token name kept: a client names itself (its MCP ``clientInfo.name``, its ``User-Agent``)."""


def client_label(raw: str | None) -> str | None:
    """A name a client gave itself, fit to keep and print: control and format characters (escapes, new lines,
    direction overrides) become ``?``, and it is cut to :data:`MAX_NAME` characters; ``None`` when empty."""
    if not raw:
        return None
    import unicodedata

    cut = raw[:MAX_NAME]
    if not cut.isprintable():
        cut = "".join(c if c == " " or unicodedata.category(c)[0] not in "CZ" else "?" for c in cut)
    return cut.strip() or None


_MAX_INT = 2**63 - 1  # SQLite's largest integer


def _fit(n: int) -> int:
    return max(0, min(int(n), _MAX_INT))


def now() -> str:
    """The time stamp a read gets: UTC, milliseconds, ISO 8601."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def log_path() -> Path:
    """``reads.db`` in the user's memdesk folder."""
    from core.storage.userdirs import user_config_dir  # the folder: user_config (settings) sits above

    return user_config_dir() / READS_DB


_log_paths: dict[tuple[str | None, ...], Path] = {}


def _current_log_path() -> Path:
    """:func:`log_path`, remembered for the variables that decide it (a read does not build paths each time)."""
    key = tuple(os.environ.get(v) for v in ("MEMDESK_CONFIG_DIR", "XDG_CONFIG_HOME", "HOME"))
    found = _log_paths.get(key)
    if found is None:
        found = _log_paths[key] = log_path()
    return found


def _located(path: Path) -> None:
    """Stages "what" and "where" of the state-file door for the read log: no link out of the user's folder, a
    regular file of its own (a FIFO there would hang SQLite's open). One line naming it otherwise (``OSError``)."""
    if path.name == READS_DB:
        from core.storage import statefiles

        try:
            statefiles.locate("reads", directory=path.parent)
        except MemoryBackendError as exc:  # the reader thread and the CLI report an OSError
            raise OSError(str(exc)) from exc


def _connect(path: Path) -> sqlite3.Connection:
    _located(path)
    conn = sqlite3.connect(str(path), timeout=10, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    for sql in _SCHEMA:
        conn.execute(sql)
    return conn


class _Writer:
    """The one thread that inserts reads, in batches, and prunes the log now and then.

    A read costs its request a ``deque.append`` (atomic, no lock, no thread woken). The first read after
    the thread went idle wakes it; it then lingers :data:`LINGER_S` so the reads of a busy spell go in
    one transaction. A thread woken per read, competing with the next request for the interpreter, cost
    every served read milliseconds (``python -m bench servers``); a batch a quarter second costs none.
    """

    def __init__(self) -> None:
        self.items: collections.deque[tuple[Path, ReadEvent]] = collections.deque()
        self.waiters: collections.deque[threading.Event] = collections.deque()
        self.wake = threading.Event()
        self.hurry = threading.Event()  # a flush: insert now, do not linger
        self.armed = False
        self.thread = threading.Thread(target=self._run, name="memdesk-readlog", daemon=True)
        self.thread.start()
        self.inserted = 0
        self.pruned_at: dict[Path, float] = {}  # when this process last pruned each log (monotonic)
        self.batches = 0  # transactions so far (tests: a spell of reads is one)

    def add(self, db: Path, event: ReadEvent) -> None:
        self.items.append((db, event))
        if not self.armed:  # only the first read of a spell wakes the thread
            self.armed = True
            self.wake.set()

    def flush(self, timeout: float) -> None:
        done = threading.Event()
        self.waiters.append(done)
        self.hurry.set()
        self.wake.set()
        done.wait(timeout)

    def _run(self) -> None:
        conns: dict[Path, sqlite3.Connection] = {}
        while True:
            self.wake.wait()
            self.wake.clear()
            self.hurry.wait(LINGER_S)  # read here each time: a test may lengthen it
            self.hurry.clear()
            self.armed = False  # a read added from here on wakes the thread again
            waiters = [self.waiters.popleft() for _ in range(len(self.waiters))]  # before the reads: theirs are in
            by_db: dict[Path, list[ReadEvent]] = {}
            for _ in range(len(self.items)):
                db, event = self.items.popleft()
                by_db.setdefault(db, []).append(event)
            for db, events in by_db.items():
                try:
                    conn = conns.get(db) or conns.setdefault(db, _connect(db))
                    self._insert(conn, events, db)
                except Exception as exc:  # noqa: BLE001 - the read was served; say why it went unrecorded, and go on
                    # (any error: this thread dying would leave every later read off the record)
                    log.warning("%d read(s) not recorded in %s: %s", len(events), db, exc)
                    conns.pop(db, None)
            for w in waiters:
                w.set()

    def _insert(self, conn: sqlite3.Connection, events: list[ReadEvent], db: Path) -> None:
        rows = [(e.at, e.root, e.project, e.path, e.hash, e.size, e.start_line, e.end_line, e.total_lines,
                 e.client, e.token, e.via) for e in events]
        with conn:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany("INSERT INTO reads(at, root, project, path, hash, size, start_line, end_line, "
                             "total_lines, client, token, via) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", rows)
        before = self.inserted
        self.inserted += len(rows)
        self.batches += 1
        last = self.pruned_at.get(db)
        if last is None or time.monotonic() - last >= PRUNE_INTERVAL_S \
                or before // PRUNE_EVERY != self.inserted // PRUNE_EVERY:
            self.pruned_at[db] = time.monotonic()
            prune(conn, max_rows=MAX_ROWS, max_age_days=MAX_AGE_DAYS)


def prune(conn: sqlite3.Connection, *, max_rows: int = MAX_ROWS, max_age_days: int = MAX_AGE_DAYS) -> int:
    """Drop reads older than ``max_age_days`` and the oldest past ``max_rows``; how many went."""
    cutoff = (datetime.now(UTC) - timedelta(days=max_age_days)).isoformat(timespec="milliseconds")
    with conn:
        gone = conn.execute("DELETE FROM reads WHERE at < ?", (cutoff,)).rowcount
        row = conn.execute("SELECT id FROM reads ORDER BY id DESC LIMIT 1 OFFSET ?", (max_rows,)).fetchone()
        if row is not None:
            gone += conn.execute("DELETE FROM reads WHERE id <= ?", (row[0],)).rowcount
    return gone


_writer: _Writer | None = None
_writer_lock = threading.Lock()


def record(event: ReadEvent, db: Path | None = None) -> None:
    """Queue ``event`` for the log (returns at once)."""
    global _writer
    if _writer is None:
        with _writer_lock:
            if _writer is None:
                _writer = _Writer()
                atexit.register(flush, 5.0)  # a short-lived ``memdesk mcp`` still records its last reads
    if event.client is not None and client_label(event.client) != event.client:
        event = replace(event, client=client_label(event.client))  # a client's name is bounded, one line
    numbers = (event.size, event.start_line, event.end_line, event.total_lines)
    if any(not 0 <= n <= _MAX_INT for n in numbers):  # a client's startLine of 2**70 fits no SQLite integer
        event = replace(event, size=_fit(event.size), start_line=_fit(event.start_line),
                        end_line=_fit(event.end_line), total_lines=_fit(event.total_lines))
    _writer.add(db or _current_log_path(), event)


def flush(timeout: float = 10.0) -> None:
    """Wait until every read queued so far is in the log."""
    if _writer is not None:
        _writer.flush(timeout)


def query(*, root: str | Path | None = None, client: str | None = None, since: datetime | None = None,
          path: str | None = None, limit: int = 1000, db: Path | None = None,
          read_id: int | None = None) -> list[ReadEvent]:
    """Recorded reads, newest first, filtered by project folder, client (its name contains ``client``,
    case-insensitive; the token's name counts too), time, document and the read's id."""
    flush()
    db = db or log_path()
    if not db.exists():
        return []
    _located(db)
    sql = ("SELECT at, root, project, path, hash, size, start_line, end_line, total_lines, client, token, via, id "
           "FROM reads WHERE 1=1")
    args: list[Any] = []
    if root is not None:
        sql += " AND root = ?"
        args.append(str(Path(root).resolve()))
    if client:
        sql += " AND (instr(lower(coalesce(client,'')), ?) > 0 OR instr(lower(coalesce(token,'')), ?) > 0)"
        args += [client.lower(), client.lower()]
    if since is not None:
        sql += " AND at >= ?"
        args.append(since.astimezone(UTC).isoformat(timespec="milliseconds"))
    if path is not None:
        sql += " AND path = ?"
        args.append(path)
    if read_id is not None:
        sql += " AND id = ?"
        args.append(int(read_id))
    sql += " ORDER BY at DESC, id DESC LIMIT ?"
    args.append(int(limit))
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return [ReadEvent(*row) for row in conn.execute(sql, args)]
    except sqlite3.Error as exc:
        raise OSError(f"the read log {db} cannot be read ({exc})") from exc
    finally:
        conn.close()


def version_read(project: HoldsVersions, event: ReadEvent) -> str | None:
    """Exactly the text ``event`` served (its SHA-256 checked), or ``None`` when memdesk no longer has it.

    Candidates: the document now, then its stored versions newest first. Each is taken whole and, since
    appends only add to the end, also cut at the read's size: a read followed only by appends is the
    first ``size`` bytes of what came after it.
    """
    def matches(text: str) -> str | None:
        data = text.encode("utf-8")
        for cand in (data, data[:event.size]):
            if len(cand) == event.size and sha256_hex(cand) == event.hash:
                try:
                    return cand.decode("utf-8")
                except UnicodeDecodeError:
                    return None
        return None

    try:
        found = matches(project.read(event.path))
    except Exception:  # noqa: BLE001 - the document may be gone; history may still hold it
        found = None
    if found is not None:
        return found
    for v in project.list_versions(event.path):
        if v.hash == event.hash or v.size >= event.size:
            got = project.get_version(v.id)
            if got is not None and (hit := matches(got[1])) is not None:
                return hit
    return None
