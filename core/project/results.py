"""What the project's operations return (:class:`Changes`, :class:`WriteResult`, :class:`AppendOutcome`) and
the one error of its own (:class:`MemoryDisabledError`); :mod:`core.project.model` re-exports them all."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from core.errors import MemoryBackendError
from core.frozen import Record
from core.storage import fileio

AppendStatus = Literal["written", "held", "skipped_empty", "skipped_duplicate"]
AppendLayer = Literal["long-term", "daily"]


class Changes(Record):
    r"""What an operation changed, so each surface can decide what to refresh (Anki's ``OpChanges``).

    Frozen :class:`~core.frozen.Record`\ s, this one and :class:`WriteResult`, not dataclasses: this module is on
    every ``memdesk append`` process's path, and ``import dataclasses`` alone brings ``inspect``, ``ast`` and ``dis``.
    """

    __slots__ = _fields = ("documents", "insights", "audit", "proposals", "settings", "history")
    documents: frozenset[str]
    insights: bool
    audit: bool
    proposals: bool
    settings: bool
    history: bool

    def __init__(self, documents: frozenset[str] = frozenset(), insights: bool = False, audit: bool = False,
                 proposals: bool = False, settings: bool = False, history: bool = False) -> None:
        self._set(documents=documents, insights=insights, audit=audit, proposals=proposals, settings=settings,
                  history=history)

    def __or__(self, other: Changes) -> Changes:
        return Changes(self.documents | other.documents, self.insights or other.insights,
                       self.audit or other.audit, self.proposals or other.proposals,
                       self.settings or other.settings, self.history or other.history)

    def __bool__(self) -> bool:
        return bool(self.documents) or self.insights or self.audit or self.proposals or self.settings \
            or self.history


class WriteResult(Record):
    """What :meth:`Project.write` did; :attr:`hash` is worked out when first asked (most callers never ask)."""

    _fields = ("path", "changed", "size", "changes", "warnings", "data", "status", "flags", "inbox_id")
    __slots__ = (*_fields, "_hash")  # _hash: the digest once asked for (not a field)
    _hidden = _uncompared = ("data",)
    _hash: str | None
    path: str
    changed: bool
    size: int
    changes: Changes
    warnings: tuple[str, ...]
    data: bytes  # the document's new bytes
    status: str  # "written" | "held" (with inbox_id); a refusal raises pipeline.WriteRefused
    flags: tuple[dict[str, Any], ...]  # the screen's findings: {rule, kind, line, span, message}
    inbox_id: str | None

    def __init__(self, path: str, changed: bool, size: int, changes: Changes | None = None,
                 warnings: tuple[str, ...] = (), data: bytes = b"", status: str = "written",
                 flags: tuple[dict[str, Any], ...] = (), inbox_id: str | None = None) -> None:
        self._set(path=path, changed=changed, size=size, changes=Changes() if changes is None else changes,
                  warnings=warnings, data=data, status=status, flags=flags, inbox_id=inbox_id, _hash=None)

    @property
    def hash(self) -> str:
        """The SHA-256 hex digest of the document's new content."""
        if self._hash is None:
            self._set(_hash=fileio.sha256_hex(self.data))
        return self._hash  # type: ignore[return-value]


class AppendOutcome(Record):
    """What :meth:`Project.append` did: seed 002's status and message, and what it changed (a frozen
    :class:`~core.frozen.Record`: built on every ``memdesk append`` process's start)."""

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

