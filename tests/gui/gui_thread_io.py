"""Record the file reads and writes, listings, database opens and connects the GUI thread makes (Python's
audit hooks, PEP 578).

``recording()`` arms a process-wide audit hook (a hook cannot be removed, so it is installed once and
armed per use) that notes, for the GUI thread only, every ``open`` (for reading too), ``os.listdir``/
``os.scandir``, ``os.rename``/``replace``/``remove``/``mkdir``, ``sqlite3.connect`` and ``socket.connect``
made with memdesk's code (``gui/`` or ``core/``) on the stack, with the frames that made it.

What is allowed, by path prefix (:func:`allowed_prefixes`): code being imported (Python's own library and
its zip, the virtual environment's packages, PySide6 and Qt with its plugins, memdesk's own ``core/`` and
``gui/`` and their ``egg-info`` entry points), the application's bundled resources (``resources/``,
``gui/resources``: style sheets, the preview's CSS, icons), what Qt itself reads for fonts and icons
(fontconfig's ``/etc/fonts``, ``/usr/share/fonts``, ``/usr/share/icons``; Qt's C++ raises no Python event,
named should a Python call make the same read), ``/dev/null`` (a library opens it on import) and, exactly,
the ``sys.path`` folders (the import system looks at them). Anything
else (a project's files, memdesk's state in the user config, cache or project folder) fails the test.

CPython raises no audit event for ``os.stat``/``lstat``/``access``/``statvfs``: they are wrapped in
:mod:`os` once (:data:`STATS`) and noted the same way, so an ``exists()``, ``is_dir()`` or ``resolve()``
of a project path on the GUI thread fails too. A C library's own connect (psycopg/libpq) is invisible
to both: the postgres connect is checked apart, by the thread at psycopg's connect generator
(``tests/gui/test_gui_thread_io.py``).
"""

from __future__ import annotations

import os
import sys
import sysconfig
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

EVENTS = {"open", "os.listdir", "os.scandir", "os.rename", "os.replace", "os.remove", "os.mkdir",
          "sqlite3.connect", "socket.connect"}
_REPO = Path(__file__).resolve().parent.parent.parent
_MEMDESK = (f"{_REPO}{os.sep}gui{os.sep}", f"{_REPO}{os.sep}core{os.sep}")
_TESTS = f"{_REPO}{os.sep}tests{os.sep}"
_armed: list[list[str]] = []
#: What Qt itself reads (fontconfig, fonts, icon themes): read by Qt's C++ code, named here should a
#: Python call ever make the same read.
QT_OWN_READS = ("/etc/fonts/", "/usr/share/fonts/", "/usr/local/share/fonts/", "/usr/share/icons/",
                "/usr/share/fontconfig/", "/var/cache/fontconfig/")


#: A library's import opens it (croniter, through its dependencies): not a file of the project's.
LIBRARY_IMPORTS = ("/dev/null",)


def allowed_prefixes() -> tuple[str, ...]:
    """Where the GUI thread may read: code being imported, the app's bundled resources, Qt's own reads."""
    paths = sysconfig.get_paths()
    code = {sys.prefix, paths["stdlib"], paths["platstdlib"], paths["purelib"], paths["platlib"]}
    stdlib_zip = os.path.abspath(os.path.join(paths["stdlib"], "..", f"python{sys.version_info[0]}{sys.version_info[1]}.zip"))
    own = [f"{_REPO}{os.sep}{name}" for name in ("core", "gui", "resources")]  # memdesk's code and bundled resources
    own += [str(p) for p in _REPO.glob("*.egg-info")]  # its entry points (importlib.metadata)
    return (*(os.path.abspath(p).rstrip(os.sep) + os.sep for p in sorted(code)), *(p + os.sep for p in own),
            *(p.rstrip(os.sep) for p in own), stdlib_zip,
            *QT_OWN_READS, *LIBRARY_IMPORTS)


_ALLOWED: tuple[str, ...] = ()
#: The import system's own folders, exactly (``importlib.metadata`` stats each ``sys.path`` entry).
_IMPORT_PATHS: frozenset[str] = frozenset()


def _is_code(path: str) -> bool:
    """A module memdesk imports (its own ``.py`` or compiled ``.pyc``)."""
    return path.startswith(_MEMDESK) and (path.endswith((".py", ".pyc")) or f"{os.sep}__pycache__{os.sep}" in path)


def _path(arg: object) -> str | None:
    if isinstance(arg, int) or arg is None:
        return None  # os.fdopen of a descriptor opened (and so recorded) before, or scandir('.')
    if isinstance(arg, bytes):
        arg = os.fsdecode(arg)
    return os.path.abspath(os.fspath(arg))  # type: ignore[arg-type]


def _counts(event: str, args: tuple[object, ...]) -> bool:
    if event not in ("open", "os.listdir", "os.scandir"):
        return True  # writes, removes, database opens, connects: always
    path = _path(args[0] if args else None)
    if path is None:
        return False
    return not _allowed(path)


def _allowed(path: str) -> bool:
    return path.startswith(_ALLOWED) or _is_code(path) or path in _IMPORT_PATHS


def _hook(event: str, args: tuple[object, ...]) -> None:
    if not _armed or event not in EVENTS or threading.current_thread() is not threading.main_thread():
        return
    if not _counts(event, args):
        return
    _note(event, args)


def _note(event: str, args: tuple[object, ...]) -> None:
    frames = [(f.f_code.co_filename, f.f_lineno, f.f_code.co_name) for f, _ in traceback.walk_stack(None)
              if f.f_code.co_filename.startswith(_MEMDESK)]  # innermost first; no source read (no event)
    if frames:  # made by memdesk's code (not by the test's own set-up or checks)
        where = " < ".join(f"{name.rsplit(os.sep, 1)[-1]}:{line} {fn}" for name, line, fn in frames[:4])
        _armed[-1].append(f"{event} {args[0] if args else ''!r} at {where}")


#: The stat calls CPython raises no audit event for: wrapped in :mod:`os` (pathlib's ``exists``/``is_dir``/
#: ``resolve`` and ``os.path`` look them up there; the import system calls ``posix`` directly, unseen).
STATS = ("stat", "lstat", "access", "statvfs")


def _stat_spy(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
    def spy(path: Any, *args: Any, **kwargs: Any) -> Any:
        if _armed and threading.current_thread() is threading.main_thread() and not isinstance(path, int):
            where = _path(path)
            if where is not None and not _allowed(where):
                _note(f"os.{name}", (path,))
        return real(path, *args, **kwargs)

    return spy


_installed: list[bool] = []


@contextmanager
def recording() -> Iterator[list[str]]:
    """The GUI thread's reads, writes, listings, database opens and connects made inside the block."""
    global _ALLOWED, _IMPORT_PATHS
    if not _installed:
        _ALLOWED = allowed_prefixes()
        _IMPORT_PATHS = frozenset(os.path.abspath(p or ".") for p in sys.path)
        sys.addaudithook(_hook)
        for name in STATS:
            setattr(os, name, _stat_spy(name, getattr(os, name)))
        _installed.append(True)
    seen: list[str] = []
    _armed.append(seen)
    try:
        yield seen
    finally:
        _armed.remove(seen)
