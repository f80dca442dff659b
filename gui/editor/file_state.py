"""What the editor must know about the memory file before the operator types (no Qt).

* :func:`write_block_reason`: why the file cannot be written — a read-only mount, an immutable or
  append-only file, permissions on the file or on its folder (saves replace the file by renaming a
  temporary file in that folder). It only asks the system (``statvfs``, the inode flags, ``access``);
  it never creates a probe file, so opening a project still writes nothing.
* :func:`undecodable`: for a file that is not UTF-8, its text for display (each undecodable byte
  shown as U+FFFD, never saved), its real size and where the first bad byte is (line, column).
"""

from __future__ import annotations

import fcntl
import os
import stat
import struct
from dataclasses import dataclass
from pathlib import Path

_FS_IOC_GETFLAGS = 0x80086601  # linux/fs.h; reading the flags changes nothing
_FS_IMMUTABLE_FL = 0x00000010
_FS_APPEND_FL = 0x00000020
REPLACEMENT = "\ufffd"


def _rel(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _inode_flags(path: Path) -> int:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return 0
    try:
        raw = fcntl.ioctl(fd, _FS_IOC_GETFLAGS, struct.pack("l", 0))
        return struct.unpack("l", raw)[0]
    except OSError:  # the file system keeps no such flags
        return 0
    finally:
        os.close(fd)


def _read_only_mount(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def write_block_reason(root: Path, path: Path | None) -> str | None:
    """Why ``path`` (a memory file under ``root``, present or not) cannot be saved; ``None`` if it can."""
    if path is None:
        return None
    root = Path(root)
    try:
        real = path.resolve()
        info = real.stat() if real.exists() else None
    except (OSError, RuntimeError):  # RuntimeError: Python 3.11's resolve() on a symbolic link loop
        return None  # unreadable: the read reports it
    name = _rel(root, path)
    folder = real.parent if info is not None else next((p for p in real.parents if p.exists()), root)
    if _read_only_mount(folder):
        return f"{name} is on a read-only file system, so it cannot be saved."
    if info is not None and stat.S_ISREG(info.st_mode):
        flags = _inode_flags(real) if os.name == "posix" else 0
        if flags & _FS_IMMUTABLE_FL:
            return f"{name} is marked immutable (chattr +i), so it cannot be saved. Remove the mark to edit it."
        if flags & _FS_APPEND_FL:
            return f"{name} is marked append-only (chattr +a), so it cannot be replaced by a save."
        if not os.access(real, os.W_OK):
            mode = stat.filemode(info.st_mode)
            return f"{name} is not writable for you (permissions {mode}), so it cannot be saved."
    if not os.access(folder, os.W_OK | os.X_OK):
        mode = stat.filemode(folder.stat().st_mode) if folder.exists() else "?"
        return (f"{name} cannot be saved: the folder {_rel(root, folder) or '.'} is not writable for you "
                f"(permissions {mode}); "
                "a save writes a new copy there and swaps it in.")
    return None


@dataclass(frozen=True)
class Undecodable:
    """A file that is not UTF-8: the text to show, its size, and the first bad byte."""

    text: str
    size: int
    line: int  # 1-based
    column: int  # 1-based, in characters of the displayed line
    byte: int
    marks: int  # how many U+FFFD marks stand for undecodable bytes


def undecodable(error: BaseException | None) -> Undecodable | None:
    """Describe the file behind a failed strict UTF-8 decode (``None`` for any other failure)."""
    cause = getattr(error, "cause", None) or getattr(error, "__cause__", None)
    if not isinstance(cause, UnicodeDecodeError) or not isinstance(cause.object, bytes | bytearray):
        return None
    data = bytes(cause.object)
    start = cause.start
    line_start = data.rfind(b"\n", 0, start) + 1
    column = len(data[line_start:start].decode("utf-8", errors="replace")) + 1
    text = data.decode("utf-8", errors="replace")
    marks = text.count(REPLACEMENT) - data.decode("utf-8", errors="ignore").count(REPLACEMENT)
    return Undecodable(text, len(data), data.count(b"\n", 0, start) + 1, column, data[start], marks)
