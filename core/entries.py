"""Appending entries to memory (seed 002): the seed-named ``append_memory_entry`` over the project model.

The format, the tool's messages and the archive rotation live in :mod:`core.project.appending` (below the
project model); this module re-exports them under the seed's names.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from core.project.appending import (
    ARCHIVE_HEADER,
    DEFAULT_MAX_LINES,
    MEMORY_ARCHIVE_PATH,
    ROTATION_SLACK,
    AppendStatus,
    format_entry,
    plan_rotation,
    split_dated_entries,
    tool_message,
    tool_message_for,
)


@dataclass(frozen=True)
class AppendResult:
    """Status of an append and the file it concerned (``None`` for ``skipped_empty``).

    Here, not in :mod:`core.project.appending`: only the seed-named wrapper returns it (the project model
    returns an :class:`~core.project.AppendOutcome`), so an append does not build it.
    """

    status: AppendStatus
    file_path: Path | None
    archived_entries: int = 0
    warnings: tuple[str, ...] = ()


__all__ = [
    "ARCHIVE_HEADER",
    "DEFAULT_MAX_LINES",
    "MEMORY_ARCHIVE_PATH",
    "ROTATION_SLACK",
    "AppendResult",
    "AppendStatus",
    "append_memory_entry",
    "format_entry",
    "plan_rotation",
    "split_dated_entries",
    "tool_message",
    "tool_message_for",
]


def append_memory_entry(
    root: str | os.PathLike[str],
    content: str | None,
    *,
    relpath: str | None = None,
    max_lines: int | None = DEFAULT_MAX_LINES,
    today: date | None = None,
) -> AppendResult:
    """Append an entry unless it is empty (no I/O at all) or already present (no write).

    Goes through the project's backend (so ``readonly`` refuses with ``READ_ONLY``). In the seed
    layout it appends to ``.fusion/memory.md``; in the layered layout to today's daily note.
    Raises :class:`~core.errors.MemoryBackendError` (``READ_FAILED``, ``QUOTA_EXCEEDED``, ``WRITE_FAILED`` …).
    """
    if not (content or "").strip():
        return AppendResult("skipped_empty", None)
    from core.project.model import open_project

    outcome = open_project(root).append(content, path=relpath, today=today, max_lines=max_lines, force=True)
    return AppendResult(outcome.status, outcome.file_path, outcome.archived_entries, outcome.warnings)
