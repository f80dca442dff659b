"""Other programs' rewrites after the fact (grouped, checked, undone) and Fusion's memory backups."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.consolidation import apply_proposal
from core.consolidation.backups import list_backups, stage_restore
from core.consolidation.programs import check_run, program_runs, stage_undo
from core.project import Project
from core.storage.history import versions as history

MEM = ".fusion/memory"


@pytest.fixture
def layered(layered_project: Path) -> Path:
    for path in layered_project.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return layered_project


def fusion_dream_by_hand(root: Path) -> dict[str, bytes]:
    """What Fusion's own dream run does to two documents: the pipeline records the texts before."""
    before = {}
    for name, new in (("2026-08-19.md", "# Daily Memory 2026-08-19\n\n<!-- Processed into dreams on "
                                        "2026-08-21T04:00:00.000Z -->\n"),
                      ("DREAMS.md", None)):
        path = root / MEM / name
        before[name] = path.read_bytes()
        history.record_version(root, f"{MEM}/{name}", path.read_bytes(), "external-change",
                               author="program:fusion")  # what core/storage/noticed.py records
        path.write_text(new if new is not None else path.read_text() + "\n## 2026-08-19\n\n- Polling hooks.\n")
    return before


def test_a_program_run_is_one_event_with_its_losses_and_can_be_undone(layered):
    before = fusion_dream_by_hand(layered)
    project = Project(layered)
    runs = program_runs(project)
    assert len(runs) == 1 and runs[0].describe().startswith("2 documents rewritten at ")
    assert runs[0].describe().endswith("by fusion")
    checked = check_run(project, runs[0])
    lost = {f.fact for f in checked.lost_facts}
    assert "packages/dashboard/app/hooks/useProjectHealth.ts" in lost and "FN-1529" in lost
    assert any(e.fate == "removed" for e in checked.ledger)
    undo = stage_undo(project, runs[0])
    daily = next(c.number for c in undo.changes if c.path.endswith("2026-08-19.md"))
    result = apply_proposal(project, undo.id, [daily])  # one change only: the daily note comes back
    assert result.status == "partly-applied"
    assert (layered / MEM / "2026-08-19.md").read_bytes() == before["2026-08-19.md"]
    assert (layered / MEM / "DREAMS.md").read_bytes() != before["DREAMS.md"]
    assert apply_proposal(project, undo.id, allow_loss=True).status == "applied"
    assert (layered / MEM / "DREAMS.md").read_bytes() == before["DREAMS.md"]


def test_fusion_backups_are_listed_and_restored_after_review(layered):
    snap = layered / ".fusion/backups/memory/memory-2026-08-20T04-00-00-000Z"
    (snap / "agent-memory/reviewer").mkdir(parents=True)
    (snap / "MEMORY.md").write_text("# Project Memory\n\n## Decisions\n\n- Use `pnpm` (FN-1).\n")
    (snap / "agent-memory/reviewer/MEMORY.md").write_bytes(
        (layered / ".fusion/agent-memory/reviewer/MEMORY.md").read_bytes())
    (snap / "notes.txt").write_text("not memory")
    project = Project(layered)
    backups = list_backups(project)
    assert [(b.name, b.scope) for b in backups] == [(snap.name, "project+agents")]
    assert backups[0].unknown == ("notes.txt",)
    current = (layered / MEM / "MEMORY.md").read_bytes()
    proposal = stage_restore(project, snap.name)
    assert proposal.paths == (f"{MEM}/MEMORY.md",)  # the agent's copy is the same as now: nothing to restore
    assert proposal.lost_facts  # restoring the old MEMORY.md would lose what was added since
    assert (layered / MEM / "MEMORY.md").read_bytes() == current  # staged only
    apply_proposal(project, proposal.id, allow_loss=True)
    assert (layered / MEM / "MEMORY.md").read_text() == "# Project Memory\n\n## Decisions\n\n- Use `pnpm` (FN-1).\n"
    assert any(v.path == f"{MEM}/MEMORY.md" for v in project.list_versions())


def test_changes_the_pipeline_noticed_form_one_run(layered):
    from core.storage.noticed import record_noticed

    project = Project(layered)
    pending = []
    for name in ("2026-08-19.md", "2026-08-20.md"):
        path = layered / MEM / name
        before = path.read_text()
        after = f"# Daily Memory {name[:-3]}\n\n<!-- Processed into dreams on 2026-08-21T04:00:00.000Z -->\n"
        path.write_text(after)  # Fusion's dream run, outside memdesk
        pending.append(record_noticed(project, f"{MEM}/{name}", before, after))
    for future in pending:
        future.result(timeout=10)
    runs = program_runs(project)
    assert len(runs) == 1 and runs[0].describe().startswith("2 documents rewritten at ")
    assert "FN-1657" in {f.fact for f in check_run(project, runs[0]).lost_facts}
