"""PruneView: the diff of a stored proposal's prune, its validation, staleness, Apply and Reject as an operator does them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt, QThreadPool

from core.automation.extraction import store_imported_reply
from core.insights import MEMORY_AUDIT_PATH, MEMORY_AUDIT_STATE_PATH, MEMORY_WORKING_PATH
from core.insights import parse_insight_extraction_response as parse_reply
from core.proposals import list_proposals, load_proposal
from core.storage.history import versions as history
from gui.proposal_text import STALE_BANNER
from gui.session import ProjectSession
from gui.views.prune_view import PruneView


@pytest.fixture(autouse=True)
def _drain_workers(qapp):
    yield
    QThreadPool.globalInstance().waitForDone(5000)

REPLY = ".fusion/extraction-reply.json"


def make_view(qtbot, root: Path) -> PruneView:
    view = PruneView(ProjectSession(root))
    qtbot.addWidget(view)
    view.resize(1280, 800)
    view.show()
    return view


def wait_for_diff(qtbot, view: PruneView, *, accept_all: bool = True) -> None:
    """Wait for the diff; then, as the operator, accept every change (a review starts with none accepted)."""
    qtbot.waitUntil(lambda: view.preview is not None, timeout=10_000)
    if accept_all:
        assert view.hunks.accepted() == []
        view.hunks.list.setFocus()
        qtbot.keyClick(view.hunks.list, Qt.Key.Key_A, Qt.KeyboardModifier.ShiftModifier)


def store_reply(view: PruneView, text: str | None = None) -> str:
    """Store the sample reply (or ``text``) as a proposal, as an import or a run does; return its id."""
    run = store_imported_reply(view.session.root, text or (view.session.root / REPLY).read_text(), "reply.json")
    assert run.ok and run.proposal_id, run.message
    return run.proposal_id


def load_reply(qtbot, view: PruneView) -> None:
    view.session.review_proposal(store_reply(view))
    wait_for_diff(qtbot, view)


def test_shows_the_diff_and_validation_of_the_proposed_prune(qtbot, sample_project: Path) -> None:
    view = make_view(qtbot, sample_project)
    assert view.diff.busy and not view.apply_button.isEnabled()
    assert "No prune candidate" in view.source_label.text()
    view.session.review_proposal(store_reply(view))
    assert view.diff.message.text() == "Computing diff…"
    wait_for_diff(qtbot, view)
    assert not view.diff.busy
    result = view.diff.result
    assert result.removed == 19 and result.added == 0
    left, right = view.diff.left, view.diff.right
    assert left.blockCount() == right.blockCount() == len(result.rows)
    row = next(i for i, r in enumerate(result.rows) if r.kind == "delete" and "TP-388" in r.left)
    assert left.line_kind(row) == "delete" and right.line_kind(row) == "filler"
    assert "✓ Valid" in view.validation_label.text()
    for name in ("Architecture", "Conventions", "Pitfalls"):
        assert f"✓ {name}" in view.sections_label.text()
    memory = (sample_project / MEMORY_WORKING_PATH).read_text()
    assert f"{len(memory):,} → " in view.sizes_label.text()
    assert "reply.json (imported)" in view.source_label.text()
    assert view.apply_button.isEnabled() and view.reject_button.isEnabled()
    assert not view.banner.isVisible() and not view.run_button.isVisible()


def test_scrolling_one_pane_scrolls_the_other(qtbot, sample_project: Path) -> None:
    view = make_view(qtbot, sample_project)
    load_reply(qtbot, view)
    view.diff.left.verticalScrollBar().setValue(40)
    assert view.diff.right.verticalScrollBar().value() == 40
    view.diff.right.horizontalScrollBar().setValue(30)
    assert view.diff.left.horizontalScrollBar().value() == 30
    view.diff.left.verticalScrollBar().setValue(0)
    qtbot.mouseClick(view.diff.left.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(40, 4))  # the top row
    assert view.diff.current_hunk() is None
    first, second = view.diff.result.hunk_starts()[:2]
    qtbot.mouseClick(view.diff.next_button, Qt.MouseButton.LeftButton)
    assert view.diff.current_row() == first - 3 and view.diff.current_hunk().index == 0
    qtbot.mouseClick(view.diff.next_button, Qt.MouseButton.LeftButton)
    assert view.diff.current_row() == second - 3
    qtbot.mouseClick(view.diff.previous_button, Qt.MouseButton.LeftButton)
    assert view.diff.current_row() == first - 3


def test_a_candidate_file_is_stored_and_reviewed_like_a_proposal(qtbot, sample_project: Path, tmp_path: Path) -> None:
    memory = (sample_project / MEMORY_WORKING_PATH).read_text()
    candidate = memory.replace("single transaction", "single short transaction", 1)
    path = tmp_path / "candidate.md"
    path.write_text(candidate)
    view = make_view(qtbot, sample_project)
    assert view.load_candidate_file(path)
    wait_for_diff(qtbot, view)
    row = next(i for i, r in enumerate(view.diff.result.rows) if r.kind == "replace")
    changed = view.diff.result.rows[row]
    assert [changed.right[a:b] for a, b in changed.right_spans] == ["short"]
    assert view.diff.right.line_kind(row) == "replace"
    assert "candidate.md (loaded)" in view.source_label.text()
    assert [p.id for p in list_proposals(sample_project)] == [view.session.proposal.id]
    qtbot.mouseClick(view.apply_button, Qt.MouseButton.LeftButton)
    assert (sample_project / MEMORY_WORKING_PATH).read_text() == candidate.strip() + "\n"


def test_apply_writes_the_prune_keeps_history_and_records_the_audit(qtbot, sample_project: Path) -> None:
    view = make_view(qtbot, sample_project)
    old = (sample_project / MEMORY_WORKING_PATH).read_text()
    load_reply(qtbot, view)
    replaced, audits = [], []
    view.session.memoryReplaced.connect(replaced.append)
    view.session.auditChanged.connect(lambda: audits.append(1))
    qtbot.mouseClick(view.apply_button, Qt.MouseButton.LeftButton)
    new = (sample_project / MEMORY_WORKING_PATH).read_text()
    candidate = parse_reply((sample_project / REPLY).read_text()).pruned_memory
    assert new == candidate.strip() + "\n"
    versions = history.list_versions(sample_project, MEMORY_WORKING_PATH)
    assert versions[0].source == "prune" and history.get_version(sample_project, versions[0].id)[1] == old
    state = json.loads((sample_project / MEMORY_AUDIT_STATE_PATH).read_text())
    assert state["pruning"]["applied"] is True and state["pruning"]["newSize"] == len(new)
    assert (sample_project / MEMORY_AUDIT_PATH).exists()
    assert replaced == ["prune"] and audits == [1]
    assert "Applied</b> (all changes)." in view.outcome_label.text()
    proposal = view.session.proposal
    assert proposal.prune_status == "applied" and len(proposal.pending_insights) == 5  # insights wait on
    assert load_proposal(sample_project, proposal.id).prune_status == "applied"
    assert view.candidate is None and not view.apply_button.isEnabled() and not view.reject_button.isEnabled()
    assert view.diff.message.text() == "The prune of this proposal was applied."


def test_invalid_candidate_has_apply_disabled_and_says_why(qtbot, sample_project: Path, tmp_path: Path) -> None:
    memory = (sample_project / MEMORY_WORKING_PATH).read_text()
    candidate = memory.replace("## Architecture", "## Design").replace("## Pitfalls", "## Gotchas")
    path = tmp_path / "bad.md"
    path.write_text(candidate)
    view = make_view(qtbot, sample_project)
    view.load_candidate_file(path)
    wait_for_diff(qtbot, view)
    assert view.session.proposal.prune_status == "invalid"
    assert "✗ Invalid" in view.validation_label.text()
    assert "✗ Architecture" in view.sections_label.text() and "✗ Pitfalls" in view.sections_label.text()
    assert "✓ Conventions" in view.sections_label.text()
    assert not view.apply_button.isEnabled()
    assert "Apply is disabled." in view.outcome_label.text() and "Missing required sections" in view.outcome_label.text()
    assert "Missing required sections" in view.apply_button.toolTip()
    assert view.apply() is None
    assert (sample_project / MEMORY_WORKING_PATH).read_text() == memory


def test_reject_leaves_memory_byte_identical_and_records_the_reason(qtbot, sample_project: Path) -> None:
    before = (sample_project / MEMORY_WORKING_PATH).read_bytes()
    view = make_view(qtbot, sample_project)
    load_reply(qtbot, view)
    qtbot.keyClicks(view.reason_edit, "keeps too little context")
    qtbot.mouseClick(view.reject_button, Qt.MouseButton.LeftButton)
    assert (sample_project / MEMORY_WORKING_PATH).read_bytes() == before
    state = json.loads((sample_project / MEMORY_AUDIT_STATE_PATH).read_text())
    assert state["pruning"]["reason"] == "Prune candidate rejected by the operator: keeps too little context"
    assert view.session.proposal.prune_status == "rejected"
    assert view.candidate is None and view.diff.busy and not view.reject_button.isEnabled()
    assert "rejected" in view.diff.message.text()
    assert history.list_versions(sample_project, MEMORY_WORKING_PATH) == []


def test_memory_changed_since_the_run_makes_the_prune_stale(qtbot, sample_project: Path) -> None:
    view = make_view(qtbot, sample_project)
    load_reply(qtbot, view)
    assert view.apply_button.isEnabled()
    path = sample_project / MEMORY_WORKING_PATH
    path.write_text(path.read_text() + "\n\n<!-- 2026-11-29 -->\nan agent appended this\n")
    changed = path.read_bytes()
    audits = []
    view.session.auditChanged.connect(lambda: audits.append(1))
    qtbot.mouseClick(view.apply_button, Qt.MouseButton.LeftButton)  # clicked before the view noticed
    assert path.read_bytes() == changed
    assert view.session.proposal.prune_status == "stale" and audits == [1]
    assert view.banner.text() == STALE_BANNER
    assert not view.apply_button.isEnabled() and view.run_button.isVisible()
    wait_for_diff(qtbot, view)
    assert any(r.left == "an agent appended this" for r in view.diff.result.rows)
    assert not view.apply_button.isEnabled() and view.reject_button.isEnabled()
    assert view.apply_button.toolTip() == STALE_BANNER


def test_a_change_seen_before_apply_disables_it(qtbot, sample_project: Path) -> None:
    view = make_view(qtbot, sample_project)
    proposal_id = store_reply(view)
    path = sample_project / MEMORY_WORKING_PATH
    path.write_text(path.read_text() + "\n\n<!-- 2026-11-29 -->\nwritten by hand\n")
    view.session.review_proposal(proposal_id)
    wait_for_diff(qtbot, view)
    assert view.stale and view.banner.text() == STALE_BANNER and not view.apply_button.isEnabled()
    assert load_proposal(sample_project, proposal_id).prune_status == "pending"  # looking changes nothing


def test_a_reply_without_a_prune_has_nothing_to_review(qtbot, sample_project: Path) -> None:
    data = json.loads((sample_project / REPLY).read_text())
    data["prunedMemory"] = None
    view = make_view(qtbot, sample_project)
    view.session.review_proposal(store_reply(view, json.dumps(data)))
    assert view.diff.busy and "There is no prune to review" in view.diff.message.text()
    assert not view.apply_button.isEnabled() and not view.reject_button.isEnabled()


def test_bad_candidate_file_says_why(qtbot, sample_project: Path, tmp_path: Path) -> None:
    path = tmp_path / "reply.json"
    path.write_text('{"summary": "x", "insights": []}')
    view = make_view(qtbot, sample_project)
    assert view.load_candidate_file(path) is False
    assert "offers no prune and nothing new" in view.banner.text()
    path.write_text("{ not json")
    assert view.load_candidate_file(path) is False
    assert "not an extraction reply" in view.banner.text()
    assert view.candidate is None and list_proposals(sample_project) == []


def test_readonly_backend_cannot_apply(qtbot, sample_project: Path) -> None:
    session = ProjectSession(sample_project)
    session.switch_backend("readonly")
    view = PruneView(session)
    qtbot.addWidget(view)
    load_reply(qtbot, view)
    assert not view.apply_button.isEnabled()
    assert "cannot write" in view.apply_button.toolTip()


def test_screenshot(qtbot, sample_project: Path, screenshot) -> None:
    view = make_view(qtbot, sample_project)
    load_reply(qtbot, view)
    screenshot(view, "prune")


def test_prune_shows_what_agents_load_before_and_after(qtbot, real_project: Path) -> None:
    """The real memory is past Claude Code's cut; a prune down to its first 100 lines is not."""
    cfg = real_project / ".fusion" / "config.json"
    cfg.write_text(json.dumps({"memdeskBudgetConsumers": {".fusion/memory.md": ["claude-code"]}}))
    view = make_view(qtbot, real_project)
    memory = (real_project / MEMORY_WORKING_PATH).read_text()
    candidate = "\n".join(memory.splitlines()[:100]) + "\n"
    reply = json.dumps({"summary": "prune", "insights": [], "prunedMemory": candidate})
    view.session.review_proposal(store_reply(view, reply))
    wait_for_diff(qtbot, view)
    text = view.budget_label.text()
    assert view.budget_label.isVisible() and "Claude Code" in text
    line = text.split(" — ", 1)[1]  # after the label's caption
    before, after = line.split(" → ", 1)
    assert "cut at line 167" in before and "all 100 lines loaded" in after
