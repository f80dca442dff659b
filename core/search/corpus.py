"""The documents that are searched: every memory document of the project, in either layout.

Seed layout: the working memory, the archive and the insights. Layered layout: long-term memory,
daily notes and dreams (the project's and every agent's), the insights, the archive and a legacy
``.fusion/memory.md``; the list is :meth:`core.documents.layout.Layout.documents`. Paths are project-relative
with forward slashes. :func:`stat_files` checks them cheaply and never follows a link out of the root.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from core.documents.layout import ARCHIVE, SEED_INSIGHTS, SEED_MEMORY, Layout
from core.storage import fileio

MEMORY_FILE_PATH = SEED_MEMORY
MEMORY_ARCHIVE_PATH = ARCHIVE
MEMORY_INSIGHTS_PATH = SEED_INSIGHTS


@dataclass(frozen=True)
class FileState:
    """What ``stat`` says of a searched file; used to skip unchanged files cheaply."""

    path: str
    mtime_ns: int
    size: int
    #: Reached through a symlink (no folder watch sees its changes: it is checked on every search).
    linked: bool = False


def document_paths(root: Path | str, *, include_working: bool = True) -> list[str]:
    """Every memory document of the project that exists, in the layout's order.

    ``include_working=False`` leaves out ``.fusion/memory.md`` (a backend that keeps it in a
    database indexes its own copy).
    """
    docs = [d.path for d in Layout(root).documents()]
    return docs if include_working else [p for p in docs if p != MEMORY_FILE_PATH]


def candidate_files(root: Path | str, *, include_working: bool = True) -> list[str]:
    """The documents to check before a search (see :func:`stat_files`); same as :func:`document_paths`."""
    return document_paths(root, include_working=include_working)


def searched_files(root: Path | str, *, include_working: bool = True) -> list[str]:
    """Every searched document that exists (the working memory is listed even when it does not)."""
    docs = document_paths(root, include_working=include_working)
    if include_working and MEMORY_FILE_PATH not in docs and Layout(root).kind == "seed":
        docs.insert(0, MEMORY_FILE_PATH)
    return docs


def is_document_path(root: Path | str, relpath: str) -> bool:
    """Whether ``relpath`` names a memory document of the project (whether or not it exists)."""
    return Layout(root).is_document(relpath)


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
        linked = False
        try:
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                if not _inside(root_real, full):
                    continue
                st = os.stat(full)
                linked = True
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            out[rel] = FileState(rel, st.st_mtime_ns, st.st_size, linked)
    return out


def stat_file(root: Path | str, relpath: str) -> FileState | None:
    """Return the file's state, or ``None`` when it does not exist (or leaves the root)."""
    return stat_files(root, [relpath])[relpath]


def read_file(root: Path | str, relpath: str) -> str | None:
    """Read a searched file whole; ``None`` when absent. Raises ``READ_FAILED`` when not UTF-8."""
    return fileio.read_text(fileio.resolve_in_root(root, relpath))
