"""Fusion's own lock on its global settings file, taken by memdesk around a change to it.

Fusion serializes every read-change-write of ``~/.fusion/settings.json`` across its processes (the dashboard, the
CLI) with a lock file beside it, ``settings.json.lock``, created exclusively (mode 0600) holding
``{"pid", "acquiredAt"}`` and removed when done; a lock whose holder process is gone, or older than 30 s (2 s when
it cannot be read), is taken over; a live holder that never lets go fails the write after 10 s instead of writing
unlocked (Runfusion/Fusion ``packages/core/src/config/global-settings.ts`` at
34e0e664d2013e8337f8367ab7bf4c18eb2fee00, ``withSettingsWriteLock``). memdesk takes the same lock, the same way,
so a change it makes with Fusion's CLI at work is never lost between the two.

The lock file is created with ``O_EXCL | O_NOFOLLOW`` (a link at its name is never followed); something at its
name that is not a regular file (a FIFO, a folder, a link) is refused in one line, never read or removed.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from core.errors import MemoryBackendError

ACQUIRE_TIMEOUT_S = 10.0
STALE_S = 30.0
UNREADABLE_STALE_S = 2.0
RETRY_S = 0.02
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _stale(lock: Path) -> bool:
    """Whether the lock file at ``lock`` may be taken over (Fusion's ``isStaleSettingsLock``)."""
    try:
        st = os.lstat(lock)
    except FileNotFoundError:
        return True  # let go meanwhile: create it again
    if not stat.S_ISREG(st.st_mode):
        raise MemoryBackendError(f"cannot lock Fusion's global settings: {lock} is not a regular file (remove it); "
                                 "nothing was written", "WRITE_FAILED", "state")
    age = time.time() - st.st_mtime
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        try:
            holder = json.loads(os.read(fd, 4096))
        finally:
            os.close(fd)
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return age > UNREADABLE_STALE_S
    pid = holder.get("pid") if isinstance(holder, dict) else None
    if not isinstance(pid, int) or isinstance(pid, bool):
        return age > UNREADABLE_STALE_S
    if age > STALE_S:
        return True
    return pid != os.getpid() and not _alive(pid)


@contextmanager
def fusion_settings_lock(settings: Path) -> Iterator[None]:
    """Hold Fusion's lock on its settings file ``settings`` (``settings.json.lock`` beside it) while the block runs."""
    lock = settings.with_name(settings.name + ".lock")
    deadline = time.monotonic() + ACQUIRE_TIMEOUT_S
    while True:
        try:
            fd = os.open(lock, _FLAGS, 0o600)
        except FileExistsError:
            if _stale(lock):
                try:
                    os.unlink(lock)  # the name only: a link there is never followed
                except FileNotFoundError:
                    pass
                continue
            if time.monotonic() >= deadline:
                raise MemoryBackendError(f"Fusion's global settings are being changed by another writer ({lock} is "
                                         "held); nothing was written, try again", "CONFLICT", "state") from None
            time.sleep(RETRY_S)
            continue
        except OSError as exc:
            raise MemoryBackendError(f"cannot lock Fusion's global settings ({lock}): {exc.strerror}; nothing was "
                                     "written", "WRITE_FAILED", "state", exc) from exc
        try:
            os.write(fd, json.dumps({"pid": os.getpid(), "acquiredAt": int(time.time() * 1000)}).encode("ascii"))
        finally:
            os.close(fd)
        break
    try:
        yield
    finally:
        try:
            os.unlink(lock)
        except OSError:
            pass
