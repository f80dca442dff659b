"""Appending dated entries to memory (seed 002): empty and duplicate guards, one shared writer.

``append_memory_entry`` is the only code that appends entries; the ``memdesk append`` command wraps it.
Above a line budget the oldest dated entries move to ``.fusion/memory-archive.md``; nothing is deleted.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Literal

from core import fileio
from core.errors import MemoryBackendError
from core.project_memory import MEMORY_FILE_PATH

AppendStatus = Literal["written", "skipped_empty", "skipped_duplicate"]
MEMORY_ARCHIVE_PATH = ".fusion/memory-archive.md"
DEFAULT_MAX_LINES = 2000
ARCHIVE_HEADER = "# Memory Archive\n\n<!-- Dated entries moved out of .fusion/memory.md by memdesk; nothing here is deleted. -->\n"

_MARKER = re.compile(r"\n\n<!-- (\d{4}-\d{2}-\d{2}) -->\n")


@dataclass(frozen=True)
class AppendResult:
    """Status of an append and the file it concerned (``None`` for ``skipped_empty``)."""

    status: AppendStatus
    file_path: Path | None
    archived_entries: int = 0


def format_entry(content: str, today: date | None = None) -> str:
    """Return the appended-entry text: ``\\n\\n<!-- YYYY-MM-DD -->\\n<trimmed content>``."""
    day = (today or datetime.now(UTC).date()).isoformat()
    return f"\n\n<!-- {day} -->\n{content.strip()}"


def append_memory_entry(
    root: str | os.PathLike[str],
    content: str | None,
    *,
    relpath: str = MEMORY_FILE_PATH,
    max_lines: int | None = DEFAULT_MAX_LINES,
    today: date | None = None,
) -> AppendResult:
    """Append a dated entry unless it is empty (no I/O at all) or already present (no write).

    Raises :class:`MemoryBackendError` (``READ_FAILED``, ``QUOTA_EXCEEDED``, ``WRITE_FAILED``).
    """
    trimmed = (content or "").strip()
    if not trimmed:
        return AppendResult("skipped_empty", None)
    root_p = Path(root)
    path = fileio.resolve_in_root(root_p, relpath)
    path.parent.mkdir(parents=True, exist_ok=True)
    entry = format_entry(trimmed, today)
    with fileio.file_lock(root_p, relpath):
        existing = fileio.read_text(path) or ""
        if trimmed in existing:
            return AppendResult("skipped_duplicate", path)
        fileio.check_size((existing + entry).encode("utf-8"), relpath)
        _append_bytes(path, entry.encode("utf-8"))
        archived = 0
        if max_lines is not None:
            archived = _rotate(root_p, relpath, existing + entry, max_lines)
    return AppendResult("written", path, archived)


def _append_bytes(path: Path, data: bytes) -> None:
    # O_APPEND keeps writers that do not take our lock (Fusion's own agents) from being overwritten.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise MemoryBackendError(f"cannot append to {path}: {exc.strerror or exc}", "WRITE_FAILED", "file", exc) from exc


def split_dated_entries(text: str) -> tuple[str, list[tuple[str, str]]]:
    """Split memory into the undated head and its dated entries ``(date, block)`` in file order.

    Each block starts with its ``\\n\\n<!-- date -->\\n`` marker and runs to the next marker or the end.
    """
    matches = list(_MARKER.finditer(text))
    if not matches:
        return text, []
    head = text[: matches[0].start()]
    entries = []
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        entries.append((m.group(1), text[m.start():end]))
    return head, entries


def _rotate(root: Path, relpath: str, text: str, max_lines: int) -> int:
    """Move the oldest dated entries to the archive until ``text`` fits ``max_lines``; return how many."""
    if text.count("\n") + 1 <= max_lines:
        return 0
    head, entries = split_dated_entries(text)
    if not entries:
        return 0
    order = sorted(range(len(entries)), key=lambda i: (entries[i][0], i))
    lines = text.count("\n") + 1
    moved: set[int] = set()
    for i in order:
        if lines <= max_lines or len(moved) == len(entries) - 1:
            break  # keep the newest entry in place
        moved.add(i)
        lines -= entries[i][1].count("\n")
    if not moved:
        return 0
    archive_text = "".join(entries[i][1] for i in sorted(moved))
    archive_path = fileio.resolve_in_root(root, MEMORY_ARCHIVE_PATH)
    with fileio.file_lock(root, MEMORY_ARCHIVE_PATH):
        if not archive_path.exists():
            fileio.atomic_write_bytes(archive_path, ARCHIVE_HEADER.encode("utf-8"))
        # Archive first: a crash between the two writes duplicates an entry, never loses one.
        _append_bytes(archive_path, archive_text.encode("utf-8"))
    kept = head + "".join(block for i, (_d, block) in enumerate(entries) if i not in moved)
    fileio.replace_text(root, relpath, kept, expected_hash=fileio.content_hash(text), source="rotate")
    return len(moved)


def tool_message(result: AppendResult, scope: str = "project") -> str:
    """Map an :class:`AppendResult` to the ``memory_write`` tool's user-facing string (seed 002 §3)."""
    if result.status == "written":
        return f"Memory written to {scope} scope ({result.file_path})"
    if result.status == "skipped_empty":
        return "Error: VALIDATION_ERROR — memory_write content cannot be empty"
    if result.status == "skipped_duplicate":
        return f"Memory entry already present (no-op) — {result.file_path}"
    return f"Memory write returned unknown status: {result.status}"
