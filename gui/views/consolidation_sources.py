"""What the consolidation review can show besides memdesk's own proposals: other programs' runs and Fusion's backups.

Plain functions over :mod:`core.consolidation` (no widgets), used by the view's picker: a run of another
program is shown after the fact (its changes, ledger and lost facts; nothing to apply) with "Undo this
run", which stages the undo as a proposal; a Fusion backup is listed with "Review restore", which stages
the restore. Both staged proposals are then reviewed and applied like any other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.consolidation.backups import list_backups, stage_restore
from core.consolidation.programs import check_run, program_runs, stage_undo

if TYPE_CHECKING:
    from core.consolidation import ConsolidationProposal
    from core.project import Project

RUN, BACKUP = "run:", "backup:"
_MAX_RUNS = 20


def source_items(project: Project) -> list[tuple[str, str]]:
    """``(label, data)`` for the latest runs of other programs and every Fusion backup."""
    out = [(f"⚠ {run.describe()}", f"{RUN}{run.id}") for run in program_runs(project)[:_MAX_RUNS]]
    out += [(f"Fusion backup {b.name} ({b.scope}, {len(b.files)} documents)", f"{BACKUP}{b.name}")
            for b in list_backups(project)]
    return out


def describe(project: Project, data: str) -> tuple[ConsolidationProposal | None, str, str]:
    """What to show for ``data``: the after-the-fact proposal (or ``None``), a message, and the action's label."""
    if data.startswith(RUN):
        run = next((r for r in program_runs(project) if r.id == data[len(RUN):]), None)
        if run is None:
            return None, "That run is no longer in history.", ""
        return check_run(project, run), f"{run.describe()}: what it changed, and what it lost.", "Undo this run…"
    name = data[len(BACKUP):]
    backup = next((b for b in list_backups(project) if b.name == name), None)
    if backup is None:
        return None, f"The backup {name} is gone.", ""
    docs = ", ".join(d.rsplit("/", 1)[-1] for _i, d in backup.files[:6])
    return None, (f"Fusion's memory backup {backup.name} ({backup.scope}): {docs}"
                  f"{' …' if len(backup.files) > 6 else ''}. Review restore shows the diff first."), "Review restore…"


def stage(project: Project, data: str) -> ConsolidationProposal:
    """Stage the undo of a run or the restore of a backup; the proposal waits for review."""
    if data.startswith(RUN):
        run = next(r for r in program_runs(project) if r.id == data[len(RUN):])
        return stage_undo(project, run)
    return stage_restore(project, data[len(BACKUP):])
