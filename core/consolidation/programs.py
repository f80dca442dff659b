"""Rewrites made by other programs (Fusion's own dream or compaction run, an agent, an editor), after the fact.

The write pipeline keeps the version a change replaced in history, also for changes memdesk noticed but
did not make (writer kind ``program``, or a source naming an outside change). Versions of several
documents recorded close together (within :data:`WINDOW_S` of each other) are one *run*: "3 documents
rewritten at 04:00 by another program". For a run memdesk builds the same ledger and conservation check
as for its own proposals (before: the versions kept; after: the next version of each document, or its
text now), and can undo it whole or change by change: the undo is staged as a proposal (kind
``program``) from the documents as they are now back to the texts before, applied through the pipeline
with :func:`core.consolidation.apply.apply_proposal` (re-based or a conflict like any other).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from core.consolidation import store
from core.consolidation.model import ConsolidationProposal
from core.consolidation.stage import build_proposal
from core.insights._text import parse_timestamp

if TYPE_CHECKING:
    from core.project.model import Project
    from core.storage.history.versions import Version

__all__ = ["PROGRAM_SOURCES", "WINDOW_S", "ProgramRun", "check_run", "is_program_version", "program_runs", "stage_undo"]

#: Versions recorded within this many seconds of each other belong to one run.
WINDOW_S = 120
#: Sources that mean "another program changed the file" (the pipeline's record of a change it noticed).
PROGRAM_SOURCES = frozenset({"external", "program", "noticed", "external-change", "fusion"})


def is_program_version(version: Version) -> bool:
    """Whether ``version`` is the text before a change another program made."""
    author = (version.author or "").lower()
    return version.source in PROGRAM_SOURCES or author.startswith("program")


@dataclass(frozen=True)
class ProgramRun:
    """One run of another program: the versions it replaced (one per document, the earliest) and when."""

    started: str
    writer: str
    versions: tuple[Version, ...]
    last_id: int = 0  # the run's last recorded version: a later version of a document holds the run's result

    @property
    def paths(self) -> tuple[str, ...]:
        """The documents the run rewrote."""
        return tuple(v.path for v in self.versions)

    @property
    def id(self) -> str:
        """A stable id: the first version's id."""
        return f"run-{self.versions[0].id}"

    def describe(self) -> str:
        """``3 documents rewritten at 04:00 by another program``."""
        n = len(self.versions)
        when = self.started[11:16] if len(self.started) >= 16 else self.started
        who = "another program" if self.writer in ("", "program") else self.writer
        return f"{n} document{'s' if n != 1 else ''} rewritten at {when} by {who}"

    def to_json(self) -> dict[str, Any]:
        """camelCase JSON."""
        return {"id": self.id, "started": self.started, "writer": self.writer, "paths": list(self.paths),
                "versionIds": [v.id for v in self.versions], "description": self.describe()}


def _moment(version: Version) -> datetime:
    return parse_timestamp(version.created_at) or datetime.min.replace(tzinfo=UTC)


def program_runs(project: Project, *, window_s: int = WINDOW_S, limit: int = 2000) -> list[ProgramRun]:
    """Other programs' runs, newest first, from the project's history."""
    versions = sorted((v for v in project.list_versions(None, limit) if is_program_version(v)), key=_moment)
    runs: list[list[Version]] = []
    for version in versions:
        if runs and (_moment(version) - _moment(runs[-1][-1])).total_seconds() <= window_s:
            runs[-1].append(version)
        else:
            runs.append([version])
    out = []
    for group in runs:
        first: dict[str, Version] = {}
        for version in group:
            first.setdefault(version.path, version)  # the earliest text of each document is the run's "before"
        writer = (group[0].author or "program").removeprefix("program:")
        out.append(ProgramRun(group[0].created_at, writer, tuple(first.values()), max(v.id for v in group)))
    return list(reversed(out))


def _texts(project: Project, run: ProgramRun) -> tuple[dict[str, str | None], dict[str, str]]:
    """The run's documents before (the versions kept) and after (the next version, or the text now)."""
    before: dict[str, str | None] = {}
    after: dict[str, str] = {}
    for version in run.versions:
        found = project.get_version(version.id)
        if found is None:
            continue
        before[version.path] = found[1]
        later = [v for v in project.list_versions(version.path) if v.id > run.last_id]
        nxt = min(later, key=lambda v: v.id) if later else None
        text = project.get_version(nxt.id) if nxt is not None else None
        after[version.path] = text[1] if text is not None else project.read(version.path)
    return before, after


def check_run(project: Project, run: ProgramRun) -> ConsolidationProposal:
    """The run as a (not stored) proposal: its changes, ledger and the facts it lost."""
    before, after = _texts(project, run)
    checked = build_proposal("program", run.writer, "program", before, after, None, run.describe(), "program",
                             _moment(run.versions[0]), pid=run.id)
    return replace(checked, status="applied", message="written by another program; undo it to go back")


def stage_undo(project: Project, run: ProgramRun, now: datetime | None = None) -> ConsolidationProposal:
    """Stage undoing ``run``: from the documents now back to the texts before it (apply it whole or by change)."""
    before, _after = _texts(project, run)
    current: dict[str, str | None] = {p: project.backend.read_document(p) for p in before}
    target = {p: t for p, t in before.items() if t is not None}
    proposal = build_proposal("program", "undo", "program", current, target, None, f"Undo: {run.describe()}",
                              "program", now or datetime.now(UTC))
    store.save_new(project.root, proposal)
    return proposal
