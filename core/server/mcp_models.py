"""Structured results of memdesk's MCP tools (camelCase, as Fusion's ``fn_memory_*`` tools answer)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from core.server import models

#: ``memory_get``: lines a call returns when it names no count, and the most it may ask for. As Fusion's
#: ``fn_memory_get`` (``packages/engine/src/agent-tools.ts``, ``createMemoryGetTool`` → ``getProjectMemory``).
DEFAULT_LINES = 120
MAX_LINES = 400


def window_lines(line_count: int | None) -> int:
    """The lines a ``memory_get`` window holds for the ``lineCount`` asked, clamped as ``fn_memory_get`` does
    (Fusion's ``packages/core/src/memory-backend.ts`` ``getMemoryFile`` at b1f6740b: ``min(max(1, lineCount ??
    120), 400)``): a count over 400 reads 400 lines, not a refusal, and ``nextStartLine`` says where to go on."""
    return min(max(1, DEFAULT_LINES if line_count is None else line_count), MAX_LINES)


class GetResult(BaseModel):
    """A line window of one document, and the hash of the whole document."""

    path: str
    content: str
    startLine: int
    endLine: int
    totalLines: int
    nextStartLine: int | None = Field(description="Where the next window starts; null when this one reaches the "
                                                   "end of the document.")
    hash: str = Field(description="SHA-256 of the whole document: the expectedHash of memory_write, memory_edit "
                                  "and memory_remove_entry.")
    backend: str


class FilesResult(BaseModel):
    """The documents of a project."""

    project: str
    files: list[models.FileInfo]


class ProjectInfo(BaseModel):
    """One served project, as an agent needs it (no server paths)."""

    key: str = Field(description="Pass as the project argument of the other tools.")
    layout: Literal["seed", "layered"]
    memoryPath: str = Field(description="The long-term memory document.")
    backend: str
    writable: bool
    readOnlyReason: str | None = None
    documents: int
    access: str = Field(description="What this caller may do here: read, append or write (and on which paths).")


class ProjectsResult(BaseModel):
    """Every project this server serves."""

    projects: list[ProjectInfo]


class EditResult(BaseModel):
    """A document changed by memory_edit or memory_remove_entry."""

    status: str = Field(description="written, or held when memdesk's firewall keeps it for the operator.")
    path: str
    hash: str = Field(description="The document's new hash (pass it as expectedHash to change it again).")
    changed: bool
    inboxId: str | None = Field(None, description="held: the inbox entry the operator reviews.")
    removed: str | None = Field(None, description="memory_remove_entry: the text removed (kept in history).")
    warnings: list[str] = Field(default_factory=list)
    flags: list[dict[str, Any]] = Field(default_factory=list, description="{rule, kind, line, span, message}")


class Change(BaseModel):
    """One recorded change of a document."""

    time: str
    path: str
    kind: Literal["append", "replace"]
    source: str
    label: str
    author: str | None
    size: int
    text: str | None = Field(None, description="An append's text (appends only; cut at 400 characters).")


class RecentResult(BaseModel):
    """What changed since a time, newest first."""

    since: str
    changes: list[Change]


class VersionInfo(BaseModel):
    """One stored version of a document (the content before a change)."""

    id: int
    hash: str
    size: int
    createdAt: str
    source: str
    label: str
    author: str | None


class HistoryResult(BaseModel):
    """The versions of a document, newest first, and its current hash."""

    path: str
    currentHash: str | None
    versions: list[VersionInfo]
