"""Prune review change by change: accept or reject each hunk by keyboard and mouse, the proposer's reasons
beside the removed lines, and Apply writing exactly the accepted changes (validated again first)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QThreadPool
from PySide6.QtWidgets import QApplication

from core.automation.extraction import run_extraction
from core.documents.diff import apply_hunks
from core.insights import MEMORY_WORKING_PATH
from core.proposals import load_proposal
from core.providers import OfflineProvider
from core.storage.history import versions as history
from gui.session import ProjectSession
from gui.views.prune_view import PruneView

NOW = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _drain_workers(qapp):
    yield
    QThreadPool.globalInstance().waitForDone(5000)


def make_view(qtbot, root: Path, size: tuple[int, int] = (1280, 800)) -> PruneView:
    view = PruneView(ProjectSession(root))
    qtbot.addWidget(view)
    view.resize(*size)
    with qtbot.waitActive(view):
        view.show()
        view.activateWindow()
    return view


def offline_prune(qtbot, view: PruneView) -> None:
    """Review the offline provider's prune of the sample (old dated entries and transient notes)."""
    run = run_extraction(view.session.root, OfflineProvider(), now=NOW)
    assert run.ok and run.proposal_id, run.message
    view.session.review_proposal(run.proposal_id)
    qtbot.waitUntil(lambda: view.preview is not None, timeout=10_000)
    assert view.hunks.accepted() == [] and not view.apply_button.isEnabled()  # nothing accepted yet
    assert "No change is accepted" in view.apply_button.toolTip()
    view.hunks.list.setFocus()
    qtbot.keyClick(view.hunks.list, Qt.Key.Key_A, Qt.KeyboardModifier.ShiftModifier)  # the operator accepts all


def label(view: PruneView, row: int) -> str:
    return view.hunks.list.item(row).text()


def test_each_change_is_listed_with_the_reasons_given(qtbot, sample_project: Path) -> None:
    view = make_view(qtbot, sample_project)
    offline_prune(qtbot, view)
    hunks = view.preview.diff.hunks
    assert view.hunks.list.count() == len(hunks) == 5
    assert view.hunks.accepted() == [0, 1, 2, 3, 4]
    texts = [label(view, r) for r in range(5)]
    assert texts[0].startswith("Line 24 · −1 · transient · “- Currently mid-way through TP-388")
    assert "dated entry older than 30 days (4); transient (2)" in texts[4]
    # Beside each removed line, in the proposed side's empty row: the reason.
    row = next(i for i, r in enumerate(view.diff.result.rows) if r.kind == "delete" and "<!-- 2026-10-14 -->" in r.left)
    assert view.diff.right.line_kind(row) == "filler"
    assert view.diff.right.notes[row] == "← dated entry older than 30 days"
    view.diff.show_row(row)
    assert view.diff.detail.heading.text() == f"Line {view.diff.result.rows[row].left_no} removed — reason given: " \
                                              "dated entry older than 30 days"
    assert view.apply_button.text() == "Apply prune" and view.apply_button.isEnabled()


def test_apply_writes_only_the_accepted_changes(qtbot, sample_project: Path) -> None:
    before = (sample_project / MEMORY_WORKING_PATH).read_text()
    view = make_view(qtbot, sample_project)
    offline_prune(qtbot, view)
    hunks = view.preview.diff.hunks
    view.hunks.list.setFocus()
    view.hunks.list.setCurrentRow(1)
    qtbot.keyClick(view.hunks.list, Qt.Key.Key_R)  # keep the TODO line
    assert view.hunks.list.currentRow() == 2  # moved on
    qtbot.keyClick(view.hunks.list, Qt.Key.Key_Space)  # toggles the current one off…
    assert view.hunks.accepted() == [0, 3, 4]
    qtbot.keyClick(view.hunks.list, Qt.Key.Key_A)  # …and A accepts it again
    assert view.hunks.accepted() == [0, 2, 3, 4]
    assert view.apply_button.text() == "Apply 4 of 5 changes"
    assert view.hunks.title.text().startswith("<b>Changes:</b> 4 of 5 accepted")
    kept = view.diff.result.rows[hunks[1].row_start].left
    assert view.diff.right.notes[hunks[1].row_start] == "← kept (you rejected this change); transient"
    assert view.diff.left.excluded == frozenset(range(hunks[1].row_start, hunks[1].row_end))
    expected = apply_hunks(before, view.candidate, hunks, [0, 2, 3, 4])
    qtbot.keyClick(view.hunks.list, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    written = (sample_project / MEMORY_WORKING_PATH).read_text()
    assert written == expected.strip() + "\n"
    assert kept in written and "Currently mid-way through TP-388" not in written
    assert "<!-- 2026-10-14 -->" not in written
    versions = history.list_versions(sample_project, MEMORY_WORKING_PATH)
    assert versions[0].source == "prune" and history.get_version(sample_project, versions[0].id)[1] == before
    assert load_proposal(sample_project, view.session.proposal.id).prune_status == "applied"
    assert "Applied</b> (4 of 5 changes)." in view.outcome_label.text()


def test_reject_all_disables_apply(qtbot, sample_project: Path) -> None:
    before = (sample_project / MEMORY_WORKING_PATH).read_bytes()
    view = make_view(qtbot, sample_project)
    offline_prune(qtbot, view)
    view.hunks.list.setFocus()
    view.hunks.list.setCurrentRow(0)
    qtbot.keyClick(view.hunks.list, Qt.Key.Key_R, Qt.KeyboardModifier.ShiftModifier)
    assert view.hunks.accepted() == []
    assert not view.apply_button.isEnabled()
    assert "No change is accepted" in view.apply_button.toolTip()
    assert view.apply() is None and (sample_project / MEMORY_WORKING_PATH).read_bytes() == before
    qtbot.keyClick(view.hunks.list, Qt.Key.Key_A, Qt.KeyboardModifier.ShiftModifier)
    assert view.apply_button.isEnabled() and "Apply is disabled" not in view.outcome_label.text()


def test_a_selection_that_drops_required_sections_is_refused(qtbot, sample_project: Path, tmp_path: Path) -> None:
    memory = (sample_project / MEMORY_WORKING_PATH).read_text()
    head, rest = memory.split("## Architecture", 1)
    arch_conv, pitfalls_on = rest.split("## Pitfalls", 1)
    candidate = head + "## Pitfalls" + pitfalls_on.rstrip("\n") + "\n\n## Architecture" + arch_conv.rstrip("\n") + "\n"
    path = tmp_path / "reordered.md"
    path.write_text(candidate)
    view = make_view(qtbot, sample_project)
    assert view.load_candidate_file(path)
    qtbot.waitUntil(lambda: view.preview is not None, timeout=10_000)
    view.hunks.list.setFocus()
    qtbot.keyClick(view.hunks.list, Qt.Key.Key_A, Qt.KeyboardModifier.ShiftModifier)
    assert view.apply_button.isEnabled()
    hunks = view.preview.diff.hunks
    drop = next(h.index for h in hunks if h.removed and not h.added)
    view.hunks.set_accepted([h.index for h in hunks if h.index != drop], False)  # only the removal stays
    assert not view.apply_button.isEnabled()
    assert "Missing required sections" in view.apply_button.toolTip()
    assert "✗ Invalid" in view.validation_label.text()
    assert view.apply() is None
    assert (sample_project / MEMORY_WORKING_PATH).read_text() == memory


def test_usable_at_800_by_600(qtbot, sample_project: Path) -> None:
    view = make_view(qtbot, sample_project, (800, 600))
    offline_prune(qtbot, view)
    assert view.minimumSizeHint().width() <= 800 and view.width() == 800
    for widget in (view.apply_button, view.reject_button, view.hunks.list, view.diff.left, view.diff.right):
        assert widget.isVisible() and widget.geometry().right() <= view.width()
    assert view.hunks.list.visualItemRect(view.hunks.list.item(4)).bottom() <= view.hunks.list.viewport().height()
    assert "Ctrl+Return" in view.apply_button.toolTip() and "Ctrl+Shift+R" in view.reject_button.toolTip()


def test_reject_prune_by_keyboard(qtbot, sample_project: Path) -> None:
    before = (sample_project / MEMORY_WORKING_PATH).read_bytes()
    view = make_view(qtbot, sample_project)
    offline_prune(qtbot, view)
    view.hunks.list.setFocus()
    assert QApplication.focusWidget() is view.hunks.list
    qtbot.keyClick(view.hunks.list, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert view.session.proposal.prune_status == "rejected"
    assert (sample_project / MEMORY_WORKING_PATH).read_bytes() == before


def test_screenshot(qtbot, sample_project: Path, screenshot) -> None:
    view = make_view(qtbot, sample_project)
    offline_prune(qtbot, view)
    view.hunks.list.setFocus()
    view.hunks.list.setCurrentRow(1)
    qtbot.keyClick(view.hunks.list, Qt.Key.Key_R)
    view.hunks.list.setCurrentRow(4)
    screenshot(view, "prune-hunks")
