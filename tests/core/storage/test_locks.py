"""core.storage.locks.FileLock: flock on the lock file, excluding filelock's lock on the same file both ways."""

from __future__ import annotations

import errno
import multiprocessing
import os
import subprocess
import sys
import threading
from pathlib import Path

import filelock
import pytest

from core.storage import fileio, locks

pytestmark = pytest.mark.skipif(locks.fcntl is None, reason="flock is POSIX; elsewhere the lock is filelock's")

REL = ".fusion/memory.md"
# A process that takes filelock's own lock on a file, says so, and holds it until its stdin closes.
HOLD_WITH_FILELOCK = ("import sys, filelock; lock = filelock.FileLock(sys.argv[1]); lock.acquire(); "
                      "print('held', flush=True); sys.stdin.read(); lock.release()")
TRY_WITH_FILELOCK = ("import sys, filelock\ntry:\n    filelock.FileLock(sys.argv[1], timeout=0.2).acquire()\n"
                     "    print('acquired')\nexcept filelock.Timeout:\n    print('timeout')")


def lock_of(project: Path) -> locks.FileLock:
    (project / ".fusion").mkdir(exist_ok=True)
    return fileio.file_lock(project, REL)


def test_filelock_held_elsewhere_makes_memdesks_lock_wait(project: Path):
    lock = lock_of(project)
    holder = subprocess.Popen([sys.executable, "-c", HOLD_WITH_FILELOCK, lock.lock_file], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(TimeoutError):
            lock.acquire(timeout=0.2)
        assert not lock.is_locked
    finally:
        holder.communicate("")
    with lock:  # free once the other process let go
        assert lock.is_locked


def test_memdesks_lock_makes_filelock_elsewhere_wait(project: Path):
    lock = lock_of(project)
    with lock:
        out = subprocess.run([sys.executable, "-c", TRY_WITH_FILELOCK, lock.lock_file], capture_output=True,
                             text=True, check=True)
        assert out.stdout.strip() == "timeout"
    out = subprocess.run([sys.executable, "-c", TRY_WITH_FILELOCK, lock.lock_file], capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "acquired"


def test_reentrant_in_one_thread_exclusive_between_threads(project: Path):
    lock = lock_of(project)
    seen: list[object] = []

    def other() -> None:
        try:
            lock.acquire(timeout=0.1)
            seen.append("acquired")
            lock.release()
        except TimeoutError as exc:
            seen.append(exc)

    with lock, lock:  # the holder takes it again
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
        assert lock.is_locked
    assert isinstance(seen[0], locks.LockTimeout) and lock.lock_file in str(seen[0])
    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert seen[1] == "acquired" and not lock.is_locked


def test_a_waiter_locks_the_file_the_lock_name_leads_to_now(project: Path):
    lock = lock_of(project)
    path = Path(lock.lock_file)
    taken = threading.Event()
    done = threading.Event()

    def waiter() -> None:
        with lock:
            taken.set()
            done.wait(10)

    lock.acquire()
    thread = threading.Thread(target=waiter)
    thread.start()
    path.unlink()  # the file is replaced while the waiter waits on the old one
    path.write_text("")
    lock.release()
    assert taken.wait(10)
    try:  # the waiter holds the lock on the file the name now leads to: filelock elsewhere must wait
        out = subprocess.run([sys.executable, "-c", TRY_WITH_FILELOCK, lock.lock_file], capture_output=True,
                             text=True, check=True)
        assert out.stdout.strip() == "timeout"
    finally:
        done.set()
        thread.join()


def _try_in_child(path: str, queue: multiprocessing.Queue) -> None:
    lock = fileio.file_lock(Path(path), REL)
    try:
        lock.acquire(timeout=0.2)
        queue.put("acquired")
    except TimeoutError:
        queue.put("timeout")


def test_a_forked_child_does_not_share_the_parents_hold(project: Path):
    lock = lock_of(project)
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    with lock:
        child = ctx.Process(target=_try_in_child, args=(str(project), queue))
        child.start()
        child.join(30)
        assert queue.get(timeout=5) == "timeout"
    child = ctx.Process(target=_try_in_child, args=(str(project), queue))
    child.start()
    child.join(30)
    assert queue.get(timeout=5) == "acquired"


def test_where_flock_is_refused_the_lock_is_filelocks(project: Path, monkeypatch):
    lock = lock_of(project)
    monkeypatch.setattr(locks.FileLock, "_try", staticmethod(lambda fd: None))  # ENOSYS, ENOLCK ...
    with lock:
        assert lock.is_locked and isinstance(lock._fallback, filelock.BaseFileLock)
        out = subprocess.run([sys.executable, "-c", TRY_WITH_FILELOCK, lock.lock_file], capture_output=True,
                             text=True, check=True)
        assert out.stdout.strip() == "timeout"
    assert not lock.is_locked


def test_flock_errors_that_mean_unsupported_fall_back_and_others_raise(project: Path, monkeypatch):
    def refusing(code: int):
        def flock(fd: int, op: int) -> None:
            raise OSError(code, os.strerror(code))
        return flock

    monkeypatch.setattr(locks.fcntl, "flock", refusing(errno.ENOSYS))
    assert locks.FileLock._try(0) is None
    monkeypatch.setattr(locks.fcntl, "flock", refusing(errno.EWOULDBLOCK))
    assert locks.FileLock._try(0) is False
    monkeypatch.setattr(locks.fcntl, "flock", refusing(errno.EBADF))
    with pytest.raises(OSError):
        locks.FileLock._try(0)
