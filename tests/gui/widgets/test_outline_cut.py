"""The outline marks the sections past the load-budget cut, on the real memory, as the operator sees them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtGui import QPalette, QTextCursor

from core.budget import set_document_consumers
from core.project import Project
from gui.main_window import MainWindow
from gui.resources import read_text
from gui.widgets.outline import CUT_ROLE, LINE_ROLE

MEMORY = ".fusion/memory.md"


@pytest.fixture
def open_window(open_budget_window):
    """The shared window fixture (tests/gui/conftest.py), at 1400x900 unless a size is given."""
    return lambda root, size=(1400, 900): open_budget_window(root, size)


def _rows(win: MainWindow) -> dict[str, object]:
    tree = win.editor.outline.tree
    items = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    items += [top.child(j) for top in list(items) for j in range(top.childCount())]
    return {item.text(0): item for item in items}


def test_sections_past_claude_codes_cut_are_greyed_with_scissors(qtbot, open_window, real_project: Path) -> None:
    set_document_consumers(real_project, MEMORY, ["claude-code"])
    win = open_window(real_project)
    outline = win.editor.outline
    rows = _rows(win)
    # Claude Code stops at line 167: "Conventions" (line 122) runs past it, "Color Theme System" (172) is not loaded.
    assert "✂ Conventions" in rows and "✂ Color Theme System" in rows and "✂ Pitfalls" in rows
    assert "FN-1734: Polling Hook Loading Contract" in rows  # before the cut: as it was
    conventions, colours, polling = rows["✂ Conventions"], rows["✂ Color Theme System"], rows[
        "FN-1734: Polling Hook Loading Contract"]
    assert "Past the cut: Claude Code does not load this section" in colours.toolTip(0)
    assert "stops loading at line 167, inside this section" in conventions.toolTip(0)
    assert "cut" not in polling.toolTip(0)
    dim = outline.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
    assert colours.foreground(0).color() == dim and polling.foreground(0).color() != dim
    # The outline and the budget agree on what is past the cut (the ## sections; ### are not in the outline).
    lines = {h.line + 1 for h in outline.headings}
    expected = [(title, line, wholly) for title, line, wholly in win.editor.budget.sections_past() if line in lines]
    shown = [(item.text(0).strip("✂ "), item.data(0, LINE_ROLE) + 1, item.data(0, CUT_ROLE) == "wholly")
             for item in outline._items if item.data(0, CUT_ROLE)]
    assert shown == expected and len(shown) > 30
    wholly = sum(1 for _t, _l, w in shown if w)
    assert outline.title.text() == f"Outline · 44 · ✂ {wholly}"
    assert f"{wholly} sections (greyed) are not loaded" in outline.title.toolTip()
    assert conventions.foreground(0).color() != dim


def test_marks_follow_the_cut_when_lines_are_deleted_and_when_no_reader_cuts(qtbot, open_window,
                                                                             real_project: Path) -> None:
    set_document_consumers(real_project, MEMORY, ["claude-code"])
    win = open_window(real_project)
    editor = win.editor
    edit = editor.text_edit
    # Delete the Architecture section (lines 3-79): Color Theme System moves up to line 95, under the cut.
    cursor = QTextCursor(edit.document().findBlockByNumber(2))
    cursor.setPosition(edit.document().findBlockByNumber(79).position(), QTextCursor.MoveMode.KeepAnchor)
    edit.setTextCursor(cursor)
    edit.textCursor().removeSelectedText()
    qtbot.waitUntil(lambda: not editor.budget.pending() and "Color Theme System" in _rows(win), timeout=5000)
    rows = _rows(win)
    assert rows["Color Theme System"].data(0, CUT_ROLE) is None
    assert any(item.data(0, CUT_ROLE) == "wholly" for item in rows.values())  # later ones are still past it
    assert editor.budget.choose_consumers(["fusion"])  # Fusion loads it whole: nothing is past a cut
    qtbot.waitUntil(lambda: not editor.budget.pending(), timeout=5000)
    assert editor.outline.past_the_cut() == [] and "✂" not in editor.outline.title.text()


@pytest.mark.parametrize("size", [(800, 600), (2560, 1440)])
def test_screenshot_outline_with_the_cut(qtbot, qapp, open_window, real_project: Path, size) -> None:
    """Rendered at both sizes, the outline visible; written to ``$MEMDESK_SCREENSHOTS`` when it is set."""
    qapp.setStyleSheet(read_text("style.qss"))
    try:
        set_document_consumers(real_project, MEMORY, ["claude-code"])
        entry = "Lease renewals must carry the worker id, or the scheduler double-books (FN-2101)"
        Project(real_project).append(entry, author="agent-7")
        win = open_window(real_project, size)
        if not win.editor.outline.isVisible():
            win.editor.toggle_outline()
        qtbot.waitUntil(lambda: not win.editor.authors.pending(), timeout=5000)
        win.editor.goto_line(win.editor.text().split("\n").index(entry) + 1)
        qtbot.wait(100)
        assert win.editor.outline.isVisible() and win.editor.outline.past_the_cut()
        assert win.editor.author_label.isVisible() and win.editor.author_label.text().startswith("added by agent-7, ")
        image = win.grab()
        assert not image.isNull() and image.height() == size[1]  # (the window is at least 850 px wide)
        folder = os.environ.get("MEMDESK_SCREENSHOTS")
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            assert image.save(str(Path(folder) / f"outline-cut-{size[0]}.png"))
    finally:
        qapp.setStyleSheet("")
