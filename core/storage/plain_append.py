"""An append to a plain file document at O(entry): opened once, read once (usually from memory), written once.

:func:`core.storage.pipeline.append` resolves and checks the path once (stage "where") and takes the
document's lock once; this module then does the rest on one descriptor opened ``O_RDWR | O_APPEND
| O_NOFOLLOW`` on that resolved target (issue 19, item 4: no second resolution, read or lock):

* **read**: the text this process last read or wrote is kept per file with the file's identity
  (device, inode, size, ``mtime_ns``, ``ctime_ns``) and its last bytes. When ``fstat`` of the open
  file shows the same identity and a ``pread`` of the last bytes matches, the kept text is the
  file's text and nothing else is read: a 1 MiB memory is not read and decoded again on each
  append. Any write by another program (an agent's ``>>``, an editor's save, a rename over the
  file, ``touch``) changes the ctime, which user programs cannot set, so the file is read whole
  again and every guard (seed 002's duplicate check, the firewall's screen) sees what is on disk.
  The one change this cannot see is an in-place rewrite of the same size, in the same clock tick
  as memdesk's own write, that leaves the last bytes alone.
* **write**: the bytes go on with ``O_APPEND`` (writers that do not take memdesk's lock are never
  overwritten) and ``fsync``; a write that fails part-way is cut back (:func:`core.storage.fileio.rollback_append`).

Anything unusual (the file is missing, not a regular file, hard-linked, too big) returns
:data:`FALLBACK` before anything is written, and the caller takes the general path, which creates
the file or refuses with its one-line reason.
"""

from __future__ import annotations

import os
import stat
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from core.documents.grown import joined
from core.errors import MemoryBackendError
from core.storage import fileio
from core.storage.safepath import O_CLOEXEC, O_NOCTTY, O_NOFOLLOW, O_NONBLOCK

#: Returned when this path does not apply (the caller appends through the general file layer).
FALLBACK = object()
_TAIL = 256  # bytes of the end compared on a hit (an edit at the end that keeps size and times is caught)
_KEEP = 8  # documents whose text is kept (a MiB each at most)


# The functional form (UP014 asks for the class form): real types, not the strings typing compiles one
# by one for the class form under `from __future__ import annotations` (issue 19 item 7).
_Known = NamedTuple("_Known", [  # noqa: UP014
    ("dev", int),
    ("ino", int),
    ("size", int),
    ("mtime_ns", int),
    ("ctime_ns", int),
    ("tail", bytes),
    ("text", str),
])


_known: OrderedDict[str, _Known] = OrderedDict()
_guard = threading.Lock()


def _identity(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _remember(key: str, st: os.stat_result, tail: bytes, text: str) -> None:
    with _guard:
        _known.pop(key, None)
        _known[key] = _Known(*_identity(st), tail, text)
        while len(_known) > _KEEP:
            _known.popitem(last=False)


def forget(target: Path | str | None = None) -> None:
    """Drop the kept text of ``target`` (every file's with ``None``)."""
    with _guard:
        if target is None:
            _known.clear()
        else:
            _known.pop(str(target), None)


def kept_text(target: Path | str, added: str, size: int) -> str | None:
    """The text kept for ``target`` when it is ``size`` characters long and ends with ``added``, else ``None``.

    Asked under the document's lock right after :func:`append` added ``added``: the kept text is then the
    document as written (``current + extra``), so the caller need not join a MiB's copy of it again.
    """
    with _guard:
        known = _known.get(str(target))
    if known is None or len(known.text) != size or not known.text.endswith(added):
        return None
    return known.text


def _pread_all(fd: int, size: int, offset: int = 0) -> bytes:
    chunks: list[bytes] = []
    got = 0
    while got < size:
        chunk = os.pread(fd, min(1 << 20, size - got), offset + got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _tail(fd: int, size: int) -> bytes:
    n = min(_TAIL, size)
    return _pread_all(fd, n, size - n)


def _current(fd: int, st: os.stat_result, key: str, rel: str, backend_id: str) -> str:
    """The text of the open file: the kept one when the file is unchanged since, else read and decoded whole."""
    with _guard:
        known = _known.get(key)
    if known is not None and known[:5] == _identity(st) and _tail(fd, st.st_size) == known.tail:
        return known.text
    data = _pread_all(fd, st.st_size)
    if len(data) != st.st_size:  # cut while it was read: read it as the general path would
        raise MemoryBackendError(f"{rel} changed while it was read; try again", "READ_FAILED", backend_id)
    return fileio.decode_utf8(data, rel, backend_id)


def append(target: Path, rel: str, build: Callable[[str], str | None], *, backend_id: str = "file",
           max_read: int) -> object:
    """Under the document's lock (the caller's): read ``target``, ``build(current)``, append the result.

    ``target`` is the real path the caller resolved and checked inside the project. Returns what was
    appended (``None``: nothing to add) or :data:`FALLBACK` when the general path must do it.
    """
    flags = os.O_RDWR | os.O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY
    try:
        fd = os.open(target, flags)
    except OSError:
        return FALLBACK  # missing, a link swapped in, a folder...: the general path creates or refuses
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or st.st_size > max_read:
            return FALLBACK
        key = str(target)
        try:
            current = _current(fd, st, key, rel, backend_id)
        except OSError as exc:
            raise MemoryBackendError(fileio.os_reason(rel, exc, "read"), "READ_FAILED", backend_id, exc) from exc
        extra = build(current)
        if not extra:
            _remember(key, st, _tail(fd, st.st_size), current)
            return None
        data = extra.encode("utf-8")
        fileio.check_total_size(st.st_size + len(data), rel, backend_id)
        try:
            fileio.write_all(fd, data)
        except fileio.AppendFailed as failed:
            error = failed.error
            forget(key)
            try:
                fileio.rollback_append(fd, st.st_size, failed.written)
            except OSError as again:
                raise MemoryBackendError(fileio.os_reason(rel, error, "append to") + f"; and cutting it back failed "
                                         f"({again.strerror or again})", "WRITE_FAILED", backend_id, error) from error
            raise MemoryBackendError(fileio.os_reason(rel, error, "append to") + "; nothing was appended",
                                     "WRITE_FAILED", backend_id, error) from error
        after = os.fstat(fd)
        if after.st_size == st.st_size + len(data):  # no one else appended meanwhile: we know every byte
            _remember(key, after, _tail(fd, after.st_size), joined(current, extra))  # extends current: known
        else:
            forget(key)
        return extra
    finally:
        os.close(fd)


def append_for(backend: Any, rel: str, target: Path, build: Callable[[str], str | None]) -> object:
    """:func:`append` for ``backend``'s document ``rel`` when the backend appends to it as a plain file
    (the default file layer, no hook of its own); :data:`FALLBACK` otherwise. Under the document's lock."""
    check = getattr(backend, "appends_plain_file", None)
    if not callable(check) or not check(rel):
        return FALLBACK
    backend.require_initialized()
    backend.require_writable()
    from core.storage.docio import MAX_READ_SIZE

    added = append(target, rel, build, backend_id=backend.id, max_read=MAX_READ_SIZE)
    if added is not FALLBACK and added:
        backend.on_document_appended(rel)
    return added
