"""History's worker thread and the append events: what an append needs of the history, and no more.

Every write to a project's history database from this process runs on one worker thread, in the
order asked (:func:`submit`); reads wait for the writes asked before them (:func:`settled`). An
append records a small event row there (:func:`record_append`); :mod:`core.storage.history.versions` (versions,
retention, restore) builds on the same thread and re-exports these names. A one-process
``memdesk append`` imports this module only: the versions' models and their store are not needed.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import zlib
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.storage.history import store as history_store
from core.storage.history.db import HistoryUnavailable, connection, db_path, forget_connection, wrap_error

log = logging.getLogger(__name__)

__all__ = ["forget_connections", "open_soon", "record_append", "settled", "submit", "using"]

_worker: ThreadPoolExecutor | None = None
_worker_lock = threading.Lock()
_THREAD_NAME = "memdesk-history"


def submit(fn: Any, *args: Any, **kwargs: Any) -> Future[Any]:
    """Run ``fn(*args, **kwargs)`` on history's worker thread, after what was asked before it."""
    global _worker
    with _worker_lock:
        if _worker is None:
            _worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix=_THREAD_NAME)
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
    with _worker_lock:
        worker = _worker
    if worker is not None:
        worker.submit(forget_connection, root).result()


@contextmanager
def using(root: Path | str, *, create: bool, write: bool = False) -> Iterator[sqlite3.Connection | None]:
    """The history connection, inside one write transaction when ``write``; sqlite errors become one line."""
    try:
        conn = connection(root, create=create)
        if conn is None:
            yield None
            return
        if not write:
            yield conn
            return
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
    try:
        if db_path(root).is_file():
            submit(_open_quietly, root)
    except Exception as exc:  # only a head start: never a reason for the append to fail
        log.debug("history of %s not opened ahead: %s", root, exc)


def _open_quietly(root: Path | str) -> None:
    try:
        connection(root, create=False)
    except Exception as exc:  # the write asked next opens it again and reports why it cannot
        log.debug("history of %s not opened ahead: %s", root, exc)


def record_append(root: Path | str, relpath: str, text: str, *, author: str | None = None,
                  source: str = "append") -> Future[int]:
    """Record that ``text`` was appended to ``relpath`` (by ``author``): a small event row, not a version.

    Written on history's worker thread, so an append does not wait for the database's syncs (the
    entry itself is on disk already; the event only says who wrote it). Reads of this process
    (``core.storage.history.versions.list_events`` …) wait for it; the future gives the event id or the error.
    """
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    future = submit(_insert_event, root, relpath, text, author, source, stamp)
    future.add_done_callback(_log_failure)
    return future


def _insert_event(root: Path | str, relpath: str, text: str, author: str | None, source: str, stamp: str) -> int:
    data = text.encode("utf-8")
    with using(root, create=True, write=True) as conn:
        assert conn is not None
        cur = conn.execute("INSERT INTO events(path, created_at, source, author, size, data) VALUES (?,?,?,?,?,?)",
                           (relpath, stamp, source, author, len(data), zlib.compress(data, 6)))
        return int(cur.lastrowid or 0)


def _log_failure(future: Future[Any]) -> None:
    exc = future.exception()
    if exc is not None:
        log.warning("an append was not recorded in history: %s", exc)
