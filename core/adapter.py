"""``MemoryFileAdapter``: file-like read/write over any backend that never raises.

The backend may be third-party code written to the seed's contract: ``write(self, content)`` gets only
the keywords it declares (a stale save is still caught, by comparing what it reads), ``read()`` is
always turned into a ``str``, and no exception a plugin raises (``SystemExit``, one whose ``str()``
fails) escapes. ``KeyboardInterrupt`` does.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from core.backends.base import MemoryBackend, call_write
from core.backends.plugin import safe_text
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

    def _read_text(self) -> str:
        content = self.backend.read()
        if content is None:
            return ""
        if not isinstance(content, str):
            raise MemoryBackendError(f'backend "{_backend_id(self.backend)}" returned {type(content).__name__}, '
                                     "not text", "READ_FAILED", _backend_id(self.backend))
        return str(content)  # a plain str, never a subclass with surprises

    def read(self) -> str:
        """Return the memory content, or ``""`` on any failure (kept in :attr:`last_read_error`)."""
        try:
            content = self._read_text()
        except (Exception, SystemExit) as exc:
            self.last_read_error = _as_backend_error(exc, _backend_id(self.backend), "READ_FAILED")
            log.warning("[MemoryFileAdapter] Read failed: %s", self.last_read_error.message)
            return ""
        self.last_read_error = None
        return content

    def write(self, content: str, *, expected_hash: str | None = None, source: str = "write") -> WriteOutcome:
        """Write through the backend; never raises. The failure is logged at WARNING and returned."""
        try:
            # Only the keywords the backend's write declares; a stale save is still refused (CONFLICT).
            call_write(self.backend, content, expected_hash=expected_hash, source=source)
        except (Exception, SystemExit) as exc:
            err = _as_backend_error(exc, _backend_id(self.backend), "WRITE_FAILED")
            log.warning("[MemoryFileAdapter] Write failed (%s): %s", err.code, err.message)
            return WriteOutcome(False, f"Write failed ({err.code}): {err.message}", err.code)
        return WriteOutcome(True)


def _backend_id(backend: MemoryBackend) -> str:
    value = getattr(backend, "id", "")
    return value if isinstance(value, str) else ""


def _as_backend_error(exc: BaseException, backend_id: str, code: str) -> MemoryBackendError:
    if isinstance(exc, MemoryBackendError) and isinstance(exc.message, str):
        return exc
    return MemoryBackendError(safe_text(exc), code, backend_id, exc if isinstance(exc, Exception) else None)
