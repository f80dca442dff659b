"""What the project's operations return (:class:`Changes`, :class:`WriteResult`, :class:`AppendOutcome`) and
the one error of its own (:class:`MemoryDisabledError`); :mod:`core.project.model` re-exports them all."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from core.errors import MemoryBackendError
from core.storage import fileio
from core.storage.frozen import Record

AppendStatus = Literal["written", "held", "skipped_empty", "skipped_duplicate"]
AppendLayer = Literal["long-term", "daily"]


@dataclass(frozen=True)
class Changes:
    """What an operation changed, so each surface can decide what to refresh (Anki's ``OpChanges``)."""

    documents: frozenset[str] = frozenset()
    insights: bool = False
    audit: bool = False
    proposals: bool = False
    settings: bool = False
    history: bool = False

    def __or__(self, other: Changes) -> Changes:
        return Changes(self.documents | other.documents, self.insights or other.insights,
                       self.audit or other.audit, self.proposals or other.proposals,
                       self.settings or other.settings, self.history or other.history)

    def __bool__(self) -> bool:
        return bool(self.documents) or self.insights or self.audit or self.proposals or self.settings \
            or self.history


@dataclass(frozen=True)
class WriteResult:
    """What :meth:`Project.write` did; :attr:`hash` is worked out when first asked (most callers never ask)."""

    path: str
    changed: bool
    size: int
    changes: Changes = field(default_factory=Changes)
    warnings: tuple[str, ...] = ()
    data: bytes = field(default=b"", repr=False, compare=False)  # the document's new bytes
    status: str = "written"  # "written" | "held" (with inbox_id); a refusal raises pipeline.WriteRefused
    flags: tuple[dict[str, Any], ...] = ()  # the screen's findings: {rule, kind, line, span, message}
    inbox_id: str | None = None

    @cached_property
    def hash(self) -> str:
        """The SHA-256 hex digest of the document's new content."""
        return fileio.sha256_hex(self.data)


class AppendOutcome(Record):
    """What :meth:`Project.append` did: seed 002's status and message, and what it changed (a frozen
    :class:`~core.storage.frozen.Record`: built on every ``memdesk append`` process's start)."""

    __slots__ = _fields = ("status", "file_path", "path", "message", "archived_entries", "changes", "warnings",
                           "flags", "inbox_id")
    status: AppendStatus
    file_path: Path | None
    path: str | None
    message: str
    archived_entries: int
    changes: Changes
    warnings: tuple[str, ...]
    flags: tuple[dict[str, Any], ...]  # the screen's findings: {rule, kind, line, span, message}
    inbox_id: str | None  # status "held": the inbox item that waits for review

    def __init__(self, status: AppendStatus, file_path: Path | None, path: str | None, message: str,
                 archived_entries: int = 0, changes: Changes | None = None, warnings: tuple[str, ...] = (),
                 flags: tuple[dict[str, Any], ...] = (), inbox_id: str | None = None) -> None:
        self._set(status=status, file_path=file_path, path=path, message=message, archived_entries=archived_entries,
                  changes=Changes() if changes is None else changes, warnings=warnings, flags=flags,
                  inbox_id=inbox_id)

    def to_json(self) -> dict[str, Any]:
        """The JSON shape of ``memdesk append --json`` and the servers' append responses."""
        out = {"status": self.status, "filePath": str(self.file_path) if self.file_path else None,
               "path": self.path, "message": self.message, "archivedEntries": self.archived_entries,
               "warnings": list(self.warnings), "flags": list(self.flags)}
        if self.inbox_id is not None:
            out["inboxId"] = self.inbox_id
        return out


class MemoryDisabledError(MemoryBackendError):
    """An agent's write while the project's memory is switched off."""

