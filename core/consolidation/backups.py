"""Fusion's memory backups: ``.fusion/backups/memory/memory-<stamp>/…``, listed and restored with a diff first.

A snapshot folder holds copies of memory documents, the project's and the agents'. Its files are mapped
back to documents by their path inside the snapshot: ``MEMORY.md``, ``DREAMS.md`` and daily names (or
under ``memory/`` or ``project/``) are the project's; ``agent-memory/<id>/…`` or ``agents/<id>/…`` an
agent's. Anything else is listed as unknown and never restored. Files are read size-capped and never
followed out of the project. A restore is staged as a proposal (kind ``program``, provider ``backup``)
from the documents now to the snapshot's texts, so it is reviewed like any other (diff, ledger, lost
facts) and applied through the pipeline.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from core.consolidation import store
from core.consolidation.model import ConsolidationProposal
from core.consolidation.stage import build_proposal
from core.errors import MemoryBackendError
from core.storage import fileio

if TYPE_CHECKING:
    from core.project.model import Project

__all__ = ["BACKUPS_DIR", "Backup", "list_backups", "stage_restore"]

BACKUPS_DIR = ".fusion/backups/memory"
_STAMP_RE = re.compile(r"^memory-(.+)$")
_MAX_FILES = 2000


@dataclass(frozen=True)
class Backup:
    """One snapshot: its folder, stamp, scope (project / agents / both) and the documents it holds."""

    name: str
    stamp: str
    scope: str
    files: tuple[tuple[str, str], ...]  # (path inside the snapshot, document path)
    unknown: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """camelCase JSON."""
        return {"name": self.name, "stamp": self.stamp, "scope": self.scope,
                "documents": [d for _s, d in self.files], "unknown": list(self.unknown)}


def _document_for(project: Project, inner: str) -> str | None:
    parts = inner.split("/")
    if parts[0] in ("project", ".fusion") and len(parts) > 1:
        parts = parts[1:]
    if parts[0] == "agents" and len(parts) == 3:
        parts = ["agent-memory", *parts[1:]]
    try:
        rel = project.layout.normalize("/".join(parts))
    except MemoryBackendError:
        return None
    return rel if project.layout.is_layered_memory(rel) else None


def _plain(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def list_backups(project: Project) -> list[Backup]:
    """Fusion's memory snapshots, newest first (an unreadable or linked-out folder lists nothing)."""
    try:
        folder = fileio.resolve_in_root(project.root, BACKUPS_DIR)
    except Exception:
        return []
    if not folder.is_dir():
        return []
    out: list[Backup] = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name, reverse=True):
        m = _STAMP_RE.match(entry.name)
        if not m or not entry.is_dir(follow_symlinks=False):
            continue
        files: list[tuple[str, str]] = []
        unknown: list[str] = []
        for base, dirs, names in os.walk(entry.path):  # links are not followed
            dirs.sort()
            for name in sorted(names):
                inner = os.path.relpath(os.path.join(base, name), entry.path).replace(os.sep, "/")
                if len(files) + len(unknown) >= _MAX_FILES:
                    break
                if not _plain(os.path.join(base, name)):  # a link (out of the project?), a FIFO: never read
                    unknown.append(inner)
                    continue
                doc = _document_for(project, inner) if name.endswith(".md") else None
                (files.append((inner, doc)) if doc else unknown.append(inner))  # type: ignore[func-returns-value]
        agents = any(d.startswith(".fusion/agent-memory/") for _i, d in files)
        own = any(not d.startswith(".fusion/agent-memory/") for _i, d in files)
        scope = "project+agents" if agents and own else "agents" if agents else "project"
        out.append(Backup(entry.name, m.group(1), scope, tuple(files), tuple(unknown)))
    return out


def stage_restore(project: Project, name: str, documents: list[str] | None = None,
                  now: datetime | None = None) -> ConsolidationProposal:
    """Stage restoring the snapshot ``name`` (all its documents, or ``documents``) as a proposal to review."""
    backup = next((b for b in list_backups(project) if b.name == name), None)
    if backup is None:
        raise MemoryBackendError(f"no memory backup {name!r} under {BACKUPS_DIR} (see the list)", "NOT_FOUND")
    before: dict[str, str | None] = {}
    after: dict[str, str] = {}
    for inner, doc in backup.files:
        if documents is not None and doc not in documents:
            continue
        # A copy over a memory document's limit could never be written back: refused here, by name.
        text = fileio.read_in_root(project.root, f"{BACKUPS_DIR}/{backup.name}/{inner}",
                                   max_size=fileio.MAX_FILE_SIZE)
        if text is None:
            continue
        before[doc] = project.backend.read_document(doc)
        after[doc] = text
    proposal = build_proposal("program", "backup", f"backup:{backup.name}", before, after, None,
                              f"Restore Fusion's memory backup {backup.name} ({backup.scope})", "manual",
                              now or datetime.now(UTC))
    store.save_new(project.root, proposal)
    return proposal
