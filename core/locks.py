"""Inter-process locks for read-modify-write of project files, kept under ``.fusion/memdesk/locks``.

Lock files are project state, so untrusted: the lock folder must stay inside the root, and a planted
lock (a symlink or a hard link to another file) is replaced without its target ever being opened.
Locks are per process, so a child made by ``fork`` gets working locks of its own.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import stat
import threading
from pathlib import Path

from filelock import FileLock

from core.errors import MemoryBackendError, PathOutsideRootError
from core.safepath import O_CLOEXEC, O_NOFOLLOW, file_kind, resolve_in_root, resolve_real

log = logging.getLogger(__name__)

MEMDESK_DIR = ".fusion/memdesk"
LOCK_TIMEOUT_S = 30.0

_SAFE_LOCK_NAME = re.compile(r"^[A-Za-z0-9._-]{1,180}$")


def lock_path_for(root: Path, relpath: str) -> Path:
    """Return the lock file guarding ``relpath`` (kept under ``.fusion/memdesk/locks``, one component)."""
    name = relpath.replace("\\", "/").strip("/").replace("/", "__")
    if not _SAFE_LOCK_NAME.match(name) or name in {".", ".."}:
        # Odd or long names become a digest, so a lock name is always one short component.
        name = "h-" + hashlib.sha256(relpath.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return Path(root) / MEMDESK_DIR / "locks" / f"{name}.lock"


def ensure_state_dir(root: Path | str, sub: str = "", backend_id: str = "file") -> Path:
    """Create (when missing) and return ``.fusion/memdesk[/sub]``; refuse one that leaves the root.

    Refuses, creating nothing, a ``.fusion``, ``.fusion/memdesk`` or sub-folder that is a symlink out
    of the project or is not a folder (``INVALID_CONFIG``, naming it and what to do).
    """
    rel = f"{MEMDESK_DIR}/{sub}" if sub else MEMDESK_DIR
    try:
        path = resolve_in_root(root, rel)
    except PathOutsideRootError as exc:
        raise MemoryBackendError(str(exc), "INVALID_CONFIG", backend_id, exc) from exc
    parts = Path(rel).parts
    for i in range(1, len(parts) + 1):  # a file in the way is named before anything is created
        shown = "/".join(parts[:i])
        step = resolve_real(Path(root).resolve().joinpath(*parts[:i]), shown)
        if os.path.lexists(step) and not step.is_dir():
            raise MemoryBackendError(f"{shown} is {file_kind(os.lstat(step).st_mode)}, not a folder; memdesk "
                                     f"keeps its state in {MEMDESK_DIR}/ (move {shown} aside and try again)",
                                     "INVALID_CONFIG", backend_id)
    real = resolve_real(path, rel)
    try:
        real.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise MemoryBackendError(f"cannot create {rel}: {exc.strerror or exc}; check the owner and mode of the "
                                 "project's .fusion folder", "WRITE_FAILED", backend_id, exc) from exc
    return path


# One lock object per (process, lock file): a lock made before a fork belongs to the parent and
# refuses to work in the child, so a child makes its own.
_locks: dict[tuple[int, str], FileLock] = {}
_locks_guard = threading.Lock()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_locks.clear)


def file_lock(root: Path | str, relpath: str, backend_id: str = "file") -> FileLock:
    """Return the inter-process lock for read-modify-write of ``relpath`` under ``root``.

    One instance per lock file and process, so a thread that already holds it can take it again
    (reentrant) and a forked child gets a working lock of its own. The lock folder is validated
    (inside the root) and a planted lock file (a symlink, a hard link) is replaced by a fresh one;
    its target is never opened. Raises ``INVALID_CONFIG`` or ``WRITE_FAILED`` with the lock's path.
    """
    lock_dir = ensure_state_dir(root, "locks", backend_id)
    lp = lock_path_for(Path(root).resolve(), relpath)
    key = (os.getpid(), str(lp))
    with _locks_guard:
        lock = _locks.get(key)
        if lock is None:
            lock = _locks[key] = FileLock(str(lp), timeout=LOCK_TIMEOUT_S)
    if not lock.is_locked:  # never swap the file under a holder in this process
        _prepare_lock_file(Path(lock_dir).resolve() / lp.name, backend_id)
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
