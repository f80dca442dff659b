"""Rebuild a backend's derived search indexes from the canonical content, and optionally verify them.

``memdesk reindex [--verify]`` and the search view's "Rebuild index" call :func:`reindex`. A backend
with a ``search_service`` (``sqlite``, ``hybrid``) rebuilds its own index; for any other backend the
index rebuilt is memdesk's derived one (:mod:`core.search.derived`), the one its searches use.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.backends.base import MemoryBackend
from core.search import derived
from core.search.verify import VerifyReport, verify_index


@dataclass
class ReindexReport:
    """Counts and timings of a rebuild, and the verification result when one was asked for."""

    backend_id: str
    indexed: bool
    files: int = 0
    entries: int = 0
    vectors: int = 0
    seconds: float = 0.0
    semantic: bool = False
    note: str | None = None
    verify: VerifyReport | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True unless verification found a problem."""
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        """A JSON-friendly dict (for ``--json``)."""
        out: dict[str, Any] = {
            "backend": self.backend_id, "indexed": self.indexed, "files": self.files, "entries": self.entries,
            "vectors": self.vectors, "seconds": round(self.seconds, 3), "semantic": self.semantic,
            "note": self.note, "ok": self.ok, "problems": self.problems,
        }
        if self.verify is not None:
            out["verified"] = {"entries": self.verify.entries, "keyword_checked": self.verify.keyword_checked,
                               "vectors_checked": self.verify.vectors_checked,
                               "unsearchable": self.verify.unsearchable}
        return out


def reindex(backend: MemoryBackend, *, verify: bool = False,
            progress: Callable[[int, str], None] | None = None,
            cancelled: Callable[[], bool] | None = None) -> ReindexReport:
    """Rebuild ``backend``'s indexes (every searched file) and, with ``verify``, check each entry is found."""
    root = backend.require_initialized()
    service = getattr(backend, "search_service", None)
    backend_id = backend.id
    if service is None:
        service = derived.service(root)
        backend_id = f"{backend.id} (memdesk's derived index)"
    sync = getattr(backend, "sync_external_changes", None)
    if callable(sync):
        sync()  # take in outside edits of a mirror file first: the rebuild indexes what is canonical
    start = time.perf_counter()
    counts = service.rebuild(progress, cancelled)
    report = ReindexReport(backend_id, True, files=counts["files"], entries=counts["entries"],
                           vectors=counts["vectors"], seconds=time.perf_counter() - start,
                           semantic=service.provider() is not None, note=service.note("hybrid"))
    if verify:
        if progress is not None:
            progress(100, "verifying")
        report.verify = verify_index(service)
        report.problems = list(report.verify.problems)
    return report
