"""The files that are searched: working memory, archive, insights and the layered ``.fusion/memory/`` files.

Paths are project-relative with forward slashes; the layered files are included only when
``.fusion/memory/`` exists, and only ``MEMORY.md``, ``DREAMS.md`` and ``YYYY-MM-DD.md`` there.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from core import fileio
from core.entries import MEMORY_ARCHIVE_PATH
from core.project_memory import MEMORY_FILE_PATH

MEMORY_INSIGHTS_PATH = ".fusion/memory-insights.md"
LAYERED_DIR = ".fusion/memory"
_LAYERED_NAME = re.compile(r"^(MEMORY|DREAMS|\d{4}-\d{2}-\d{2})\.md$")

#: Files searched in every project, in display order.
FIXED_FILES: tuple[str, ...] = (MEMORY_FILE_PATH, MEMORY_ARCHIVE_PATH, MEMORY_INSIGHTS_PATH)


@dataclass(frozen=True)
class FileState:
    """What ``stat`` says of a searched file; used to skip unchanged files cheaply."""

    path: str
    mtime_ns: int
    size: int


def layered_files(root: Path | str, *, check: bool = True) -> list[str]:
    """Return the layered memory files under ``.fusion/memory/`` (none when the folder is absent).

    With ``check=False`` the names are listed without a ``stat`` each (the caller stats them).
    """
    folder = os.path.join(root, LAYERED_DIR)  # not pathlib: this runs before every search
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [f"{LAYERED_DIR}/{n}" for n in names
            if _LAYERED_NAME.match(n) and (not check or os.path.isfile(os.path.join(folder, n)))]


def candidate_files(root: Path | str, *, include_working: bool = True) -> list[str]:
    """Every file that would be searched if it exists (no ``stat``; see :func:`stat_files`)."""
    fixed = FIXED_FILES if include_working else FIXED_FILES[1:]
    return [*fixed, *layered_files(root, check=False)]


def searched_files(root: Path | str, *, include_working: bool = True) -> list[str]:
    """Return every searched file that exists (the working memory is listed even when it does not)."""
    states = stat_files(root, candidate_files(root, include_working=include_working))
    return [p for p, st in states.items() if st is not None or (include_working and p == MEMORY_FILE_PATH)]


def _inside(root_real: str, path: str) -> bool:
    real = os.path.realpath(path)
    return real == root_real or real.startswith(root_real + os.sep)


def _folder_inside(root_real: str, folder: str) -> bool:
    """Whether the folder ``folder`` (relative, forward slashes) of ``root_real`` resolves inside it.

    A folder none of whose parts is a symlink is where it looks, so one ``lstat`` per part does
    (``realpath`` costs several times that); a symlinked part, a ``..`` part, or Windows (junctions
    are not symlinks to ``lstat``) is resolved.
    """
    parts = folder.split("/") if folder else []
    if os.name == "nt" or any(part in ("", ".", "..") for part in parts):
        return _inside(root_real, os.path.join(root_real, folder))
    path = root_real
    for part in parts:
        path = f"{path}/{part}"
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return _inside(root_real, os.path.join(root_real, folder))
        except OSError:
            return False
    return True


def stat_files(root: Path | str, relpaths: list[str]) -> dict[str, FileState | None]:
    """``stat`` each file (``None`` when absent, not a regular file, or reached through a symlink out of the root).

    Cheap enough to run before every search: each folder is checked once, and a file is resolved
    only when it is itself a symlink.
    """
    root_real = os.path.realpath(root)
    # Relative paths use "/"; joined by hand where that is the separator (os.path.join is the slow part).
    prefix = root_real.rstrip("/") + "/" if os.sep == "/" else None
    dirs: dict[str, bool] = {}
    out: dict[str, FileState | None] = {}
    for rel in relpaths:
        parent = rel.rpartition("/")[0]
        if parent not in dirs:
            dirs[parent] = _folder_inside(root_real, parent)
        out[rel] = None
        if not dirs[parent]:
            continue
        full = prefix + rel if prefix is not None else os.path.join(root_real, rel)
        try:
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                if not _inside(root_real, full):
                    continue
                st = os.stat(full)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            out[rel] = FileState(rel, st.st_mtime_ns, st.st_size)
    return out


def stat_file(root: Path | str, relpath: str) -> FileState | None:
    """Return the file's state, or ``None`` when it does not exist (or leaves the root)."""
    return stat_files(root, [relpath])[relpath]


def read_file(root: Path | str, relpath: str) -> str | None:
    """Read a searched file whole; ``None`` when absent. Raises ``READ_FAILED`` when not UTF-8."""
    return fileio.read_text(fileio.resolve_in_root(root, relpath))
