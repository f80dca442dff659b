"""Safe file I/O for memory files: strict UTF-8 reads, atomic locked writes, size limit, root confinement.

Reads take regular files only and check the size before reading; paths are confined to the project
root by :mod:`core.storage.safepath`; locks come from :mod:`core.storage.locks`. Every write that replaces a file's content goes through :func:`replace_text`, which holds a lock,
refuses stale writes (``CONFLICT``), keeps the previous version in history and then swaps the new
content in atomically (temp file in the same folder, fsync, rename).
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

from core.errors import MemoryBackendError, PathOutsideRootError
from core.frozen import Record
from core.logs import get_logger
from core.storage.decoded import DecodedCache
from core.storage.locks import LOCK_TIMEOUT_S, MEMDESK_DIR, ensure_state_dir, file_lock, lock_path_for
from core.storage.safepath import (
    O_CLOEXEC,
    O_NOCTTY,
    O_NOFOLLOW,
    O_NONBLOCK,
    file_kind,
    os_reason,
    real_path_in_root,
    resolve_both_in_root,
    resolve_in_root,
)

log = get_logger(__name__)

MAX_FILE_SIZE = 1_048_576
#: Largest file memdesk reads: above the 1 MiB write limit, so an over-full memory still opens to be pruned.
MAX_READ_SIZE = 16 * MAX_FILE_SIZE

__all__ = [  # re-exported: callers use fileio.<name> for every file operation
    "LOCK_TIMEOUT_S", "MEMDESK_DIR", "ensure_state_dir", "file_kind", "file_lock", "lock_path_for",
    "real_path_in_root", "resolve_in_root",
]


def sha256_hex(data: bytes) -> str:
    """Return the SHA-256 hex digest of ``data``."""
    import hashlib  # here: loading OpenSSL costs an append (which hashes nothing) more than a MiB's hash

    return hashlib.sha256(data).hexdigest()


def content_hash(text: str) -> str:
    """Return the SHA-256 hex digest of ``text`` encoded as UTF-8."""
    return sha256_hex(text.encode("utf-8"))


def format_size(n: int) -> str:
    """Return a human size such as ``1.2 MiB`` or ``512 bytes``."""
    if n < 1024:
        return f"{n} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n / (1024 * 1024):.2f} MiB"


def decode_utf8(data: bytes, path: Path | str, backend_id: str = "file") -> str:
    """Decode ``data`` as UTF-8 or raise ``READ_FAILED`` naming the file and the bad byte offset."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MemoryBackendError(
            f"{path} is not valid UTF-8 (invalid byte 0x{data[exc.start]:02x} at byte offset {exc.start}); "
            "memdesk opens it read-only and will not rewrite it. Convert it to UTF-8 to edit it.",
            "READ_FAILED",
            backend_id,
            exc,
        ) from exc


def _too_big(path: Path | str, size: int, max_size: int, backend_id: str) -> MemoryBackendError:
    return MemoryBackendError(
        f"{path} is {size:,} bytes ({format_size(size)}); memdesk reads files of at most {max_size:,} bytes "
        f"({format_size(max_size)}). Move it aside or shorten it outside memdesk.", "READ_FAILED", backend_id)


def read_bytes(path: Path, backend_id: str = "file", *, max_size: int | None = None) -> bytes | None:
    """Read a regular file's bytes whole; ``None`` when it does not exist. Raises ``READ_FAILED`` otherwise.

    A FIFO, device, socket or folder is refused without blocking (``O_NONBLOCK``), and the size is
    checked with ``fstat`` before a byte is read, so neither a pipe nor ``/dev/zero`` nor a sparse
    file of gigabytes can hang or exhaust memory. ``max_size`` defaults to :data:`MAX_READ_SIZE`.
    """
    limit = MAX_READ_SIZE if max_size is None else max_size
    try:
        fd = os.open(path, os.O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):  # a parent that is a file: this file cannot exist
        return None
    except OSError as exc:
        raise MemoryBackendError(os_reason(path, exc, "read"), "READ_FAILED", backend_id, exc) from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise MemoryBackendError(f"{path} is {file_kind(st.st_mode)}, not a regular file; memdesk reads only "
                                     "regular files (replace it with one)", "READ_FAILED", backend_id)
        if st.st_size > limit:
            raise _too_big(path, st.st_size, limit, backend_id)
        chunks: list[bytes] = []
        total = 0
        # The first read asks for the size and a byte more (one buffer of the file's size: asking for 1 MiB to get
        # 0.9 took a fresh mapping per read, 227 page faults, 0.55 against 0.04 ms); then 1 MiB at a time.
        want = st.st_size + 1
        while total <= limit:  # the file may grow while it is read: never read past the limit
            chunk = os.read(fd, min(want, limit + 1 - total))
            want = 1 << 20
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise _too_big(path, total, limit, backend_id)
    except OSError as exc:
        raise MemoryBackendError(os_reason(path, exc, "read"), "READ_FAILED", backend_id, exc) from exc
    finally:
        os.close(fd)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def read_text(path: Path, backend_id: str = "file", *, max_size: int | None = None) -> str | None:
    """Read a regular UTF-8 file whole (see :func:`read_bytes`); ``None`` when it does not exist."""
    data = read_bytes(path, backend_id, max_size=max_size)
    if data is None:
        return None
    # Newlines are kept as they are on disk so that a save without an edit changes no byte. The same bytes
    # as at the last read are not decoded again (a large file's text is kept with its bytes: core.storage.decoded).
    return _decoded.text(str(path), data, lambda b: decode_utf8(b, path, backend_id))


_decoded = DecodedCache()


class _Written:
    """The bytes this process last wrote to a few files (with their SHA-256 once known).

    When a file still holds exactly those bytes (compared byte for byte, never by ``stat``) the
    next replacement knows they are valid UTF-8 (and their hash, when it was asked for), so it does
    not decode a MiB again; the hash history needs is then worked out on history's own thread.
    """

    KEEP = 4

    def __init__(self) -> None:
        self._items: dict[str, tuple[bytes, str | None]] = {}
        self._lock = threading.Lock()

    def same(self, path: Path, data: bytes) -> tuple[bool, str | None]:
        """Whether ``path`` last got exactly ``data`` from this process, and its hash when known."""
        with self._lock:
            known = self._items.get(str(path))
        if known is not None and known[0] == data:
            return True, known[1]
        return False, None

    def remember(self, path: Path, data: bytes, digest: str | None) -> None:
        with self._lock:
            self._items.pop(str(path), None)
            self._items[str(path)] = (data, digest)
            while len(self._items) > self.KEEP:
                self._items.pop(next(iter(self._items)))


_written = _Written()


def read_in_root(root: Path | str, relpath: str, backend_id: str = "file", *,
                 max_size: int | None = None) -> str | None:
    """Read ``relpath`` of the project: confined to ``root`` (no symlink escape), regular files only."""
    try:
        path = resolve_in_root(root, relpath)
    except PathOutsideRootError as exc:
        raise MemoryBackendError(str(exc), "READ_FAILED", backend_id, exc) from exc
    return read_text(path, backend_id, max_size=max_size)


def check_size(data: bytes, what: str, backend_id: str = "file", *, limit: int = MAX_FILE_SIZE,
               hint: str = "shorten or prune the memory first") -> None:
    """Raise ``QUOTA_EXCEEDED`` when ``data`` is over ``limit`` (1 MiB for memory), saying both sizes."""
    check_total_size(len(data), what, backend_id, limit=limit, hint=hint)


def check_total_size(size: int, what: str, backend_id: str = "file", *, limit: int = MAX_FILE_SIZE,
                     hint: str = "shorten or prune the memory first") -> None:
    """:func:`check_size` for a size already known (an append: the file's size plus the new bytes)."""
    if size > limit:
        raise MemoryBackendError(
            f"{what} would be {size:,} bytes ({format_size(size)}); the limit is "
            f"{limit:,} bytes ({format_size(limit)}). Nothing was written; {hint}.",
            "QUOTA_EXCEEDED",
            backend_id,
        )


def _ensure_folder(folder: Path) -> None:
    """Create ``folder`` (and its parents) unless it is one already.

    Looked at first: ``mkdir`` of a folder that exists takes its parent's lock, and waits there for a
    rename or sync in progress in that parent (history's, on its own thread), a quarter of a
    millisecond of a save.
    """
    if not folder.is_dir():
        folder.mkdir(parents=True, exist_ok=True)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _current_umask() -> int:
    """The process's umask, read without changing it (``/proc`` on Linux; elsewhere set and restored)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


def atomic_write_bytes(path: Path, data: bytes, before_rename: Callable[[], object] | None = None, *,
                       new_file_mode: int | None = None) -> None:
    """Write ``data`` to ``path`` atomically: temp file in the same folder, fsync, rename.

    The file keeps its mode; a new file gets ``new_file_mode`` less the umask (a file another program
    owns and reads, such as Fusion's ``config.json``), else ``0600`` (the temporary file's own).

    ``before_rename`` runs once the temp file is on disk and before it replaces ``path``; when it
    raises, the temp file goes and ``path`` is left as it was (a save waits there for its history).

    On any failure (a full disk part-way, a failed fsync or rename) the temp file is removed and
    ``path`` is byte-identical to what it was. ``path`` itself is replaced, never a link's target:
    callers that write through an in-root link pass the resolved target (see :func:`replace_text`).
    """
    _ensure_folder(path.parent)
    try:
        st = os.lstat(path)
        mode = st.st_mode & 0o777 if stat.S_ISREG(st.st_mode) else None
    except FileNotFoundError:
        mode = None
        if new_file_mode is not None:
            mode = new_file_mode & ~_current_umask()
    import tempfile  # here: it imports random and shutil, and an append never writes a temporary file

    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        if before_rename is not None:
            before_rename()
        _rename(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _rename(src: Path, dst: Path) -> None:
    # A seam for the crash test: a failure here must leave the original intact.
    os.replace(src, dst)


#: Starts keeping the previous bytes of a file (``root, relpath, bytes, source, author, digest,
#: backend_id``) and returns the wait the rename does first (it raises when they cannot be kept).
KeepPrevious = Callable[[Path, str, bytes, str, "str | None", "str | None", str], Callable[[], object]]


class ReplaceResult(Record):
    """What :func:`replace_text` did: the path, whether bytes changed, and the new content hash.

    The hash is worked out when first asked for (most callers never ask, and a MiB costs half a
    millisecond): give ``content_hash`` or the written ``data``. A frozen :class:`~core.frozen.Record`
    (``_data`` left out of the repr and of equality), not a dataclass: on every append process's path.
    """

    __slots__ = _fields = ("path", "changed", "_hash", "size", "_data")
    _hidden = _uncompared = ("_data",)
    path: Path
    changed: bool
    _hash: str | None
    size: int
    _data: bytes | None

    def __init__(self, path: Path, changed: bool, _hash: str | None, size: int, _data: bytes | None = None) -> None:
        self._set(path=path, changed=changed, _hash=_hash, size=size, _data=_data)

    @property
    def content_hash(self) -> str:
        """The SHA-256 hex digest of the file's new content."""
        if self._hash is None:
            self._set(_hash=sha256_hex(self._data or b""))
        return self._hash  # type: ignore[return-value]


def _confined_target(root: Path, relpath: str, backend_id: str) -> tuple[Path, Path]:
    """The logical path and the real target of ``relpath``, both inside ``root`` (``INVALID_CONFIG``)."""
    try:
        return resolve_both_in_root(root, relpath)  # checked inside the root: its real path is the target
    except PathOutsideRootError as exc:
        raise MemoryBackendError(str(exc), "INVALID_CONFIG", backend_id, exc) from exc


def check_writable(root: Path | str, relpath: str, backend_id: str = "file") -> Path:
    """Refuse (``INVALID_CONFIG``/``WRITE_FAILED``) what :func:`replace_text` would refuse for the path
    itself, without writing: outside the root, not a regular file, hard-linked. Returns the target."""
    _logical, target = _confined_target(Path(root), relpath, backend_id)
    _check_writable_target(target, relpath, backend_id)
    return target


class TargetRefused(MemoryBackendError):
    """A document to write that is not a regular file or has other hard links: the file's state is refused
    (bad input, like a link out; exit 2, HTTP 409), not a failure of the system. Nothing was changed."""


def _check_writable_target(target: Path, relpath: str, backend_id: str) -> None:
    """Refuse a target that is not a regular file or that has other hard links (``WRITE_FAILED``)."""
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(st.st_mode):
        raise TargetRefused(f"{relpath} is {file_kind(st.st_mode)}, not a regular file; memdesk writes only "
                                 "regular files (replace it with one)", "WRITE_FAILED", backend_id)
    if st.st_nlink > 1:
        raise TargetRefused(
            f"{relpath} has {st.st_nlink - 1} other hard link(s), so writing it would change another file too; "
            f"give it its own copy first (cp {relpath} {relpath}.new && mv {relpath}.new {relpath})",
            "WRITE_FAILED", backend_id)


def replace_text(
    root: Path | str,
    relpath: str,
    content: str,
    *,
    expected_hash: str | None = None,
    source: str = "write",
    backend_id: str = "file",
    keep_history: bool = True,
    keep_previous: KeepPrevious | None = None,
    author: str | None = None,
    max_size: int = MAX_FILE_SIZE,
    size_hint: str = "shorten or prune the memory first",
    new_file_mode: int | None = None,
    held: tuple[Path, bytes | None] | None = None,
    data: bytes | None = None,
) -> ReplaceResult:
    """Replace ``relpath`` with ``content`` safely; the one write path for whole-file replacements.

    ``expected_hash`` is the :func:`content_hash` of the text the caller started from (hash of
    ``""`` for a file that did not exist); when the file changed since, ``CONFLICT`` is raised and
    nothing is written. The previous version is kept through ``keep_previous`` (given by
    :func:`core.storage.saving.replace_text`, which sits above the history). ``keep_history=False`` is for files memdesk generates itself (audit
    reports, schedule state), whose old versions are not worth keeping. ``max_size`` is the size
    limit (files that are not memory, such as proposals, have their own). A symlink that stays
    inside the root is written through (the link stays a link); a target outside the root, one
    that is not a regular file or one with other hard links is refused and nothing is created.
    """
    if not isinstance(content, str):
        raise MemoryBackendError(
            f"content must be a string, not {type(content).__name__}", "WRITE_FAILED", backend_id
        )
    if keep_history and keep_previous is None:
        raise TypeError("fileio.replace_text keeps no history by itself: call core.storage.saving.replace_text, "
                        "or pass keep_history=False for a file memdesk generates")
    root_p = Path(root)
    # ``held``: the write pipeline resolved and checked the target, holds the lock and read it (core.storage.pipeline):
    # nothing is resolved, checked or read a second time.
    target = held[0] if held is not None else _confined_target(root_p, relpath, backend_id)[1]
    try:  # ``data``: the caller's UTF-8 of ``content`` (the pipeline encoded it once already)
        data = content.encode("utf-8") if data is None else data
    except UnicodeEncodeError as exc:
        raise MemoryBackendError(f"the new text for {relpath} holds a character that is not valid UTF-8 (position "
                                 f"{exc.start}); nothing was written", "WRITE_FAILED", backend_id, exc) from exc
    check_size(data, relpath, backend_id, limit=max_size, hint=size_hint)
    if held is None:
        _check_writable_target(target, relpath, backend_id)  # before the lock: a refusal creates nothing
    try:
        # ``held``: the pipeline holds the document's lock already; taking it again would resolve the lock folder
        # again for nothing (issue 19: one lock per operation).
        with file_lock(root_p, relpath, backend_id) if held is None else nullcontext():
            if held is None:
                _check_writable_target(target, relpath, backend_id)
                raw = read_bytes(target, backend_id, max_size=max(max_size, MAX_READ_SIZE))
            else:
                raw = held[1]
            known, digest = _written.same(target, raw) if raw is not None else (False, None)
            if raw is not None and not known:
                decode_utf8(raw, target, backend_id)  # READ_FAILED on a non-UTF-8 file: never rewritten
            if expected_hash is not None:
                digest = digest or sha256_hex(raw or b"")
                if digest != expected_hash:
                    raise MemoryBackendError(
                        f"{relpath} changed on disk since it was loaded; reload or merge before saving",
                        "CONFLICT",
                        backend_id,
                    )
            if raw == data:
                return ReplaceResult(target, False, digest, len(data), data)
            wait_for_history = None
            new_digest: list[str] = []
            if raw and keep_history:
                assert keep_previous is not None  # checked on entry
                keep_wait = keep_previous(root_p, relpath, raw, source, author, digest, backend_id)

                def wait_for_history() -> object:
                    # While history commits on its thread, hash the new bytes (hashlib lets go of the
                    # GIL): the next save then hands history the hash instead of history working it out
                    # on the path the rename waits for.
                    new_digest.append(sha256_hex(data))
                    return keep_wait()
            atomic_write_bytes(target, data, wait_for_history, new_file_mode=new_file_mode)
            _written.remember(target, data, new_digest[0] if new_digest else None)
    except MemoryBackendError:
        raise
    except TimeoutError as exc:
        raise MemoryBackendError(
            f"{relpath} is locked by another writer (waited {LOCK_TIMEOUT_S:.0f} s); try again",
            "WRITE_FAILED",
            backend_id,
            exc,
        ) from exc
    except OSError as exc:
        raise MemoryBackendError(os_reason(relpath, exc, "write"), "WRITE_FAILED", backend_id, exc) from exc
    return ReplaceResult(target, True, new_digest[0] if new_digest else None, len(data), data)


# -- appends ----------------------------------------------------------------------------------------

def open_regular_for_append(root: Path | str, relpath: str, *, create: bool = True,
                            backend_id: str = "file", readable: bool = False) -> int:
    """Open ``relpath`` for appending and return the descriptor; the caller closes it.

    Checks, refusing with one line (``INVALID_CONFIG`` / ``WRITE_FAILED``) and creating nothing:
    the path stays inside the root (an in-root symlink is resolved first and appended through),
    the last component is opened with ``O_NOFOLLOW`` (no link swapped in meanwhile), and the file is
    a regular file with no other hard link. ``O_APPEND`` keeps writers that do not take memdesk's
    lock (Fusion's own agents) from being overwritten. Record ``os.fstat(fd).st_size`` before
    writing and call :func:`rollback_append` when a write fails, so the file stays byte-identical.
    ``readable``: open it for reading too (a mirror reads back what landed before its append).
    """
    _logical, target = _confined_target(Path(root), relpath, backend_id)
    _check_writable_target(target, relpath, backend_id)
    flags = (os.O_RDWR if readable else os.O_WRONLY) | os.O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY
    if create:
        _ensure_folder(target.parent)
        flags |= os.O_CREAT
    try:
        fd = os.open(target, flags, 0o644)
    except OSError as exc:
        raise MemoryBackendError(os_reason(relpath, exc, "append to"), "WRITE_FAILED", backend_id, exc) from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
            _check_writable_target(target, relpath, backend_id)  # raises with the reason
            raise MemoryBackendError(f"{relpath} changed while it was opened; try again", "WRITE_FAILED", backend_id)
    except BaseException:
        os.close(fd)
        raise
    return fd


def overwrite_in_place(target: Path, data: bytes, *, truncate: bool = False, max_size: int | None = None,
                       sync: bool = False) -> bool:
    """Write ``data`` at the start of ``target`` in place (no rename: microseconds, where a replace costs two
    journalled changes of the folder); ``truncate`` cuts what lay past it; ``sync``: ``fdatasync`` before
    returning (one data block, against a replace's file and folder fsyncs). Only a regular file with no other
    link, opened with ``O_NOFOLLOW``, and (with ``max_size``) not bigger than that; ``False`` when ``target`` is
    anything else or missing (the caller then replaces it). A cut write leaves a note that does not parse."""
    try:
        fd = os.open(target, os.O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or (max_size is not None and st.st_size > max_size):
            return False
        if os.pwrite(fd, data, 0) != len(data):
            return False
        if truncate and st.st_size > len(data):
            os.ftruncate(fd, len(data))
        if sync:
            os.fdatasync(fd)
        return True
    finally:
        os.close(fd)


def remove_file(target: Path) -> bool:
    """Remove the name ``target`` (a link's target is never touched); ``False`` when it was not there."""
    try:
        os.unlink(target)
    except FileNotFoundError:
        return False
    return True


class AppendFailed(Exception):
    """A write or the fsync of an append failed: ``error`` is its OSError, ``written`` the bytes it put down."""

    def __init__(self, error: OSError, written: int) -> None:
        super().__init__(str(error))
        self.error, self.written = error, written


def write_all(fd: int, data: bytes, write: Callable[[int, memoryview], int] | None = None) -> None:
    """Write all of ``data`` at ``fd`` (looping over short writes) and fsync; :class:`AppendFailed` on an
    OSError, so the caller can :func:`rollback_append` the ``written`` bytes. ``write`` defaults to ``os.write``."""
    written = 0
    try:
        view = memoryview(data)
        while view:
            n = (write or os.write)(fd, view)
            written += n
            view = view[n:]
        os.fsync(fd)
    except OSError as exc:
        raise AppendFailed(exc, written) from exc


def rollback_append(fd: int, original_size: int, written: int | None = None) -> bool:
    """Cut the file open on ``fd`` back to ``original_size`` bytes after a failed append, and fsync.

    With ``written`` (the bytes this append wrote), the file is cut only when it holds exactly those
    past ``original_size``, so bytes an unlocked writer appended meanwhile are never cut. Returns
    whether the file was cut.
    """
    if written is not None and os.fstat(fd).st_size != original_size + written:
        return False
    os.ftruncate(fd, original_size)
    os.fsync(fd)
    return True


def append_bytes(root: Path | str, relpath: str, data: bytes, *, backend_id: str = "file") -> Path:
    """Append ``data`` to ``relpath`` (created when missing) under its lock: all of it, or nothing.

    A write that fails part-way (a full disk) is rolled back with :func:`rollback_append`, so the
    file is byte-identical to what it was. Returns the real path appended to.
    """
    _logical, target = _confined_target(Path(root), relpath, backend_id)
    _check_writable_target(target, relpath, backend_id)  # before the lock: a refusal creates nothing
    with file_lock(root, relpath, backend_id):
        fd = open_regular_for_append(root, relpath, backend_id=backend_id)
        try:
            original = os.fstat(fd).st_size
            try:
                write_all(fd, data)
            except AppendFailed as failed:
                exc = failed.error
                try:
                    rollback_append(fd, original, failed.written)
                except OSError as again:
                    log.error("could not roll back a failed append to %s: %s", relpath, again)
                raise MemoryBackendError(os_reason(relpath, exc, "append to") + "; nothing was appended",
                                         "WRITE_FAILED", backend_id, exc) from exc
        finally:
            os.close(fd)
    return target
