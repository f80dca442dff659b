"""Live changes through ``LISTEN``/``NOTIFY``: every committed write announces project key, path and new hash.

:class:`ChangeFeed` holds one dedicated connection (never a pooled one: a pooled connection is reset
between uses and would drop the ``LISTEN``). :meth:`ChangeFeed.changes` is an iterator a watcher thread
can run; :func:`watch` runs it on a daemon thread and calls back. When the connection is lost (a server
restart), the feed reconnects and yields a ``resync`` change: notifications sent meanwhile are gone, so
the listener must re-read what it shows.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import psycopg

from core.backends.pg.db import connect_kwargs
from core.backends.pg.documents import CHANNEL

log = logging.getLogger(__name__)

RECONNECT_S = (0.2, 0.5, 1.0, 2.0, 5.0)


@dataclass(frozen=True)
class DocumentChange:
    """One committed change: the document's path and new hash (``None``: deleted).

    ``resync`` is True (and ``path`` ``None``) after a lost connection: anything may have changed.
    ``own`` is True when the change came from the backend that owns the feed.
    """

    project_key: str
    path: str | None
    hash: str | None
    origin: str | None = None
    own: bool = False
    resync: bool = False


class ChangeFeed:
    """Notifications for one project key over a dedicated ``LISTEN`` connection."""

    def __init__(self, dsn: str, project_key: str, origin: str | None = None) -> None:
        self.dsn = dsn
        self.project_key = project_key
        self.origin = origin
        self._conn: psycopg.Connection | None = None
        self._closed = threading.Event()

    def _connect(self) -> psycopg.Connection:
        conn = psycopg.connect(self.dsn, autocommit=True, **connect_kwargs())  # type: ignore[arg-type]
        conn.execute(f"LISTEN {CHANNEL}")
        return conn

    def start(self) -> None:
        """Open the connection and start listening (raises the driver's error when the server is down)."""
        if self._conn is None:
            self._conn = self._connect()

    def changes(self, timeout: float | None = None) -> Iterator[DocumentChange]:
        """Yield changes of this project as they commit; stop after ``timeout`` seconds without one, or on close."""
        self.start()
        attempt = 0
        while not self._closed.is_set():
            try:
                assert self._conn is not None
                # Short waits so close() is noticed; the timeout counts from the last change.
                deadline = None if timeout is None else time.monotonic() + timeout
                while not self._closed.is_set():
                    wait = 0.25 if deadline is None else max(0.0, min(0.25, deadline - time.monotonic()))
                    for note in self._conn.notifies(timeout=wait):
                        change = self._parse(note.payload)
                        if change is not None:
                            yield change
                            if deadline is not None:
                                deadline = time.monotonic() + timeout  # type: ignore[operator]
                    attempt = 0
                    if deadline is not None and time.monotonic() >= deadline:
                        return
            except psycopg.Error as exc:
                if self._closed.is_set():
                    return
                log.warning("change feed for %s lost its connection: %s", self.project_key, exc)
                self._drop()
                while not self._closed.is_set():
                    time.sleep(RECONNECT_S[min(attempt, len(RECONNECT_S) - 1)])
                    attempt += 1
                    try:
                        self._conn = self._connect()
                    except psycopg.Error:
                        continue
                    yield DocumentChange(self.project_key, None, None, resync=True)
                    break

    def _parse(self, payload: str) -> DocumentChange | None:
        try:
            data = json.loads(payload)
        except ValueError:
            return None
        if not isinstance(data, dict) or data.get("projectKey") != self.project_key:
            return None
        path, digest, origin = data.get("path"), data.get("hash"), data.get("origin")
        if not isinstance(path, str) or not (digest is None or isinstance(digest, str)):
            return None
        return DocumentChange(self.project_key, path, digest, origin if isinstance(origin, str) else None,
                              own=origin is not None and origin == self.origin)

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except psycopg.Error:
                pass

    def close(self) -> None:
        """Stop :meth:`changes` and close the connection."""
        self._closed.set()
        self._drop()


class Watch:
    """A running :func:`watch`; :meth:`stop` ends it."""

    def __init__(self, feed: ChangeFeed, thread: threading.Thread) -> None:
        self.feed = feed
        self.thread = thread

    def stop(self, timeout: float = 2.0) -> None:
        """Stop listening and wait for the thread."""
        self.feed.close()
        self.thread.join(timeout)


def watch(feed: ChangeFeed, callback: Callable[[DocumentChange], None]) -> Watch:
    """Run ``feed.changes()`` on a daemon thread, calling ``callback(change)`` for each (on that thread)."""
    feed.start()  # connect now, so an unavailable server is reported to the caller

    def run() -> None:
        for change in feed.changes():
            try:
                callback(change)
            except Exception:  # a failing listener must not end the feed
                log.exception("change callback failed")

    thread = threading.Thread(target=run, name=f"memdesk-notify-{feed.project_key}", daemon=True)
    thread.start()
    return Watch(feed, thread)
