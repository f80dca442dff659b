"""Inter-process locks for read-modify-write of project files, kept under ``.fusion/memdesk/locks``.

Lock files are project state, so untrusted: the lock folder must stay inside the root, and a planted
lock (a symlink or a hard link to another file) is replaced without its target ever being opened.
Locks are per process, so a child made by ``fork`` gets working locks of its own.

The lock itself (:class:`FileLock`) is ``flock(2)`` on the lock file, the primitive the ``filelock``
library's ``UnixFileLock`` takes on the same file, so memdesk's processes (GUI, CLI, servers) and any
program that locks the file with ``filelock`` exclude one another. It is memdesk's own because
importing ``filelock`` costs a short command such as ``memdesk append`` about a fifth of its run. Where
``flock`` does not exist (Windows) or the file system refuses it, the lock is ``filelock``'s, imported
then: the library's own answer for those places.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import threading
import time
from pathlib import Path
from typing import Any

from core.errors import MemoryBackendError, PathOutsideRootError
from core.logs import get_logger
from core.storage.safepath import (
    O_CLOEXEC,
    O_NOCTTY,
    O_NOFOLLOW,
    O_NONBLOCK,
    file_kind,
    resolve_both_in_root,
    resolve_real,
)

try:
    import fcntl
except ImportError:  # Windows: filelock's lock (see FileLock)
    fcntl = None  # type: ignore[assignment]

log = get_logger(__name__)

MEMDESK_DIR = ".fusion/memdesk"
LOCK_TIMEOUT_S = 30.0

_SAFE_LOCK_NAME = re.compile(r"^[A-Za-z0-9._-]{1,180}$")


def lock_path_for(root: Path, relpath: str) -> Path:
    """Return the lock file guarding ``relpath`` (kept under ``.fusion/memdesk/locks``, one component)."""
    return Path(root) / MEMDESK_DIR / "locks" / _lock_name(relpath)


def _lock_name(relpath: str) -> str:
    name = relpath.replace("\\", "/").strip("/").replace("/", "__")
    if not _SAFE_LOCK_NAME.match(name) or name in {".", ".."}:
        # Odd or long names become a digest, so a lock name is always one short component.
        import hashlib  # here: only odd names need it, and loading OpenSSL costs a short command

        name = "h-" + hashlib.sha256(relpath.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"{name}.lock"


def ensure_state_dir(root: Path | str, sub: str = "", backend_id: str = "file") -> Path:
    """Create (when missing) and return ``.fusion/memdesk[/sub]``; refuse one that leaves the root.

    Refuses, creating nothing, a ``.fusion``, ``.fusion/memdesk`` or sub-folder that is a symlink out
    of the project or is not a folder (``INVALID_CONFIG``, naming it and what to do).
    """
    return _state_dir(root, sub, backend_id)[0]


def _state_dir(root: Path | str, sub: str, backend_id: str) -> tuple[Path, Path]:
    """:func:`ensure_state_dir`'s folder, and its real path."""
    rel = f"{MEMDESK_DIR}/{sub}" if sub else MEMDESK_DIR
    try:
        path, real = resolve_both_in_root(root, rel)
    except PathOutsideRootError as exc:
        raise MemoryBackendError(str(exc), "INVALID_CONFIG", backend_id, exc) from exc
    if real.is_dir():  # inside the root (checked above) and a folder: every step on the way is one too
        return path, real
    parts = Path(rel).parts
    for i in range(1, len(parts) + 1):  # a file in the way is named before anything is created
        shown = "/".join(parts[:i])
        step = resolve_real(Path(root).resolve().joinpath(*parts[:i]), shown)
        if os.path.lexists(step) and not step.is_dir():
            raise MemoryBackendError(f"{shown} is {file_kind(os.lstat(step).st_mode)}, not a folder; memdesk "
                                     f"keeps its state in {MEMDESK_DIR}/ (move {shown} aside and try again)",
                                     "INVALID_CONFIG", backend_id)
    try:
        real.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise MemoryBackendError(f"cannot create {rel}: {exc.strerror or exc}; check the owner and mode of the "
                                 "project's .fusion folder", "WRITE_FAILED", backend_id, exc) from exc
    return path, real


class LockTimeout(TimeoutError):
    """Another writer held the lock for the whole timeout (``filelock.Timeout`` is a ``TimeoutError`` too)."""


#: ``flock`` errors that mean "held by another": some file systems answer ``EACCES``.
_CONTENDED = frozenset({errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK})
#: ``flock`` errors that mean "not on this file system": filelock's lock is used there instead.
_UNSUPPORTED = frozenset({errno.ENOSYS, errno.ENOLCK, getattr(errno, "ENOTSUP", errno.ENOSYS),
                          getattr(errno, "EOPNOTSUPP", errno.ENOSYS)})
_POLL_MIN_S, _POLL_MAX_S = 0.001, 0.05

# Descriptors holding a lock in this process: a child made by fork closes its copies (without
# unlocking: the lock is the parent's), so it never keeps a parent's lock alive.
_held_fds: set[int] = set()


class FileLock:
    """A cross-process lock on one lock file: reentrant, one hold per thread, with a timeout.

    ``flock(LOCK_EX)`` on the open lock file, as ``filelock.UnixFileLock`` does (see the module's
    docstring), polled until ``timeout`` seconds have passed (:class:`LockTimeout`; a negative
    timeout waits for ever, ``0`` tries once). Holds are per thread, as ``filelock``'s are by
    default: another thread of this process waits as another process does, and the thread that
    holds the lock can take it again. The lock file is never truncated or removed, so waiters
    share its inode; one that wins a file that was replaced meanwhile tries the new one.
    """

    def __init__(self, lock_file: str, timeout: float = -1) -> None:
        self.lock_file = lock_file
        self.timeout = timeout
        self._local = threading.local()
        self._fallback: Any = None if fcntl is not None else self._library_lock()

    def _library_lock(self) -> Any:
        from filelock import FileLock as LibraryLock  # where flock cannot serve (see the module docstring)

        return LibraryLock(self.lock_file, timeout=self.timeout)

    def _hold(self) -> list[int]:
        """This thread's ``[pid, fd, count]`` (a hold made before a fork is not the child's)."""
        hold = getattr(self._local, "hold", None)
        if hold is None or hold[0] != os.getpid():
            hold = self._local.hold = [os.getpid(), -1, 0]
        return hold

    @property
    def is_locked(self) -> bool:
        """Whether this thread holds the lock."""
        if self._fallback is not None:
            return bool(self._fallback.is_locked)
        return self._hold()[2] > 0

    def acquire(self, timeout: float | None = None) -> FileLock:
        """Take the lock (again, when this thread holds it); :class:`LockTimeout` after ``timeout`` seconds."""
        wait = self.timeout if timeout is None else timeout
        if self._fallback is not None:
            self._fallback.acquire(timeout=wait)
            return self
        hold = self._hold()
        if hold[2] > 0:
            hold[2] += 1
            return self
        deadline = None if wait < 0 else time.monotonic() + wait
        poll = _POLL_MIN_S
        while True:
            fd = self._open()
            try:
                got = self._try(fd)
            except BaseException:
                os.close(fd)
                raise
            if got is None:  # flock is not served here: filelock's lock for this file from now on
                os.close(fd)
                self._fallback = self._library_lock()
                self._fallback.acquire(timeout=wait)
                return self
            if got and self._same_file(fd):
                hold[1], hold[2] = fd, 1
                _held_fds.add(fd)
                return self
            os.close(fd)  # held by another, or the file was replaced while this waited (then: the new one)
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise LockTimeout(f"the lock {self.lock_file} is held by another writer")
            if not got:
                time.sleep(poll if remaining is None else min(poll, remaining))
                poll = min(poll * 2, _POLL_MAX_S)

    @staticmethod
    def _try(fd: int) -> bool | None:
        """``flock`` once without waiting: taken, held by another, or ``None`` when not supported here."""
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in _CONTENDED:
                return False
            if exc.errno in _UNSUPPORTED:
                return None
            raise
        return True

    def release(self) -> None:
        """Let go of one hold; the lock is free once every hold of this thread is released."""
        if self._fallback is not None:
            self._fallback.release()
            return
        hold = self._hold()
        if hold[2] <= 0:
            return
        hold[2] -= 1
        if hold[2] == 0:
            fd, hold[1] = hold[1], -1
            _held_fds.discard(fd)
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)

    def __enter__(self) -> FileLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _open(self) -> int:
        """Open the lock file (created when missing, never through a link), refusing what is not a file."""
        fd = os.open(self.lock_file, os.O_RDWR | os.O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0o644)
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            raise OSError(errno.EINVAL, f"it is {file_kind(mode)}, not a lock file", self.lock_file)
        return fd

    def _same_file(self, fd: int) -> bool:
        """Whether the lock file's name still leads to the file open on ``fd``."""
        try:
            now = os.stat(self.lock_file, follow_symlinks=False)
        except FileNotFoundError:
            return False
        held = os.fstat(fd)
        return (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)


def _after_fork_in_child() -> None:
    _locks.clear()
    for fd in list(_held_fds):
        try:
            os.close(fd)  # the copy only: the parent's hold stays
        except OSError:
            pass
    _held_fds.clear()


# One lock object per (process, lock file): a lock made before a fork belongs to the parent and
# refuses to work in the child, so a child makes its own.
_locks: dict[tuple[int, str], FileLock] = {}
_locks_guard = threading.Lock()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def file_lock(root: Path | str, relpath: str, backend_id: str = "file") -> FileLock:
    """Return the inter-process lock for read-modify-write of ``relpath`` under ``root``.

    One instance per lock file and process, so a thread that already holds it can take it again
    (reentrant) and a forked child gets a working lock of its own. The lock folder is validated
    (inside the root) and a planted lock file (a symlink, a hard link) is replaced by a fresh one;
    its target is never opened. Raises ``INVALID_CONFIG`` or ``WRITE_FAILED`` with the lock's path.
    """
    lock_dir, lock_dir_real = _state_dir(root, "locks", backend_id)
    name = _lock_name(relpath)
    key = (os.getpid(), str(lock_dir / name))  # lock_dir is the resolved root's: lock_path_for's path
    with _locks_guard:
        lock = _locks.get(key)
        if lock is None:
            lock = _locks[key] = FileLock(key[1], timeout=LOCK_TIMEOUT_S)
    if not lock.is_locked:  # never swap the file under a holder in this process
        _prepare_lock_file(lock_dir_real / name, backend_id)
    return lock


def _prepare_lock_file(lp: Path, backend_id: str) -> None:
    """Make ``lp`` a plain regular file memdesk owns; remove a planted link without touching its target."""
    try:
        st = os.lstat(lp)
    except FileNotFoundError:
        st = None
    if st is not None and (stat.S_ISLNK(st.st_mode) or (stat.S_ISREG(st.st_mode) and st.st_nlink > 1)):
        # Unlinking removes only this name: a symlink's target or the other hard link stays untouched.
        log.warning("lock file %s was %s; replacing it with a fresh lock file", lp,
                    "a symbolic link" if stat.S_ISLNK(st.st_mode) else "hard-linked to another file")
        try:
            os.unlink(lp)
        except OSError as exc:
            raise _lock_error(lp, f"it is a planted link that cannot be removed ({exc.strerror})", backend_id) from exc
        st = None
    elif st is not None and not stat.S_ISREG(st.st_mode):
        raise _lock_error(lp, f"it is {file_kind(st.st_mode)}, not a lock file", backend_id)
    if st is None:
        try:
            fd = os.open(lp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        except FileExistsError:
            return  # another process created it meanwhile: validated on its next use
        except OSError as exc:
            raise _lock_error(lp, f"it cannot be created ({exc.strerror})", backend_id) from exc
        os.close(fd)


def _lock_error(lp: Path, why: str, backend_id: str) -> MemoryBackendError:
    return MemoryBackendError(f"lock file {lp} is unusable: {why}; remove it and try again",
                              "WRITE_FAILED", backend_id)
