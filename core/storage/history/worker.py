"""History's worker thread and the append events: what an append needs of the history, and no more.

Every write to a project's history database from this process runs on one worker thread, in the
order asked (:func:`submit`); reads wait for the writes asked before them (:func:`settled`). An
append records a small event row there (:func:`record_append`); :mod:`core.storage.history.versions` (versions,
retention, restore) builds on the same thread and re-exports these names. A one-process
``memdesk append`` imports this module only: the versions' models and their store are not needed.
"""

from __future__ import annotations

import sqlite3
import threading
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.logs import get_logger
from core.storage.history import store as history_store
from core.storage.history.db import (
    HistoryUnavailable,
    connection,
    db_path,
    forget_connection,
    set_synchronous,
    wrap_error,
)
from core.storage.history.jobs import Hold, Job, Worker, hold_here, start_worker

log = get_logger(__name__)

__all__ = ["Hold", "forget_connections", "hold_here", "open_soon", "record_append", "settled", "submit", "using"]

_worker: Worker | None = None
_worker_lock = threading.Lock()
_THREAD_NAME = "memdesk-history"


def submit(fn: Any, *args: Any, **kwargs: Any) -> Job[Any]:
    """Run ``fn(*args, **kwargs)`` on history's worker thread, after what was asked before it."""
    global _worker
    with _worker_lock:
        if _worker is None:
            _worker = start_worker(f"{_THREAD_NAME}_0")  # the name a ThreadPoolExecutor gave its thread
        return _worker.submit(fn, *args, **kwargs)


def settled() -> None:
    """Wait until every history write this process asked for is done (reads then see them)."""
    with _worker_lock:
        worker = _worker
    if worker is not None and threading.current_thread().name.split("_")[0] != _THREAD_NAME:
        worker.submit(lambda: None).result()


def forget_connections(root: Path | str) -> None:
    """Close every connection this process keeps to the project's history (before moving the file aside)."""
    forget_connection(root)
    _ready.discard(str(root))
    with _worker_lock:
        worker = _worker
    if worker is not None:
        worker.submit(forget_connection, root).result()


#: The roots whose history the worker thread has open (so :func:`open_soon` has nothing to do ahead).
_ready: set[str] = set()


@contextmanager
def using(root: Path | str, *, create: bool, write: bool = False, durable: bool = True
          ) -> Iterator[sqlite3.Connection | None]:
    """The history connection, inside one write transaction when ``write``; sqlite errors become one line.

    ``durable=False`` commits with ``synchronous=NORMAL`` (:func:`core.storage.history.db.set_synchronous`
    says what each sync protects): for what only says who wrote text that is on disk already (an append's
    event, the note of what memdesk wrote). A version, which holds text, is always committed ``FULL``.
    """
    try:
        conn = connection(root, create=create)
        if conn is None:
            yield None
            return
        if not write:
            yield conn
            return
        set_synchronous(conn, durable)
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        raise wrap_error(root, exc) from exc
    except history_store.CorruptObject as exc:
        raise HistoryUnavailable(db_path(root), f"holds a damaged version ({exc})", cause=exc) from exc


def open_soon(root: Path | str) -> None:
    """Open the project's existing history database on the worker thread now, for a write about to be asked.

    An append calls it once it knows it will write: the open (connect, journal mode, schema check)
    then overlaps the append's own write and sync instead of following them. Nothing is created; a
    database that cannot be opened is reported by the write that follows, as without this.
    """
    if str(root) in _ready:
        return  # open on the worker already (a server's second append): a hand-off for nothing
    try:
        if db_path(root).is_file():
            submit(_open_quietly, root)
    except Exception as exc:  # only a head start: never a reason for the append to fail
        log.debug("history of %s not opened ahead: %s", root, exc)


def _open_quietly(root: Path | str) -> None:
    try:
        if connection(root, create=False) is not None:
            _ready.add(str(root))
    except Exception as exc:  # the write asked next opens it again and reports why it cannot
        log.debug("history of %s not opened ahead: %s", root, exc)


def record_append(root: Path | str, relpath: str, text: str, *, author: str | None = None,
                  source: str = "append", then: Callable[[sqlite3.Connection], None] | None = None) -> Job[int]:
    """Record that ``text`` was appended to ``relpath`` (by ``author``): a small event row, not a version.

    Written on history's worker thread, so an append does not wait for the database's syncs (the
    entry itself is on disk already; the event only says who wrote it). Reads of this process
    (``core.storage.history.versions.list_events`` …) wait for it; the future gives the event id or the error.
    ``then(conn)`` runs in the same transaction after the event row (the pipeline's note of what the
    document now holds, :func:`core.storage.noticed.record_appended`): one job and one commit an append.
    """
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    future = submit(_insert_event, root, relpath, text, author, source, stamp, then)
    future.add_done_callback(_log_failure)
    return future


def _insert_event(root: Path | str, relpath: str, text: str, author: str | None, source: str, stamp: str,
                  then: Callable[[sqlite3.Connection], None] | None = None) -> int:
    data = text.encode("utf-8")
    # Not durable at once (synchronous=NORMAL): the entry is on disk by its own fsync; a power cut can lose
    # only this row (who wrote it), never damage the database (db.set_synchronous).
    with using(root, create=True, write=True, durable=False) as conn:
        assert conn is not None
        _ready.add(str(root))
        cur = conn.execute("INSERT INTO events(path, created_at, source, author, size, data) VALUES (?,?,?,?,?,?)",
                           (relpath, stamp, source, author, len(data), zlib.compress(data, 6)))
        if then is not None:
            then(conn)
        return int(cur.lastrowid or 0)


def _log_failure(future: Job[Any]) -> None:
    exc = future.exception()
    if exc is not None:
        log.warning("an append was not recorded in history: %s", exc)
