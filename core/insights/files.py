"""Reading and writing the working-memory and insights files, always whole and through ``core.fileio``.

Reads are strict UTF-8 (a non-UTF-8 file raises ``READ_FAILED`` and is never rewritten); writes are
atomic, locked, size-limited and keep the previous version in history.
"""

from __future__ import annotations

from pathlib import Path

from core import fileio
from core.errors import MemoryBackendError, PathOutsideRootError
from core.insights.model import MEMORY_AUDIT_PATH, MEMORY_INSIGHTS_PATH, MEMORY_WORKING_PATH

__all__ = [
    "read_insights_memory",
    "read_memory_audit",
    "read_project_file",
    "read_working_memory",
    "write_insights_memory",
    "write_working_memory",
]


def read_project_file(root: Path | str, relpath: str) -> str | None:
    """Read ``relpath`` under ``root`` whole; ``None`` when absent, ``READ_FAILED`` when unreadable."""
    try:
        path = fileio.resolve_in_root(root, relpath)
    except PathOutsideRootError as exc:
        raise MemoryBackendError(str(exc), "INVALID_CONFIG", "file", exc) from exc
    return fileio.read_text(path)


def read_working_memory(root: Path | str) -> str:
    """Return the working memory (``.fusion/memory.md``), or ``""`` when the file does not exist."""
    return read_project_file(root, MEMORY_WORKING_PATH) or ""


def read_insights_memory(root: Path | str) -> str | None:
    """Return the insights memory (``.fusion/memory-insights.md``), or ``None`` (never ``""``) when absent."""
    return read_project_file(root, MEMORY_INSIGHTS_PATH)


def read_memory_audit(root: Path | str) -> str | None:
    """Return the last audit report (``.fusion/memory-audit.md``), or ``None`` when absent."""
    return read_project_file(root, MEMORY_AUDIT_PATH)


def write_working_memory(
    root: Path | str, content: str, *, expected_hash: str | None = None, source: str = "write"
) -> fileio.ReplaceResult:
    """Replace the working memory; ``expected_hash`` guards against overwriting a concurrent change."""
    return fileio.replace_text(root, MEMORY_WORKING_PATH, content, expected_hash=expected_hash, source=source)


def write_insights_memory(
    root: Path | str, content: str, *, expected_hash: str | None = None, source: str = "insights-merge"
) -> fileio.ReplaceResult:
    """Replace the insights memory, creating ``.fusion/`` and the file when absent."""
    return fileio.replace_text(root, MEMORY_INSIGHTS_PATH, content, expected_hash=expected_hash, source=source)
