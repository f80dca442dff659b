"""Confinement of paths to the project root, and plain words for file kinds and OS errors.

At the bottom of ``core`` with :mod:`core.errors`: everything inside a project is untrusted, so a path
is resolved component by component and refused when a link leads out of the root.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from pathlib import Path

from core.errors import PathOutsideRootError

O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
O_NOCTTY = getattr(os, "O_NOCTTY", 0)
O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

#: A file changed less than this long ago may change again within the same tick of its times (FAT keeps times to
#: 2 s; ext4, XFS, btrfs and tmpfs to a clock tick): what is known from its ``stat`` is trusted only after that.
RACY_NS = 2_000_000_000


def settled(st: os.stat_result) -> bool:
    """Whether ``st``'s file was last changed (mtime or ctime) more than :data:`RACY_NS` ago, so that a later
    change gets a later time and a cache keyed by the ``stat`` sees it."""
    return time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > RACY_NS


def inside(path: Path, root_real: Path) -> bool:
    """Whether the real ``path`` is ``root_real`` or below it."""
    return path == root_real or root_real in path.parents


def resolve_real(path: Path, shown: str) -> Path:
    """Resolve every link of ``path``; a link loop is a :class:`PathOutsideRootError` naming ``shown``."""
    try:
        return path.resolve()
    except (RuntimeError, OSError) as exc:  # Python 3.11 raises RuntimeError on a symlink loop
        raise PathOutsideRootError(f"{shown!r} is a symbolic link loop; replace it with a regular file") from exc


def _resolved(path: str) -> str:
    """``str(Path(path).resolve())`` without building paths: ``os.path.realpath``, then the ``stat`` by which
    pathlib turns a link loop into ``RuntimeError``."""
    real = os.path.realpath(path)
    try:
        os.stat(real)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RuntimeError(f"Symlink loop from {exc.filename!r}") from exc
    return real


def resolve_in_root(root: str | os.PathLike[str], relpath: str | os.PathLike[str]) -> Path:
    """Resolve ``relpath`` under ``root``; refuse absolute paths, ``..`` and symlink escapes.

    Returns the logical path (``root/relpath``, links kept); :func:`real_path_in_root` gives the target.
    The message names the first component that leaves the root (``.fusion``, ``.fusion/memdesk`` ...).
    """
    return Path(_confined(root, relpath)[0])


def resolve_both_in_root(root: str | os.PathLike[str], relpath: str | os.PathLike[str]) -> tuple[Path, Path]:
    """:func:`resolve_in_root`'s logical path and the real path it checked (links resolved), both in the root."""
    logical, real = _confined(root, relpath)
    return Path(logical), Path(real)


def _confined(root: str | os.PathLike[str], relpath: str | os.PathLike[str]) -> tuple[str, str]:
    """The logical and the real path of ``relpath`` under ``root``, as strings, or the refusal.

    As ``Path.resolve()`` but on strings: this runs on every read and write, and pathlib's objects (a ``Path``
    per parent to ask whether the root is one of them) cost several times the two ``realpath`` (measured)."""
    rel = Path(relpath)
    if "\x00" in str(relpath):
        raise PathOutsideRootError(f"path {str(relpath)!r} contains a NUL byte")
    if rel.is_absolute() or rel.drive:
        raise PathOutsideRootError(f"path {str(relpath)!r} is absolute; give a path relative to the project root")
    if any(part == ".." for part in rel.parts):
        raise PathOutsideRootError(f"path {str(relpath)!r} contains '..'; it must stay inside the project root")
    root_str = _resolved(os.fspath(root))
    logical = os.path.join(root_str, *rel.parts)  # what ``Path(root_str) / rel`` spells
    try:
        real_str = _resolved(logical)
    except (RuntimeError, OSError) as exc:  # a link loop, as resolve_real says it
        raise PathOutsideRootError(f"{str(relpath)!r} is a symbolic link loop; replace it with a regular file") from exc
    if real_str == root_str or real_str.startswith(root_str.rstrip(os.sep) + os.sep):  # realpath's: normalised
        return logical, real_str
    # Component by component, so the message names the link that escapes (".fusion", not the file).
    root_real = Path(root_str)
    for i in range(1, len(rel.parts) + 1):
        shown = "/".join(rel.parts[:i])
        real = resolve_real(root_real.joinpath(*rel.parts[:i]), shown)
        if not inside(real, root_real):
            raise PathOutsideRootError(
                f"{shown!r} is a symbolic link to {real}, which leaves the project root; memdesk will not read or "
                "write through it (replace the link with a real file or folder inside the project)")
    # Every step is inside but the whole is not: a link changed while this looked (never written through).
    raise PathOutsideRootError(f"{str(relpath)!r} leads out of the project root (a link changed meanwhile); "
                               "try again")


def real_path_in_root(root: str | os.PathLike[str], relpath: str | os.PathLike[str]) -> Path:
    """Return the real (links resolved) path of ``relpath``, refusing anything outside ``root``."""
    return resolve_both_in_root(root, relpath)[1]


def file_kind(mode: int) -> str:
    """Name the kind of file ``mode`` describes ("a folder", "a named pipe (FIFO)", ...)."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def os_reason(path: Path | str, exc: OSError, verb: str) -> str:
    """One line for an OS error on ``path`` that says what to do."""
    if exc.errno == errno.ELOOP:
        return f"{path} is a symbolic link memdesk will not follow here (or a link loop); replace it with a regular file"
    if exc.errno == errno.ENXIO:
        return f"{path} is a named pipe (FIFO) or device, not a regular file; replace it with a regular file"
    if isinstance(exc, PermissionError):
        return (f"cannot {verb} {path}: {exc.strerror or 'Permission denied'}; check the owner and mode of the "
                "file and of its folder")
    if exc.errno == errno.EISDIR:
        return f"{path} is a folder, not a file"
    return f"cannot {verb} {path}: {exc.strerror or exc}"


def database_reason(exc: BaseException, path: Path | str) -> str:
    """One line for a SQLite error on memdesk's database ``path`` that names it and says what to do."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    text = str(exc)
    if primary in (11, 26) or "not a database" in text or "malformed" in text:  # CORRUPT, NOTADB
        return (f"{path} is damaged ({text}); move it aside (mv {path} {path}.broken) and memdesk makes a new "
                "one (the old one can be repaired with `sqlite3 FILE .recover`)")
    if primary == 8 or "readonly" in text:  # READONLY
        return (f"{path} cannot be written ({text}); check the owner and mode of the file, of its -wal and -shm "
                "files and of their folder")
    if primary == 13 or "disk is full" in text:  # FULL
        return f"{path} cannot grow ({text}): the disk is full; free some space and try again"
    if primary == 10 or "disk I/O error" in text:  # IOERR (a file size limit shows as this too)
        return (f"writing {path} failed ({text}): the disk may be full or failing; free some space or check "
                "the disk, then try again")
    if primary in (5, 6) or "locked" in text:  # BUSY, LOCKED
        return f"{path} is locked by another program ({text}); try again when it is done"
    if primary == 14 or "unable to open" in text:  # CANTOPEN
        return f"cannot open {path} ({text}); check that its folder exists and memdesk may write there"
    return f"{path}: {text}"
