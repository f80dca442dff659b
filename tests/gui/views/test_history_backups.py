"""Fusion's memory backups beside History (issue 21, must-have 4): listed in the History view with what a
restore would change, staged as a proposal on "Review restore…", reviewed as a diff in the Consolidation view
and applied through the pipeline (the replaced text kept in history). A copy in the snapshot that is a link
out of the project is listed as unknown and never read."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from core.storage.history import versions as history
from tests.gui.test_outside_run import window  # noqa: F401  (the layered project in a real window)

SNAP = ".fusion/backups/memory/memory-2026-08-20T04-00-00-000Z"
MEM = ".fusion/memory/MEMORY.md"
AGENT = ".fusion/agent-memory/reviewer/MEMORY.md"


def _snapshot(root: Path, outside: Path) -> dict[str, bytes]:
    snap = root / SNAP
    (snap / "agent-memory" / "reviewer").mkdir(parents=True)
    old_mem = (root / MEM).read_text(encoding="utf-8") + "\n- FN-4242 lived in the backup only\n"
    old_agent = "# Reviewer memory\n\n- `pnpm lint` before a review (from the backup)\n"
    (snap / "MEMORY.md").write_text(old_mem, encoding="utf-8")
    (snap / "agent-memory" / "reviewer" / "MEMORY.md").write_text(old_agent, encoding="utf-8")
    outside.write_text("# not memory: outside the project\n", encoding="utf-8")
    (snap / "DREAMS.md").symlink_to(outside)
    return {MEM: old_mem.encode(), AGENT: old_agent.encode()}


def test_history_lists_fusions_backups_and_restores_one_after_its_diff(qtbot, window, layered_project,  # noqa: F811
                                                                        tmp_path):
    root = layered_project
    outside = tmp_path / "outside.md"
    wanted = _snapshot(root, outside)
    dreams_before = (root / ".fusion/memory/DREAMS.md").read_bytes()
    hist = window.show_view("history")
    hist.refresh()
    strip = hist.backups
    assert strip.isVisible() and strip.picker.count() == 1
    assert strip.picker.itemText(0).startswith("memory-2026-08-20T04-00-00-000Z (project+agents, 2 documents)")
    qtbot.waitUntil(lambda: "A restore would change" in strip.summary.text(), timeout=10_000)  # compared off-thread
    assert "A restore would change 2 of 2 documents" in strip.summary.text(), strip.summary.text()
    assert "MEMORY.md (+2 −0), reviewer/MEMORY.md (+2 −26)" in strip.summary.text()
    qtbot.mouseClick(strip.review_button, Qt.MouseButton.LeftButton)
    view = window.view("consolidation")
    assert window.tabs.tabText(window.tabs.currentIndex()) == "Consolidation"
    assert view.proposal is not None and view.proposal.summary.startswith("Restore Fusion's memory backup")
    assert {c.path for c in view.proposal.changes} == {MEM, AGENT}
    assert not any((root / rel).read_bytes() == data for rel, data in wanted.items())  # nothing written yet
    view.allow_loss.setChecked(True)  # the agent's newer lines are replaced by the backup's: shown, consented
    qtbot.mouseClick(view.apply_button, Qt.MouseButton.LeftButton)
    assert "applied" in view.outcome.text(), (view.outcome.text(), view.banner.text())
    for rel, data in wanted.items():
        assert (root / rel).read_bytes() == data, rel
    assert (root / ".fusion/memory/DREAMS.md").read_bytes() == dreams_before  # the linked copy was never used
    assert outside.read_text(encoding="utf-8") == "# not memory: outside the project\n"
    assert any(v.path == AGENT for v in history.list_versions(root, AGENT))  # what the restore replaced is kept
