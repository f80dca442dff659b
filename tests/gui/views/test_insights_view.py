"""InsightsView: the sample insights grouped with counts, the raw editor, and reviewing a stored proposal."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from core.automation.extraction import run_extraction
from core.insights import MEMORY_INSIGHTS_PATH, parse_insights_markdown
from core.proposals import list_proposals, load_proposal, reject_prune
from core.providers import OfflineProvider
from gui.models import review_status
from gui.session import ProjectSession
from gui.views.insights_view import InsightsView

REPLY = ".fusion/extraction-reply.json"


def make_view(qtbot, root: Path) -> InsightsView:
    view = InsightsView(ProjectSession(root))
    qtbot.addWidget(view)
    view.resize(1280, 800)
    view.show()
    return view


def bullet_count(root: Path) -> int:
    return sum(len(s.bullets) for s in parse_insights_markdown((root / MEMORY_INSIGHTS_PATH).read_text()))


def section_rows(view: InsightsView) -> dict[str, int]:
    model = view.file_panel.model
    return {model.index(r, 0).data(): model.rowCount(model.index(r, 0)) for r in range(model.rowCount())}


def test_insights_are_grouped_by_category_with_counts(qtbot, sample_project: Path) -> None:
    view = make_view(qtbot, sample_project)
    assert section_rows(view) == {"Patterns (4)": 4, "Principles (4)": 4, "Conventions (4)": 4,
                                  "Pitfalls (5)": 5, "Context (4)": 4}
    assert "21 insights" in view.file_panel.summary.text()
    assert "2026-11-20" in view.file_panel.summary.text()
    model = view.file_panel.model
    patterns = model.index(0, 0)
    assert model.index(0, 1, patterns).data() == "TP-31"
    assert model.index(0, 0, patterns).data().startswith("Claim work with a single")
    assert "(source:" not in model.index(0, 0, patterns).data()
    assert all("<!--" not in model.index(r, 0, model.index(s, 0)).data()
               for s in range(model.rowCount()) for r in range(model.rowCount(model.index(s, 0))))


def test_a_multi_line_bullet_is_kept_whole(qtbot, sample_project: Path) -> None:
    view = make_view(qtbot, sample_project)
    model = view.file_panel.model
    principles = model.index(1, 0)
    migration = model.index(2, 0, principles).data()
    assert migration.startswith("Migrations must stay backward compatible")
    assert migration.endswith("until the rollout finishes")
    assert "new pods start and the old pods keep serving" in migration
    assert model.index(2, 1, principles).data() == ""


def test_import_reply_stores_a_proposal_and_lists_its_new_insights(qtbot, sample_project: Path) -> None:
    view = make_view(qtbot, sample_project)
    proposals = []
    view.session.proposalChanged.connect(proposals.append)
    assert view.import_reply(sample_project / REPLY)
    [stored] = list_proposals(sample_project)
    assert proposals[-1] == stored and view.session.proposal == stored
    assert stored.origin == "import" and stored.pruned_memory is not None
    model = view.proposals.model
    assert len(model.rows) == 5  # the sixth is in the insights file already: left out, and said so
    assert not any("database clock" in i.insight.content for i in model.rows)
    assert [review_status(i) for i in model.rows] == ["new"] * 5
    origin = view.proposals.origin.text()
    assert "extraction-reply.json (imported)" in origin and "UTC" in origin
    assert "5 new insights (1 already in the file, left out) · prune ready for review" in origin
    assert "Working memory is in good shape" in view.proposals.summary.text()
    assert view.proposals.status.text() == ("Imported extraction-reply.json: 5 insights proposed (1 already known), "
                                            "prune ready for review")
    assert not view.proposals.picker.isVisible()


def test_accept_two_reject_the_rest_merge_adds_exactly_two(qtbot, sample_project: Path) -> None:
    view = make_view(qtbot, sample_project)
    before = bullet_count(sample_project)
    view.import_reply(sample_project / REPLY)
    panel, model = view.proposals, view.proposals.model
    assert not panel.merge_button.isEnabled()
    panel.select_row(0)
    qtbot.mouseClick(panel.accept_button, Qt.MouseButton.LeftButton)
    panel.select_row(3)
    qtbot.mouseClick(panel.accept_button, Qt.MouseButton.LeftButton)
    for row in (1, 2, 4):
        panel.select_row(row)
        qtbot.mouseClick(panel.reject_button, Qt.MouseButton.LeftButton)
    assert [i.state for i in model.rows] == ["accepted", "rejected", "rejected", "accepted", "rejected"]
    assert review_status(model.rows[1]) == "to reject"
    assert panel.merge_button.text() == "Merge 2, reject 3"
    qtbot.mouseClick(panel.merge_button, Qt.MouseButton.LeftButton)
    assert bullet_count(sample_project) == before + 2
    text = (sample_project / MEMORY_INSIGHTS_PATH).read_text()
    assert "ON CONFLICT (queue, idempotency_key)" in text and "(source: TP-88)" in text
    assert "RetryableError" not in text
    stored = load_proposal(sample_project, view.session.proposal.id)
    assert [i.status for i in stored.insights] == ["accepted", "rejected", "rejected", "accepted", "rejected"]
    assert [i.state for i in model.rows] == ["merged", "rejected", "rejected", "merged", "rejected"]
    assert [review_status(i) for i in model.rows] == ["merged", "rejected", "rejected", "merged", "rejected"]
    assert "Patterns (5)" in section_rows(view)
    assert panel.status.text() == "Merged 2 insights into .fusion/memory-insights.md; rejected 3 insights."
    assert not panel.merge_button.isEnabled()


def test_unsaved_choices_survive_a_prune_decision_on_the_same_proposal(qtbot, sample_project: Path) -> None:
    view = make_view(qtbot, sample_project)
    view.import_reply(sample_project / REPLY)
    view.proposals.set_row_choice(0, "accepted")
    review = reject_prune(sample_project, view.session.proposal.id)
    view.session.set_proposal(review.proposal)  # as the prune view does
    assert view.proposals.model.rows[0].state == "accepted" and view.proposals.merge_button.isEnabled()


def test_a_bad_reply_says_why_and_changes_nothing(qtbot, sample_project: Path, tmp_path: Path) -> None:
    view = make_view(qtbot, sample_project)
    view.import_reply(sample_project / REPLY)
    shown = view.session.proposal
    files = sorted(p.name for p in (sample_project / ".fusion").rglob("*"))
    bad = tmp_path / "reply.txt"
    bad.write_text("Sorry, I could not produce the JSON this time.")
    assert view.import_reply(bad) is False
    assert view.banner.isVisible() and "Could not import reply.txt" in view.banner.text()
    assert "Nothing was changed" in view.banner.text()
    assert len(view.proposals.model.rows) == 5 and view.session.proposal == shown
    assert view.import_reply(tmp_path / "missing.json") is False
    assert sorted(p.name for p in (sample_project / ".fusion").rglob("*")) == files


def test_a_picker_lists_the_pending_proposals_newest_first(qtbot, sample_project: Path) -> None:
    view = make_view(qtbot, sample_project)
    view.import_reply(sample_project / REPLY)
    first = view.session.proposal
    offline = run_extraction(sample_project, OfflineProvider("offline"))
    assert offline.ok and offline.proposal_id
    view.session.load_pending_proposal()
    picker = view.proposals.picker
    assert picker.isVisible() and picker.count() == 2
    assert picker.itemData(0) == offline.proposal_id and "offline" in picker.itemText(0)
    assert view.session.proposal.id == offline.proposal_id
    picker.setCurrentIndex(1)
    picker.activated.emit(1)
    assert view.session.proposal.id == first.id
    assert len(view.proposals.model.rows) == 5


def test_run_extraction_button_asks_for_a_run(qtbot, sample_project: Path) -> None:
    view = make_view(qtbot, sample_project)
    with qtbot.waitSignal(view.runExtractionRequested):
        qtbot.mouseClick(view.proposals.run_button, Qt.MouseButton.LeftButton)
    assert "No proposal under review" in view.proposals.origin.text()


def test_raw_edit_saves_through_the_file_and_updates_the_groups(qtbot, sample_project: Path) -> None:
    view = make_view(qtbot, sample_project)
    panel = view.file_panel
    panel.tabs.setCurrentIndex(1)
    assert not panel.save_button.isEnabled()
    cursor = panel.raw.textCursor()
    cursor.setPosition(panel.raw.toPlainText().index("## Principles"))
    panel.raw.setTextCursor(cursor)
    qtbot.keyClicks(panel.raw, "- Batch enqueues in one transaction (source: TP-9)")
    qtbot.keyClick(panel.raw, Qt.Key.Key_Return)
    qtbot.keyClick(panel.raw, Qt.Key.Key_Return)
    assert panel.save_button.isEnabled()
    qtbot.mouseClick(panel.save_button, Qt.MouseButton.LeftButton)
    text = (sample_project / MEMORY_INSIGHTS_PATH).read_text()
    assert "- Batch enqueues in one transaction (source: TP-9)\n\n## Principles" in text
    assert "Patterns (5)" in section_rows(view)
    assert not panel.save_button.isEnabled()


def test_raw_save_refuses_when_the_file_changed_on_disk(qtbot, sample_project: Path) -> None:
    view = make_view(qtbot, sample_project)
    panel = view.file_panel
    qtbot.keyClicks(panel.raw, "my edit ")
    path = sample_project / MEMORY_INSIGHTS_PATH
    path.write_text(path.read_text().replace("## Context", "## Context\n- written by an agent"))
    on_disk = path.read_bytes()
    view.refresh()  # as a watcher would; the edit in progress is kept
    assert panel.raw.toPlainText().startswith("my edit ")
    qtbot.mouseClick(panel.save_button, Qt.MouseButton.LeftButton)
    assert path.read_bytes() == on_disk
    assert "changed on disk" in view.banner.text()
    assert panel.raw.toPlainText().startswith("my edit ")
    qtbot.mouseClick(panel.reload_button, Qt.MouseButton.LeftButton)
    assert panel.raw.toPlainText() == on_disk.decode()


def test_missing_insights_file(qtbot, project: Path) -> None:
    view = make_view(qtbot, project)
    assert view.file_panel.model.rowCount() == 0
    assert "No insights file yet" in view.file_panel.summary.text()


def test_screenshot(qtbot, sample_project: Path, screenshot) -> None:
    view = make_view(qtbot, sample_project)
    view.import_reply(sample_project / REPLY)
    run_extraction(sample_project, OfflineProvider("offline"))  # a second pending proposal: the picker shows
    view.session.load_pending_proposal()
    view.proposals.picker.activated.emit(1)
    view.proposals.set_row_choice(0, "accepted")
    view.proposals.set_row_choice(2, "rejected")
    screenshot(view, "insights")
