"""Record the writes, database opens and connects the GUI thread makes (Python's audit hooks, PEP 578).

``recording()`` arms a process-wide audit hook (a hook cannot be removed, so it is installed once and
armed per use) that notes, for the GUI thread only, every ``open`` for writing, ``os.rename``/``replace``/
``remove``/``mkdir``, ``sqlite3.connect`` and ``socket.connect``, with the memdesk frames that made it.
"""

from __future__ import annotations

import os
import sys
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager

EVENTS = {"open", "os.rename", "os.replace", "os.remove", "os.mkdir", "sqlite3.connect", "socket.connect"}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND
_armed: list[list[str]] = []


def _writes(event: str, args: tuple[object, ...]) -> bool:
    if event != "open":
        return True
    mode, flags = args[1], args[2]
    if isinstance(mode, str):
        return any(c in mode for c in "wax+")
    return isinstance(flags, int) and bool(flags & _WRITE_FLAGS)


def _hook(event: str, args: tuple[object, ...]) -> None:
    if not _armed or event not in EVENTS or threading.current_thread() is not threading.main_thread():
        return
    if not _writes(event, args):
        return
    frames = [f for f in traceback.extract_stack()[:-1] if f"{os.sep}gui{os.sep}" in f.filename
              and f"{os.sep}tests{os.sep}" not in f.filename]
    if frames:  # made by memdesk's GUI code (not by the test's own set-up)
        where = " < ".join(f"{f.filename.rsplit(os.sep, 1)[-1]}:{f.lineno} {f.name}" for f in reversed(frames[-3:]))
        _armed[-1].append(f"{event} {args[0]!r} at {where}")


_installed: list[bool] = []


@contextmanager
def recording() -> Iterator[list[str]]:
    """The GUI thread's writes, opens and connects made inside the block."""
    if not _installed:
        sys.addaudithook(_hook)
        _installed.append(True)
    seen: list[str] = []
    _armed.append(seen)
    try:
        yield seen
    finally:
        _armed.remove(seen)
