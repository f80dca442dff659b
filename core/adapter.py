"""``MemoryFileAdapter``: file-like read/write over any backend that never raises."""

from __future__ import annotations

import inspect
import logging
from dataclasses import dataclass

from core.backends.base import MemoryBackend
from core.errors import MemoryBackendError
from core.fileio import content_hash

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WriteOutcome:
    """Result of :meth:`MemoryFileAdapter.write`: success, the error text and its code when it failed."""

    success: bool
    error: str | None = None
    code: str | None = None


class MemoryFileAdapter:
    """Bridges a backend to file semantics: reads give ``""`` on failure, writes report instead of raising."""

    def __init__(self, backend: MemoryBackend) -> None:
        self.backend = backend
        #: The error of the last failed :meth:`read` (``None`` after a successful one).
        self.last_read_error: MemoryBackendError | None = None

    def read(self) -> str:
        """Return the memory content, or ``""`` on any failure (kept in :attr:`last_read_error`)."""
        try:
            content = self.backend.read()
        except Exception as exc:
            self.last_read_error = _as_backend_error(exc, self.backend.id, "READ_FAILED")
            log.warning("[MemoryFileAdapter] Read failed: %s", exc)
            return ""
        self.last_read_error = None
        return content or ""

    def write(self, content: str, *, expected_hash: str | None = None, source: str = "write") -> WriteOutcome:
        """Write through the backend; never raises. The failure is logged at WARNING and returned."""
        try:
            call_write(self.backend, content, expected_hash=expected_hash, source=source)
        except Exception as exc:
            err = _as_backend_error(exc, self.backend.id, "WRITE_FAILED")
            log.warning("[MemoryFileAdapter] Write failed (%s): %s", err.code, err.message)
            return WriteOutcome(False, f"Write failed ({err.code}): {err.message}", err.code)
        return WriteOutcome(True)


def _write_extras(backend_type: type) -> frozenset[str]:
    """The optional keywords a backend's ``write`` accepts (the seed contract is ``write(content)``)."""
    cached = _EXTRAS.get(backend_type)
    if cached is None:
        try:
            params = inspect.signature(backend_type.write).parameters
        except (TypeError, ValueError):
            params = {}
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            cached = frozenset({"expected_hash", "source", "author"})
        else:
            cached = frozenset(k for k in ("expected_hash", "source", "author") if k in params)
        _EXTRAS[backend_type] = cached
    return cached


_EXTRAS: dict[type, frozenset[str]] = {}


def call_write(backend: MemoryBackend, content: str, *, expected_hash: str | None = None,
               source: str = "write", author: str | None = None) -> None:
    """Call ``backend.write`` with only the extras it declares; a stale base on a backend that cannot
    check it is checked here first."""
    extras = _write_extras(type(backend))
    kwargs: dict[str, object] = {}
    if "source" in extras:
        kwargs["source"] = source
    if "author" in extras and author is not None:
        kwargs["author"] = author
    if expected_hash is not None:
        if "expected_hash" in extras:
            kwargs["expected_hash"] = expected_hash
        elif content_hash(backend.read() or "") != expected_hash:
            raise MemoryBackendError("the memory changed since it was loaded; reload or merge before saving",
                                     "CONFLICT", backend.id)
    backend.write(content, **kwargs)


def _as_backend_error(exc: BaseException, backend_id: str, code: str) -> MemoryBackendError:
    if isinstance(exc, MemoryBackendError):
        return exc
    return MemoryBackendError(f"{type(exc).__name__}: {exc}", code, backend_id, exc)
