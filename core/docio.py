"""Reading, replacing and appending one project document as a file: the file side of every backend.

Backends that keep a document as a plain file (and the default per-document methods of
:class:`~core.backends.base.MemoryBackend`) come here. Reads are strict UTF-8 and whole; a
replacement is atomic, locked and keeps the previous version in history; an append holds the
document's lock, re-reads, asks the caller what to add, and writes it with ``O_APPEND`` so writers
that do not take memdesk's lock (Fusion's own agents) are never overwritten. A failed append is
rolled back to the original length, so the file stays byte-identical.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from filelock import BaseFileLock

from core import fileio
from core.errors import MemoryBackendError, PathOutsideRootError


def _resolve(root: Path | str, relpath: str, backend_id: str) -> Path:
    try:
        return fileio.resolve_in_root(root, relpath)
    except PathOutsideRootError as exc:
        raise MemoryBackendError(str(exc), "INVALID_CONFIG", backend_id, exc) from exc


def document_lock(root: Path | str, relpath: str) -> BaseFileLock:
    """The inter-process lock for read-modify-write of ``relpath``."""
    return fileio.file_lock(root, relpath)


def read_document(root: Path | str, relpath: str, backend_id: str = "file") -> str | None:
    """Read a document whole; ``None`` when absent. Raises ``READ_FAILED`` / ``INVALID_CONFIG``."""
    return fileio.read_text(_resolve(root, relpath, backend_id), backend_id)


def replace_document(root: Path | str, relpath: str, content: str, *, expected_hash: str | None = None,
                     source: str = "write", author: str | None = None, backend_id: str = "file") -> bool:
    """Replace a document atomically (history first); True when bytes changed."""
    kwargs = {"author": author} if author is not None and _replace_takes_author() else {}
    result = fileio.replace_text(root, relpath, content, expected_hash=expected_hash, source=source,
                                 backend_id=backend_id, **kwargs)
    return result.changed


def _replace_takes_author() -> bool:
    import inspect

    return "author" in inspect.signature(fileio.replace_text).parameters


def append_document(root: Path | str, relpath: str, build: Callable[[str], str | None], *,
                    backend_id: str = "file") -> str | None:
    """Under the document's lock: read it, ``build(current)``, append the result; return what was added.

    The size limit is checked before any byte is written; a failed write is truncated back.
    """
    path = _resolve(root, relpath, backend_id)
    try:
        with fileio.file_lock(root, relpath):
            current = fileio.read_text(path, backend_id)
            extra = build(current or "")
            if extra and current is None:
                path.parent.mkdir(parents=True, exist_ok=True)  # an agent's first note: its folder
            if not extra:
                return None
            data = extra.encode("utf-8")
            _check_total(_size(path) + len(data), relpath, backend_id)
            append_bytes(path, data, backend_id)
            return extra
    except TimeoutError as exc:
        raise MemoryBackendError(f"{relpath} is locked by another writer; try again", "WRITE_FAILED",
                                 backend_id, exc) from exc


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _check_total(total: int, relpath: str, backend_id: str) -> None:
    if total > fileio.MAX_FILE_SIZE:
        raise MemoryBackendError(
            f"{relpath} would be {total:,} bytes ({fileio.format_size(total)}); the limit is "
            f"{fileio.MAX_FILE_SIZE:,} bytes (1 MiB). Nothing was written; shorten or prune the memory first.",
            "QUOTA_EXCEEDED", backend_id)


def append_bytes(path: Path, data: bytes, backend_id: str = "file") -> None:
    """Append ``data`` with ``O_APPEND`` and fsync; on failure truncate back so the file is unchanged.

    The truncation only happens when the file holds exactly what this call wrote past its start, so
    an unlocked writer's bytes that landed meanwhile are never cut.
    """
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
    if not path.is_symlink():  # an in-root link (checked by resolve_in_root) is written through
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        raise MemoryBackendError(f"cannot append to {path}: {exc.strerror or exc}", "WRITE_FAILED",
                                 backend_id, exc) from exc
    written = 0
    try:
        start = os.fstat(fd).st_size
        try:
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                written += n
                view = view[n:]
            os.fsync(fd)
        except OSError as exc:
            _roll_back(fd, start, written)
            raise MemoryBackendError(
                f"cannot append to {path}: {exc.strerror or exc}; the file was left as it was",
                "WRITE_FAILED", backend_id, exc) from exc
    finally:
        os.close(fd)


def _roll_back(fd: int, start: int, written: int) -> None:
    try:
        if os.fstat(fd).st_size == start + written:
            os.ftruncate(fd, start)
            os.fsync(fd)
    except OSError:
        pass
