"""One SQLite connection shared by the threads of a backend, with reentrant explicit transactions.

The connection runs in autocommit mode; :meth:`Database.transaction` opens ``BEGIN IMMEDIATE`` at the
outermost level and commits or rolls back there, so a backend can put a content update and the
index update in one transaction. ``secure_delete`` is on so that deleted text is zeroed on disk.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from core.errors import MemoryBackendError
from core.storage.safepath import database_reason, file_kind


def _check_own_file(path: Path, backend_id: str) -> None:
    """Refuse a database (or its journal) that is not a regular file or has other hard links: SQLite would wait on
    a FIFO, or write another file through a planted hard link (issue 19: stored state is untrusted)."""
    for name in (path.name, f"{path.name}-wal", f"{path.name}-journal"):
        try:
            st = os.lstat(path.with_name(name))
        except OSError:
            continue
        if stat.S_ISLNK(st.st_mode) and name == path.name:
            continue  # the path was resolved inside the project by the caller; a link there is written through
        if not stat.S_ISREG(st.st_mode):
            raise MemoryBackendError(f"cannot open the database: {path.with_name(name)} is {file_kind(st.st_mode)}, "
                                     "not a regular file (move it aside)", "BACKEND_UNAVAILABLE", backend_id)
        if st.st_nlink > 1:
            raise MemoryBackendError(f"cannot open the database: {path.with_name(name)} has {st.st_nlink - 1} other "
                                     "hard link(s), so writing it would change another file too (give it its own "
                                     "copy first)", "BACKEND_UNAVAILABLE", backend_id)


class Database:
    """A SQLite database file under the project root, safe to use from several threads (one at a time)."""

    def __init__(self, path: Path, backend_id: str) -> None:
        self.path = path
        self.backend_id = backend_id
        self.lock = threading.RLock()
        self._depth = 0
        self._after_commit: list[Callable[[], None]] = []
        _check_own_file(path, backend_id)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA secure_delete=ON")
            self.conn.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error as exc:
            raise MemoryBackendError(f"cannot open the database: {database_reason(exc, path)}",
                                     "BACKEND_UNAVAILABLE", backend_id, exc) from exc
        except OSError as exc:
            raise MemoryBackendError(f"cannot open the database {path}: {exc.strerror or exc}; check the owner "
                                     "and mode of its folder", "BACKEND_UNAVAILABLE", backend_id, exc) from exc

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction opened by :meth:`transaction` is active."""
        return self._depth > 0

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Run the block in one write transaction (nested calls join the outer one)."""
        with self.lock:
            outer = self._depth == 0
            if outer:
                self._execute("BEGIN IMMEDIATE")
            self._depth += 1
            try:
                yield self.conn
            except BaseException as exc:
                self._depth -= 1
                if outer:
                    self._after_commit.clear()
                    try:
                        self.conn.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass  # SQLite rolled back already (a full disk, say); the first error is what counts
                if isinstance(exc, sqlite3.Error):
                    raise self._error(exc) from exc
                raise
            self._depth -= 1
            if outer:
                try:
                    self._execute("COMMIT")
                except MemoryBackendError:
                    self._after_commit.clear()
                    if self.conn.in_transaction:  # a failed COMMIT leaves the transaction open
                        try:
                            self.conn.execute("ROLLBACK")
                        except sqlite3.Error:
                            pass
                    raise
                hooks, self._after_commit = self._after_commit, []
                for hook in hooks:
                    hook()

    def _execute(self, sql: str) -> None:
        try:
            self.conn.execute(sql)
        except sqlite3.Error as exc:
            raise self._error(exc) from exc

    def _error(self, exc: sqlite3.Error) -> MemoryBackendError:
        """One line naming this database and what to do (sqlite's own text names no file)."""
        return MemoryBackendError(database_reason(exc, self.path), "WRITE_FAILED", self.backend_id, exc)

    def after_commit(self, hook: Callable[[], None]) -> None:
        """Run ``hook`` once the outermost transaction commits (dropped on rollback); a hook already
        waiting is not added again (several syncs in one transaction optimize the index once)."""
        if self._depth == 0:
            hook()
        elif hook not in self._after_commit:
            self._after_commit.append(hook)

    def data_version(self) -> int:
        """SQLite's ``data_version``: changes when another connection commits to this file."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the database file and truncate it (no old pages linger)."""
        with self.lock:
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self.lock:
            try:
                self.conn.close()
            except sqlite3.Error:
                pass
