"""The working-memory, insights and audit documents, read and written whole through the project model.

The seed names these files by their seed-layout paths (``.fusion/memory.md``,
``.fusion/memory-insights.md``, ``.fusion/memory-audit.md`` …). Here those logical names are
mapped to where the project's layout keeps them (``.fusion/memory/…`` in a layered project), and
every read and write goes through the project's backend (:mod:`core.project`), so ``readonly``
refuses writes and a backend that keeps memory itself serves what it holds.
"""

from __future__ import annotations

from pathlib import Path

from core.errors import MemoryBackendError, PathOutsideRootError
from core.insights.model import (
    MEMORY_AUDIT_PATH,
    MEMORY_AUDIT_STATE_PATH,
    MEMORY_INSIGHTS_PATH,
    MEMORY_WORKING_PATH,
)
from core.storage import fileio, statefiles

__all__ = [
    "document_path",
    "read_insights_memory",
    "read_memory_audit",
    "read_project_file",
    "read_working_memory",
    "write_generated_file",
    "write_insights_memory",
    "write_working_memory",
]


def _project(root: Path | str):  # type: ignore[no-untyped-def]
    from core.project.model import open_project  # late: the project model sits above the insights

    return open_project(root)


def extraction_enabled(root: Path | str) -> bool:
    """Whether insight extraction is on for the project (its settings; on when they cannot be read)."""
    try:
        return bool(_project(root).settings.insight_extraction_enabled)
    except Exception:
        return True


def document_path(root: Path | str, logical: str) -> str:
    """Where the project keeps the seed's ``logical`` file (its layout's path for it)."""
    layout = _project(root).layout
    return {
        MEMORY_WORKING_PATH: layout.memory_path,
        MEMORY_INSIGHTS_PATH: layout.insights_path,
        MEMORY_AUDIT_PATH: layout.audit_path,
        MEMORY_AUDIT_STATE_PATH: layout.audit_state_path,
    }.get(logical, logical)


def read_project_file(root: Path | str, relpath: str) -> str | None:
    """Read a document whole (seed names map to the layout's paths); ``None`` when absent."""
    project = _project(root)
    if relpath == MEMORY_WORKING_PATH:
        return project.backend.read_document(project.memory_path)
    if relpath == MEMORY_INSIGHTS_PATH:
        return project.read_insights()
    rel = document_path(root, relpath)
    try:
        path = fileio.resolve_in_root(project.root, rel)
    except PathOutsideRootError as exc:
        raise MemoryBackendError(str(exc), "INVALID_CONFIG", "file", exc) from exc
    return fileio.read_text(path)


def read_working_memory(root: Path | str) -> str:
    """Return the working (long-term) memory through the backend, or ``""`` when there is none."""
    return _project(root).read()


def read_insights_memory(root: Path | str) -> str | None:
    """Return the insights memory, or ``None`` (never ``""``) when absent."""
    return _project(root).read_insights()


def read_memory_audit(root: Path | str) -> str | None:
    """Return the last audit report, or ``None`` when absent."""
    return read_project_file(root, MEMORY_AUDIT_PATH)


def write_working_memory(
    root: Path | str, content: str, *, expected_hash: str | None = None, source: str = "write"
) -> fileio.ReplaceResult:
    """Replace the working memory through the backend; ``expected_hash`` guards against a concurrent change."""
    project = _project(root)
    result = project.write(None, content, expected_hash=expected_hash, source=source)
    return fileio.ReplaceResult(project.root / result.path, result.changed, result.hash, result.size)


def write_insights_memory(
    root: Path | str, content: str, *, expected_hash: str | None = None, source: str = "insights-merge"
) -> fileio.ReplaceResult:
    """Replace the insights memory (at the layout's path) through the backend."""
    project = _project(root)
    result = project.write_insights(content, expected_hash=expected_hash, source=source)
    return fileio.ReplaceResult(project.root / result.path, result.changed, result.hash, result.size)


def write_generated_file(root: Path | str, logical: str, text: str, source: str) -> fileio.ReplaceResult:
    """Write a file memdesk generates (audit report and state) at the layout's path, without history.

    Refused with ``READ_ONLY`` when the backend cannot write: the ``readonly`` backend changes no byte.
    """
    project = _project(root)
    project.backend.require_writable()
    written = statefiles.write(statefiles.name_of(document_path(root, logical)), project.root, text, source=source)
    return fileio.ReplaceResult(written.target, written.changed, None, written.size, text.encode("utf-8"))
