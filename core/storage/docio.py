"""Reading, replacing and appending one project document as a file: the file side of every backend.

Backends that keep a document as a plain file (and the default per-document methods of
:class:`~core.backends.base.MemoryBackend`) come here. Reads are strict UTF-8 and whole; a
replacement is atomic, locked and keeps the previous version in history; an append holds the
document's lock, re-reads, asks the caller what to add, and writes it with ``O_APPEND`` so writers
that do not take memdesk's lock (Fusion's own agents) are never overwritten. A failed append is
rolled back to the original length, so the file stays byte-identical.

Everything inside a project is untrusted (design §6): a document is read only when it is a regular
file of a sane size (a FIFO, a device, a folder or a sparse giant is refused before it is opened),
an append refuses a file with other hard links (it would change that other file too), and nothing
is written while ``.fusion/memdesk`` (locks, history) leads out of the root.
"""

from __future__ import annotations

import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from core.errors import MemoryBackendError, PathOutsideRootError
from core.storage import fileio

#: Largest document memdesk reads: above the 1 MiB write limit, so an over-full memory still opens to be pruned.
MAX_READ_SIZE = getattr(fileio, "MAX_READ_SIZE", 16 * fileio.MAX_FILE_SIZE)
STATE_DIR = ".fusion/memdesk"


def _resolve(root: Path | str, relpath: str, backend_id: str) -> Path:
    try:
        return fileio.resolve_in_root(root, relpath)
    except PathOutsideRootError as exc:
        raise MemoryBackendError(str(exc), "INVALID_CONFIG", backend_id, exc) from exc
    except (RuntimeError, OSError) as exc:  # Python 3.11 raises RuntimeError on a symlink loop
        raise MemoryBackendError(f"{relpath} is a symbolic link loop (or cannot be resolved); replace it with a "
                                 "regular file", "INVALID_CONFIG", backend_id, exc) from exc


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


@contextmanager
def document_lock(root: Path | str, relpath: str, backend_id: str = "file") -> Iterator[None]:
    """Hold the inter-process lock for read-modify-write of ``relpath``.

    Refused with one line (``INVALID_CONFIG`` / ``WRITE_FAILED``), never a raw ``OSError``, when the
    lock folder leaves the root, is a file, or the lock file is a folder, or when another writer
    holds the lock too long.
    """
    try:  # the lock folder is confined to the root (INVALID_CONFIG) before anything is made
        lock = fileio.file_lock(root, relpath, backend_id)
        lock.acquire()
    except TimeoutError as exc:
        raise MemoryBackendError(f"{relpath} is locked by another writer; try again", "WRITE_FAILED",
                                 backend_id, exc) from exc
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        raise MemoryBackendError(f"cannot lock {relpath}: {exc.strerror or exc}{where}; memdesk keeps its locks "
                                 f"in {STATE_DIR}/locks (remove what is in the way)", "WRITE_FAILED",
                                 backend_id, exc) from exc
    try:
        yield
    finally:
        lock.release()


def _check_readable(path: Path, relpath: str, backend_id: str, code: str = "READ_FAILED") -> bool:
    """Whether ``path`` exists; ``code`` unless it is a regular file of at most :data:`MAX_READ_SIZE`.

    Checked before the file is opened, so a FIFO cannot block and ``/dev/zero`` or a sparse file
    of gigabytes cannot exhaust memory (``core.storage.fileio`` checks the open file again).
    """
    try:
        st = path.stat()
    except FileNotFoundError:
        return False
    except NotADirectoryError as exc:
        raise MemoryBackendError(not_a_folder(path, relpath), code, backend_id, exc) from exc
    except OSError as exc:
        raise MemoryBackendError(f"cannot read {relpath}: {exc.strerror or exc}", code, backend_id, exc) from exc
    if not stat.S_ISREG(st.st_mode):
        raise MemoryBackendError(f"{relpath} is {_kind(st.st_mode)}, not a regular file; memdesk reads and "
                                 "writes only regular files (replace it with one)", code, backend_id)
    if st.st_size > MAX_READ_SIZE:
        raise MemoryBackendError(
            f"{relpath} is {st.st_size:,} bytes ({fileio.format_size(st.st_size)}); memdesk reads documents "
            f"of at most {MAX_READ_SIZE:,} bytes. Move it aside or shorten it outside memdesk", code, backend_id)
    return True


def not_a_folder(path: Path, relpath: str) -> str:
    """Name the part of ``relpath`` that is a file where a folder belongs (``.fusion`` itself, say)."""
    parts = Path(relpath).parts
    root = path.parents[len(parts) - 1]
    for depth in range(1, len(parts)):
        part = Path(*parts[:depth])
        if (root / part).exists() and not (root / part).is_dir():
            return (f"{part.as_posix()} is not a folder (a file stands where memdesk expects one, on the way to "
                    f"{relpath}); move that file aside")
    return f"a part of {relpath} is not a folder; move the file that stands in its place aside"


def read_document(root: Path | str, relpath: str, backend_id: str = "file") -> str | None:
    """Read a document whole; ``None`` when absent. Raises ``READ_FAILED`` / ``INVALID_CONFIG``."""
    path = _resolve(root, relpath, backend_id)
    if not _check_readable(path, relpath, backend_id):
        return None
    return fileio.read_text(path, backend_id)


def read_raw(root: Path | str, relpath: str, backend_id: str = "file") -> bytes | None:
    """A document's bytes, read as :func:`read_document` reads it but not decoded; ``None`` when absent.

    For a replacement, which decodes (checks) what it replaces itself, under the document's lock.
    """
    path = _resolve(root, relpath, backend_id)
    if not _check_readable(path, relpath, backend_id):
        return None
    return fileio.read_bytes(path, backend_id)


def replace_document(root: Path | str, relpath: str, content: str, *, expected_hash: str | None = None,
                     source: str = "write", author: str | None = None, backend_id: str = "file") -> bool:
    """Replace a document atomically (history first); True when bytes changed."""
    # A FIFO would block the re-read under the lock; a folder cannot be replaced. (The state folder is
    # confined by the lock, before anything is made.)
    _check_readable(_resolve(root, relpath, backend_id), relpath, backend_id, "WRITE_FAILED")
    from core.storage import saving  # here: saving brings the history's versions, which an append never needs

    result = saving.replace_text(root, relpath, content, expected_hash=expected_hash, source=source,
                                 backend_id=backend_id, author=author)
    return result.changed


def append_document(root: Path | str, relpath: str, build: Callable[[str], str | None], *,
                    backend_id: str = "file") -> str | None:
    """Under the document's lock: read it, ``build(current)``, append the result; return what was added.

    The size limit is checked before any byte is written; a failed write is truncated back.
    """
    path = _resolve(root, relpath, backend_id)
    _check_appendable(path, relpath, backend_id)  # before the lock: a refusal creates nothing
    with document_lock(root, relpath, backend_id):
        current = read_document(root, relpath, backend_id)
        extra = build(current or "")
        if not extra:
            return None
        if current is None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)  # an agent's first note: its folder
            except OSError as exc:
                raise MemoryBackendError(f"cannot create the folder of {relpath}: {exc.strerror or exc}",
                                         "WRITE_FAILED", backend_id, exc) from exc
        data = extra.encode("utf-8")
        fileio.check_total_size(_size(path) + len(data), relpath, backend_id)
        fileio.append_bytes(root, relpath, data, backend_id=backend_id)  # all of it, or nothing
        return extra


def _check_appendable(path: Path, relpath: str, backend_id: str) -> None:
    """Refuse (``WRITE_FAILED``) a file an append would change elsewhere too: one with other hard links."""
    if _check_readable(path, relpath, backend_id, "WRITE_FAILED") and path.stat().st_nlink > 1:
        raise MemoryBackendError(
            f"{relpath} has other hard links, so appending to it would change another file too (perhaps one "
            f"outside the project); nothing was written. Give it its own copy first (cp {relpath} {relpath}.new "
            f"&& mv {relpath}.new {relpath})", "WRITE_FAILED", backend_id)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0
