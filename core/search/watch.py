"""Which memory files changed since the last search: Linux inotify, read without blocking.

A search must not ``stat`` every document to learn that nothing changed (with 2,000 files that
was most of its time). The kernel queues an inotify event the moment a write, create, delete or
rename completes, so draining the queue at the start of a search (one ``read`` that returns at
once) tells exactly which files changed before it, with no thread and no race. The watched folders
are the ones documents live in (``.fusion``, ``.fusion/memory``, ``.fusion/agent-memory`` and each
agent's folder; the project root only while ``.fusion`` is missing).

:meth:`Watcher.changes` returns the changed project-relative paths, or ``None`` when the caller must
check everything (a folder appeared or went, the queue overflowed, a watch was lost). Where inotify
is unavailable (not Linux, no libc, the watch limit reached) :func:`open_watcher` returns ``None``
and the caller checks every file as before.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import struct
import sys
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)

_MODIFY, _ATTRIB, _CLOSE_WRITE = 0x2, 0x4, 0x8
_MOVED_FROM, _MOVED_TO, _CREATE, _DELETE = 0x40, 0x80, 0x100, 0x200
_DELETE_SELF, _MOVE_SELF, _UNMOUNT, _OVERFLOW, _IGNORED = 0x400, 0x800, 0x2000, 0x4000, 0x8000
_ISDIR, _ONLYDIR, _DONT_FOLLOW = 0x40000000, 0x01000000, 0x02000000
_MASK = (_MODIFY | _ATTRIB | _CLOSE_WRITE | _MOVED_FROM | _MOVED_TO | _CREATE | _DELETE | _DELETE_SELF
         | _MOVE_SELF | _ONLYDIR | _DONT_FOLLOW)
_EVENT = struct.Struct("iIII")
#: Folder names whose appearance or removal changes which documents exist.
_FOLDERS = {".fusion", "memory", "agent-memory"}

_libc: ctypes.CDLL | None = None


def _lib() -> ctypes.CDLL | None:
    global _libc
    if _libc is None and sys.platform.startswith("linux"):
        try:
            lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            lib.inotify_init1.argtypes = [ctypes.c_int]
            lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
            _libc = lib
        except (OSError, AttributeError) as exc:
            log.debug("inotify unavailable: %s", exc)
    return _libc


class Watcher:
    """The inotify queue of one project's memory folders."""

    def __init__(self, lib: ctypes.CDLL, fd: int, root: Path) -> None:
        self._lib = lib
        self._fd = fd
        self.root = root
        self._dirs: dict[int, str] = {}  # watch descriptor -> folder, project-relative ("" = root)
        #: False when a folder that exists could not be watched (a symlink, the watch limit): then
        #: the events do not cover every document and the caller must check them all.
        self.complete = True
        self._watch_all()

    def _add(self, rel: str) -> bool:
        path = os.path.join(self.root, rel) if rel else str(self.root)
        wd = self._lib.inotify_add_watch(self._fd, os.fsencode(path), _MASK)
        if wd < 0:
            if os.path.lexists(path):
                self.complete = False
            return False
        self._dirs[wd] = rel
        return True

    def _watch_all(self) -> None:
        if not self._add(".fusion"):
            self._add("")  # no .fusion yet: watch for it to appear
            return
        self._add(".fusion/memory")
        if self._add(".fusion/agent-memory"):
            try:
                agents = [e.name for e in os.scandir(self.root / ".fusion" / "agent-memory")
                          if e.is_dir(follow_symlinks=False)]
            except OSError:
                agents = []
            for agent in agents:
                self._add(f".fusion/agent-memory/{agent}")

    def changes(self) -> set[str] | None:
        """The project-relative paths changed since the last call; ``None``: check everything."""
        changed: set[str] = set()
        full = False
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                break
            except OSError as exc:
                log.debug("inotify read failed: %s", exc)
                return None
            pos = 0
            while pos + _EVENT.size <= len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, pos)
                name = data[pos + _EVENT.size:pos + _EVENT.size + length].rstrip(b"\0").decode("utf-8", "replace")
                pos += _EVENT.size + length
                if mask & (_OVERFLOW | _IGNORED | _DELETE_SELF | _MOVE_SELF | _UNMOUNT):
                    full = True
                    continue
                folder = self._dirs.get(wd)
                if folder is None:
                    continue
                if mask & _ISDIR:
                    # A new or removed folder matters when it can hold documents (an agent's, .fusion/memory).
                    if name in _FOLDERS or folder == ".fusion/agent-memory":
                        full = True
                    continue
                changed.add(f"{folder}/{name}" if folder else name)
        if full:
            self._rewatch()
            return None
        return changed

    def _rewatch(self) -> None:
        # Watches of removed folders are dropped by the kernel; adding one again returns the same descriptor.
        self._dirs.clear()
        self.complete = True
        self._watch_all()

    def close(self, _close: Callable[[int], None] = os.close) -> None:
        """Stop watching (idempotent). ``os.close`` is bound at definition: the finalizer may run as the
        interpreter exits, when this module's globals are gone ("Exception ignored in Watcher.__del__")."""
        if self._fd >= 0:
            try:
                _close(self._fd)
            except OSError:
                pass
            self._fd = -1

    def __del__(self) -> None:  # a search service dropped without shutdown() must not keep its inotify instance
        self.close()


def open_watcher(root: Path | str) -> Watcher | None:
    """A watcher over ``root``'s memory folders, or ``None`` where inotify cannot be used."""
    lib = _lib()
    if lib is None:
        return None
    fd = lib.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    if fd < 0:
        log.debug("inotify_init1 failed: errno %d", ctypes.get_errno())
        return None
    return Watcher(lib, fd, Path(root))
