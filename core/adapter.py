"""``MemoryFileAdapter``: file-like read/write over any backend that never raises."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from core.backends.base import MemoryBackend, call_write
from core.errors import MemoryBackendError

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


def _as_backend_error(exc: BaseException, backend_id: str, code: str) -> MemoryBackendError:
    if isinstance(exc, MemoryBackendError):
        return exc
    return MemoryBackendError(f"{type(exc).__name__}: {exc}", code, backend_id, exc)
