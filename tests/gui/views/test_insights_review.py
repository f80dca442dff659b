"""Working through the proposed insights as an operator does: by keyboard, filtered, grouped, a category
at a time, with the source entry one click away, and rows as tall as their text at any width."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication

from core.automation.extraction import run_extraction
from core.insights import MEMORY_INSIGHTS_PATH, MEMORY_WORKING_PATH
from core.proposals import load_proposal
from core.providers import OfflineProvider
from gui.models import ProposalReviewModel
from gui.session import ProjectSession
from gui.views.insights_view import InsightsView

REPLY = ".fusion/extraction-reply.json"
REAL_MEMORY = Path(__file__).resolve().parents[2] / "data" / "fusion-real" / ".fusion" / "memory.md"


def make_view(qtbot, root: Path, size: tuple[int, int] = (1280, 800)) -> InsightsView:
    view = InsightsView(ProjectSession(root))
    qtbot.addWidget(view)
    view.resize(*size)
    with qtbot.waitActive(view):  # shortcuts and focus need an active window
        view.show()
        view.activateWindow()
    return view


@pytest.fixture
def real_review(qtbot, tmp_path: Path) -> InsightsView:
    """The real agent-written memory with the offline provider's 91 proposed insights under review."""
    root = tmp_path / "real"
    (root / ".fusion").mkdir(parents=True)
    shutil.copyfile(REAL_MEMORY, root / ".fusion" / "memory.md")
    run = run_extraction(root, OfflineProvider())
    assert run.ok and run.proposal_id
    view = make_view(qtbot, root)
    view.session.review_proposal(run.proposal_id)
    return view


def imported(qtbot, root: Path) -> InsightsView:
    view = make_view(qtbot, root)
    assert view.import_reply(root / REPLY)
    return view


def group_titles(view: InsightsView) -> list[str]:
    proxy = view.proposals.filter
    return [proxy.index(r, 0).data() for r in range(proxy.rowCount())]


def current_number(view: InsightsView) -> int | None:
    row = view.proposals.current_row()
    return view.proposals.model.rows[row].number if row is not None else None


def test_grouped_by_category_with_counts(qtbot, sample_project: Path) -> None:
    view = imported(qtbot, sample_project)
    assert group_titles(view) == ["Patterns (1)", "Conventions (1)", "Pitfalls (2)", "Context (1)"]
    panel = view.proposals
    pitfalls = panel.filter.index(2, 0)
    assert panel.filter.rowCount(pitfalls) == 2
    assert pitfalls.data(Qt.ItemDataRole.ToolTipRole) == "2 · 2 new"
    assert panel.list.isExpanded(pitfalls)


def test_inline_markdown_is_rendered_and_raw_html_escaped(qtbot, sample_project: Path) -> None:
    view = imported(qtbot, sample_project)
    panel = view.proposals
    row = next(r for r, i in enumerate(panel.model.rows) if "RetryableError" in i.insight.content)
    index = panel._proxy_index(row)
    assert "<code>RetryableError</code>" in index.data(ProposalReviewModel.HtmlRole)
    shown = panel.list.delegate.document(index, 600, panel.list.palette()).toPlainText()
    assert "RetryableError" in shown and "`" not in shown and "new" in shown
    assert "TP-55 · memory line" in shown


def test_keyboard_accept_reject_undo_and_merge(qtbot, sample_project: Path) -> None:
    view = imported(qtbot, sample_project)
    panel = view.proposals
    panel.select_row(0)
    first = current_number(view)
    assert QApplication.focusWidget() is panel.list
    qtbot.keyClick(panel.list, Qt.Key.Key_A)
    assert panel.model.rows[0].state == "accepted" and current_number(view) != first  # moved on
    second = current_number(view)
    qtbot.keyClick(panel.list, Qt.Key.Key_R)
    assert next(i for i in panel.model.rows if i.number == second).state == "rejected"
    panel.select_row(panel.model.rows.index(next(i for i in panel.model.rows if i.number == second)))
    qtbot.keyClick(panel.list, Qt.Key.Key_U)
    assert next(i for i in panel.model.rows if i.number == second).state == "pending"
    qtbot.keyClick(panel.list, Qt.Key.Key_R)
    assert panel.merge_button.text() == "Merge 1, reject 1"
    qtbot.keyClick(panel.list, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    stored = {i.number: i.status for i in load_proposal(sample_project, view.session.proposal.id).insights}
    assert stored[first] == "accepted" and stored[second] == "rejected"
    assert "Deduplicate enqueues with" in (sample_project / MEMORY_INSIGHTS_PATH).read_text()


def test_shortcuts_are_shown_on_the_buttons_and_in_the_menu(qtbot, sample_project: Path) -> None:
    view = imported(qtbot, sample_project)
    panel = view.proposals
    assert panel.accept_button.text() == "Accept (A)" and panel.reject_button.text() == "Reject (R)"
    assert "(O)" in panel.source_button.text() and "Ctrl+Return" in panel.merge_button.toolTip()
    panel.select_row(0)
    texts = [a.text() for a in panel.category_menu.actions()]
    assert texts == ["Accept the new shown in Patterns\tShift+A", "Reject the undecided shown in Patterns\tShift+R"]


def test_typing_in_the_filter_decides_nothing(qtbot, sample_project: Path) -> None:
    view = imported(qtbot, sample_project)
    panel = view.proposals
    panel.select_row(0)
    qtbot.keyClick(panel.list, Qt.Key.Key_Slash)
    assert QApplication.focusWidget() is panel.filter_edit
    qtbot.keyClicks(panel.filter_edit, "ar")
    assert all(i.state == "pending" for i in panel.model.rows)
    assert panel.filter_edit.text() == "ar"


def test_filter_by_text_and_status_and_hide_decided(qtbot, real_review: InsightsView) -> None:
    panel = real_review.proposals
    assert len(panel.model.rows) == 91 and len(panel.visible_rows()) == 91
    qtbot.keyClicks(panel.filter_edit, "websocket")
    shown = panel.visible_rows()
    assert 0 < len(shown) < 91
    assert all("websocket" in panel.model.rows[r].insight.content.lower() for r in shown)
    assert f"{len(shown)} shown" in panel.status.text()
    panel.filter_edit.clear()
    panel.select_row(0)
    for _ in range(3):
        qtbot.keyClick(panel.list, Qt.Key.Key_A)
    qtbot.keyClick(panel.list, Qt.Key.Key_R)
    panel.status_filter.setCurrentIndex(2)  # Accepted
    assert len(panel.visible_rows()) == 3
    panel.status_filter.setCurrentIndex(3)  # Rejected
    assert len(panel.visible_rows()) == 1
    panel.status_filter.setCurrentIndex(0)
    current = current_number(real_review)
    qtbot.mouseClick(panel.hide_decided, Qt.MouseButton.LeftButton)
    assert len(panel.visible_rows()) == 87
    assert all(panel.model.rows[r].state == "pending" for r in panel.visible_rows())
    panel.list.setFocus()
    qtbot.keyClick(panel.list, Qt.Key.Key_A)  # the decided row leaves; the next undecided one is current
    assert len(panel.visible_rows()) == 86
    assert current_number(real_review) not in (None, current)
    assert panel.model.rows[panel.current_row()].state == "pending"


def test_bulk_by_category_decides_only_what_is_shown(qtbot, real_review: InsightsView) -> None:
    panel = real_review.proposals
    conventions = [r for r, i in enumerate(panel.model.rows) if i.insight.category == "convention"]
    assert len(conventions) > 3
    panel.select_row(conventions[0])
    qtbot.keyClick(panel.list, Qt.Key.Key_R)  # one decided first: bulk leaves it as it is
    panel.select_row(conventions[1])
    qtbot.keyClick(panel.list, Qt.Key.Key_A, Qt.KeyboardModifier.ShiftModifier)
    states = [panel.model.rows[r].state for r in conventions]
    assert states == ["rejected", *["accepted"] * (len(conventions) - 1)]
    assert all(i.state == "pending" for i in panel.model.rows if i.insight.category != "convention")
    assert panel.status.text().startswith(f"Accepted {len(conventions) - 1} in Conventions.")


def test_tab_moves_out_of_the_list(qtbot, sample_project: Path) -> None:
    view = imported(qtbot, sample_project)
    panel = view.proposals
    panel.select_row(0)
    qtbot.keyClick(panel.list, Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is not panel.list
    assert panel.current_row() == 0  # Tab did not move the current row either


def test_the_source_entry_is_one_click_away(qtbot, sample_project: Path) -> None:
    view = imported(qtbot, sample_project)
    panel = view.proposals
    memory = (sample_project / MEMORY_WORKING_PATH).read_text().split("\n")
    row = next(r for r, i in enumerate(panel.model.rows) if "RetryableError" in i.insight.content)
    item = panel.model.rows[row]
    assert "RetryableError" in memory[item.source_line - 1]
    index = panel._proxy_index(row)
    rect = panel.list.visualRect(index)
    doc = panel.list.delegate.document(index, rect.width(), panel.list.palette())
    link = doc.documentLayout().blockBoundingRect(doc.lastBlock())
    point = rect.topLeft() + QPoint(int(link.x()) + 12, int(link.center().y()))
    with qtbot.waitSignal(view.openSourceRequested) as opened:
        qtbot.mouseClick(panel.list.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert opened.args == [MEMORY_WORKING_PATH, item.source_line]
    panel.select_row(0)
    with qtbot.waitSignal(view.openSourceRequested) as opened:
        qtbot.keyClick(panel.list, Qt.Key.Key_O)
    assert opened.args == [MEMORY_WORKING_PATH, panel.model.rows[0].source_line]


def test_every_real_insight_finds_its_source_line(real_review: InsightsView) -> None:
    memory = (real_review.session.root / MEMORY_WORKING_PATH).read_text().split("\n")
    rows = real_review.proposals.model.rows
    assert all(i.source_line is not None for i in rows)
    for item in rows:
        first_words = " ".join(item.insight.content.replace("`", "").replace("*", "").split()[:4]).lower()
        assert first_words in " ".join(memory[item.source_line - 1].replace("`", "").replace("*", "").split()).lower()


def test_a_source_no_longer_in_the_memory_is_said_so(qtbot, sample_project: Path) -> None:
    view = imported(qtbot, sample_project)
    path = sample_project / MEMORY_WORKING_PATH
    path.write_text("# Project Memory\n\n## Architecture\n\n## Conventions\n\n## Pitfalls\n")
    view.session.memoryReplaced.emit("editor")
    panel = view.proposals
    panel.select_row(0)
    assert panel.model.rows[0].source_line is None and not panel.source_button.isEnabled()
    assert view.open_source(panel.model.rows[0].number) is False
    assert "is not in .fusion/memory.md any more" in panel.status.text()


@pytest.mark.parametrize("width", [800, 2560])
def test_row_heights_fit_the_text_right_after_a_resize(qtbot, real_review: InsightsView, width: int) -> None:
    view, panel = real_review, real_review.proposals
    view.resize(1280, 800)
    qtbot.waitUntil(lambda: panel.list.viewport().width() > 600)
    view.resize(width, 600 if width == 800 else 1440)
    qtbot.waitUntil(lambda: view.width() == width)
    assert view.minimumSizeHint().width() <= 800
    delegate = panel.list.delegate
    heights = []
    for row in panel.visible_rows()[:12]:
        index = panel._proxy_index(row)
        rect = panel.list.visualRect(index)
        doc = delegate.document(index, rect.width(), panel.list.palette())
        assert rect.width() == delegate.width_for(index)
        assert abs(rect.height() - doc.size().height()) <= 1, (row, rect.height(), doc.size().height())
        heights.append(rect.height())
    line = panel.list.fontMetrics().lineSpacing()
    assert max(heights) < 20 * line  # no 659-px rows
    if width == 2560:
        assert min(heights) < 4 * line  # a short insight is its text line plus the source line


def test_screenshot(qtbot, sample_project: Path, screenshot) -> None:
    view = imported(qtbot, sample_project)
    panel = view.proposals
    panel.select_row(0)
    qtbot.keyClick(panel.list, Qt.Key.Key_A)
    qtbot.keyClick(panel.list, Qt.Key.Key_R)
    screenshot(view, "insights-review")


def test_a_layered_project_opens_the_long_term_document(qtbot, layered_project: Path) -> None:
    run = run_extraction(layered_project, OfflineProvider())
    assert run.ok and run.proposal_id, run.message
    view = make_view(qtbot, layered_project)
    view.session.review_proposal(run.proposal_id)
    panel = view.proposals
    assert panel.model.rows
    panel.select_row(0)
    item = panel.model.rows[0]
    with qtbot.waitSignal(view.openSourceRequested) as opened:
        qtbot.keyClick(panel.list, Qt.Key.Key_O)
    assert opened.args == [".fusion/memory/MEMORY.md", item.source_line]
    memory = (layered_project / ".fusion/memory/MEMORY.md").read_text().split("\n")
    assert " ".join(item.insight.content.split()[:3]) in memory[item.source_line - 1]
