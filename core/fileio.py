"""Safe file I/O for memory files: strict UTF-8 reads, atomic locked writes, size limit, root confinement.

Every write that replaces a file's content goes through :func:`replace_text`, which holds a lock,
refuses stale writes (``CONFLICT``), keeps the previous version in history and then swaps the new
content in atomically (temp file in the same folder, fsync, rename).
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import MemoryBackendError, PathOutsideRootError

if TYPE_CHECKING:
    from filelock import FileLock

log = logging.getLogger(__name__)

MAX_FILE_SIZE = 1_048_576
MEMDESK_DIR = ".fusion/memdesk"
LOCK_TIMEOUT_S = 30.0

def content_hash(text: str) -> str:
    """Return the SHA-256 hex digest of ``text`` encoded as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def format_size(n: int) -> str:
    """Return a human size such as ``1.2 MiB`` or ``512 bytes``."""
    if n < 1024:
        return f"{n} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n / (1024 * 1024):.2f} MiB"


def resolve_in_root(root: str | os.PathLike[str], relpath: str | os.PathLike[str]) -> Path:
    """Resolve ``relpath`` under ``root``; refuse absolute paths, ``..`` and symlink escapes."""
    rel = Path(relpath)
    if rel.is_absolute() or rel.drive:
        raise PathOutsideRootError(f"path {str(relpath)!r} is absolute; give a path relative to the project root")
    if any(part == ".." for part in rel.parts):
        raise PathOutsideRootError(f"path {str(relpath)!r} contains '..'; it must stay inside the project root")
    root_real = Path(root).resolve()
    candidate = (root_real / rel).resolve()
    if candidate != root_real and root_real not in candidate.parents:
        raise PathOutsideRootError(f"path {str(relpath)!r} leaves the project root through a symlink")
    return root_real / rel


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


def read_bytes(path: Path, backend_id: str = "file") -> bytes | None:
    """Read a file's bytes whole; ``None`` when it does not exist. Raises ``READ_FAILED`` otherwise."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError as exc:
        raise MemoryBackendError(f"{path} is a folder, not a file", "READ_FAILED", backend_id, exc) from exc
    except OSError as exc:
        raise MemoryBackendError(f"cannot read {path}: {exc.strerror or exc}", "READ_FAILED", backend_id, exc) from exc


def read_text(path: Path, backend_id: str = "file") -> str | None:
    """Read a UTF-8 file whole; ``None`` when it does not exist. Raises ``READ_FAILED`` otherwise."""
    data = read_bytes(path, backend_id)
    # Newlines are kept as they are on disk so that a save without an edit changes no byte.
    return None if data is None else decode_utf8(data, path, backend_id)


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


def lock_path_for(root: Path, relpath: str) -> Path:
    """Return the lock file guarding ``relpath`` (kept under ``.fusion/memdesk/locks``)."""
    name = relpath.replace("\\", "/").strip("/").replace("/", "__")
    return Path(root) / MEMDESK_DIR / "locks" / f"{name}.lock"


_locks: dict[str, FileLock] = {}


def file_lock(root: Path | str, relpath: str) -> FileLock:
    """Return the inter-process lock for read-modify-write of ``relpath`` under ``root``.

    One instance per lock file, so a thread that already holds it can take it again (reentrant).
    """
    from filelock import FileLock  # here, not at the top: read-only commands never take a lock

    lp = lock_path_for(Path(root).resolve(), relpath)
    lp.parent.mkdir(parents=True, exist_ok=True)
    key = str(lp)
    lock = _locks.get(key)
    if lock is None:
        lock = _locks.setdefault(key, FileLock(key, timeout=LOCK_TIMEOUT_S))
    return lock


def check_size(data: bytes, what: str, backend_id: str = "file") -> None:
    """Raise ``QUOTA_EXCEEDED`` when ``data`` is over :data:`MAX_FILE_SIZE`, saying both sizes."""
    if len(data) > MAX_FILE_SIZE:
        raise MemoryBackendError(
            f"{what} would be {len(data):,} bytes ({format_size(len(data))}); the limit is "
            f"{MAX_FILE_SIZE:,} bytes (1 MiB). Nothing was written; shorten or prune the memory first.",
            "QUOTA_EXCEEDED",
            backend_id,
        )


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


def atomic_write_bytes(path: Path, data: bytes, before_rename: Callable[[], object] | None = None) -> None:
    """Write ``data`` to ``path`` atomically: temp file in the same folder, fsync, rename.

    ``before_rename`` runs once the temp file is on disk and before it replaces ``path``; when it
    raises, the temp file goes and ``path`` is left as it was (a save waits there for its history).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = None
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


@dataclass(frozen=True)
class ReplaceResult:
    """What :func:`replace_text` did: the path, whether bytes changed, and the new content hash.

    The hash is worked out when first asked for (most callers never ask, and a MiB costs half a
    millisecond): give ``content_hash`` or the written ``data``.
    """

    path: Path
    changed: bool
    _hash: str | None
    size: int
    _data: bytes | None = field(default=None, repr=False, compare=False)

    @property
    def content_hash(self) -> str:
        """The SHA-256 hex digest of the file's new content."""
        if self._hash is None:
            object.__setattr__(self, "_hash", hashlib.sha256(self._data or b"").hexdigest())
        return self._hash  # type: ignore[return-value]


def replace_text(
    root: Path | str,
    relpath: str,
    content: str,
    *,
    expected_hash: str | None = None,
    source: str = "write",
    backend_id: str = "file",
    keep_history: bool = True,
    author: str | None = None,
) -> ReplaceResult:
    """Replace ``relpath`` with ``content`` safely; the one write path for whole-file replacements.

    ``expected_hash`` is the :func:`content_hash` of the text the caller started from (hash of
    ``""`` for a file that did not exist); when the file changed since, ``CONFLICT`` is raised and
    nothing is written. ``keep_history=False`` is for files memdesk generates itself (audit
    reports, schedule state), whose old versions are not worth keeping. ``author`` (who made the
    change) is stored with the version kept in history.
    """
    if not isinstance(content, str):
        raise MemoryBackendError(
            f"content must be a string, not {type(content).__name__}", "WRITE_FAILED", backend_id
        )
    root_p = Path(root)
    try:
        path = resolve_in_root(root_p, relpath)
    except PathOutsideRootError as exc:
        raise MemoryBackendError(str(exc), "INVALID_CONFIG", backend_id, exc) from exc
    data = content.encode("utf-8")
    check_size(data, relpath, backend_id)
    try:
        with file_lock(root_p, relpath):
            raw = read_bytes(path, backend_id)
            known, digest = _written.same(path, raw) if raw is not None else (False, None)
            if raw is not None and not known:
                decode_utf8(raw, path, backend_id)  # READ_FAILED on a non-UTF-8 file: never rewritten
            if expected_hash is not None:
                digest = digest or hashlib.sha256(raw or b"").hexdigest()
                if digest != expected_hash:
                    raise MemoryBackendError(
                        f"{relpath} changed on disk since it was loaded; reload or merge before saving",
                        "CONFLICT",
                        backend_id,
                    )
            if raw == data:
                return ReplaceResult(path, False, digest, len(data), data)
            pending = None
            if raw and keep_history:
                from core import history  # late import: history imports this module

                # Recorded on history's worker thread while the new bytes go to disk; the rename
                # waits for it, so the previous version is in history before it is replaced.
                pending = history.record_version_soon(root_p, relpath, raw, source, author=author, digest=digest)
            atomic_write_bytes(path, data, pending.result if pending is not None else None)
            _written.remember(path, data, None)
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
        raise MemoryBackendError(
            f"cannot write {relpath}: {exc.strerror or exc}", "WRITE_FAILED", backend_id, exc
        ) from exc
    return ReplaceResult(path, True, None, len(data), data)
