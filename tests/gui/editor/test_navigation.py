"""Moving around the real agent memory (44 sections in 1,294 lines) by keyboard and mouse."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt, QThreadPool
from PySide6.QtWidgets import QApplication

from gui.editor.sections import find_headings, section_index
from gui.main_window import MainWindow
from gui.recent import RecentProjects

MEMORY = ".fusion/memory.md"
CTRL, ALT = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.AltModifier


@pytest.fixture
def window(qtbot, tmp_path: Path, real_project: Path):
    """The real memory open in an active window, the text focused."""
    win = MainWindow(real_project, recent=RecentProjects(QSettings(str(tmp_path / "r.ini"),
                                                                    QSettings.Format.IniFormat)))
    win.confirm_discard = lambda: "discard"
    qtbot.addWidget(win)
    win.resize(1280, 800)
    win.show()
    win.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is win)
    win.editor.text_edit.setFocus()
    yield win
    win.close()
    QThreadPool.globalInstance().waitForDone(5000)


def _sections(window: MainWindow):
    return find_headings(window.editor.text(), max_level=2)


def test_outline_lists_the_44_sections(window: MainWindow) -> None:
    outline = window.editor.outline
    assert outline.title.text() == "Outline · 44"
    assert outline.tree.topLevelItemCount() == 1
    top = outline.tree.topLevelItem(0)
    assert top.text(0) == "Project Memory" and top.childCount() == 44
    assert [top.child(i).text(0) for i in range(3)] == [
        "Architecture", "FN-1354: Auto-Summarize Titles Bug Fix", "FN-1544: Viewport-Gated Card Metadata Loading"]
    assert outline.current_heading().title == "Project Memory"  # the cursor is on line 1


def test_clicking_a_section_jumps_there(qtbot, window: MainWindow) -> None:
    outline, edit = window.editor.outline, window.editor.text_edit
    item = outline.tree.topLevelItem(0).child(4)
    assert item.text(0) == "Conventions"
    rect = outline.tree.visualItemRect(item)
    qtbot.mouseClick(outline.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert edit.current_line() == 121  # "## Conventions" is line 122
    assert edit.textCursor().block().text() == "## Conventions"
    assert edit.hasFocus()
    assert 121 in [n - 1 for n in edit.gutter.numbers_in_view()]  # scrolled into view


def test_ctrl_g_goes_to_a_line_and_the_outline_follows(qtbot, window: MainWindow) -> None:
    edit = window.editor.text_edit
    qtbot.keyClick(edit, Qt.Key.Key_G, CTRL)
    bar = window.editor.goto_bar
    assert bar.isVisible() and bar.field.hasFocus()
    assert bar.field.text() == "1" and "of 1,294" in bar.count_label.text()
    qtbot.keyClicks(bar.field, "800")  # replaces the selected "1"
    qtbot.keyClick(bar.field, Qt.Key.Key_Return)
    assert not bar.isVisible() and edit.hasFocus()
    assert edit.current_line() == 799
    sections = _sections(window)
    expected = sections[section_index(sections, 799)]
    assert window.editor.outline.current_heading() == expected
    assert expected.title == "FN-1532: SQLite Index Optimization"  # lines 798–808 of the file
    numbers = edit.gutter.numbers_in_view()
    assert 800 in numbers and numbers == list(range(numbers[0], numbers[0] + len(numbers)))
    qtbot.keyClick(edit, Qt.Key.Key_G, CTRL)
    qtbot.keyClick(bar.field, Qt.Key.Key_Escape)
    assert not bar.isVisible() and edit.current_line() == 799
    qtbot.keyClick(edit, Qt.Key.Key_G, CTRL)
    qtbot.keyClicks(bar.field, "99999")  # past the end: the last line
    qtbot.keyClick(bar.field, Qt.Key.Key_Return)
    assert edit.current_line() == 1293


def test_next_and_previous_section_by_keyboard(qtbot, window: MainWindow) -> None:
    edit = window.editor.text_edit
    lines = [h.line for h in _sections(window)]
    qtbot.keyClick(edit, Qt.Key.Key_Down, CTRL)
    assert edit.current_line() == lines[1] == 2  # "## Architecture"
    qtbot.keyClick(edit, Qt.Key.Key_Down, CTRL)
    assert edit.current_line() == lines[2]
    qtbot.keyClick(edit, Qt.Key.Key_Down, ALT)
    assert edit.current_line() == lines[3]
    assert window.editor.outline.current_heading().line == lines[3]
    while edit.current_line() == lines[3]:  # into the section's text (the heading may wrap)
        qtbot.keyClick(edit, Qt.Key.Key_Down)
    qtbot.keyClick(edit, Qt.Key.Key_Up, CTRL)  # back to its own heading
    assert edit.current_line() == lines[3]
    qtbot.keyClick(edit, Qt.Key.Key_Up, ALT)
    assert edit.current_line() == lines[2]
    window.editor.go_to_line(lines[-1])
    qtbot.keyClick(edit, Qt.Key.Key_Down, CTRL)  # no section below the last: stays
    assert edit.current_line() == lines[-1]


def test_outline_follows_new_headings_as_they_are_typed(qtbot, window: MainWindow) -> None:
    edit = window.editor.text_edit
    edit.moveCursor(edit.textCursor().MoveOperation.End)
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    qtbot.keyClicks(edit, "## Written by the operator")
    outline = window.editor.outline
    qtbot.waitUntil(lambda: outline.title.text() == "Outline · 45")
    assert outline.current_heading().title == "Written by the operator"
    assert outline.tree.topLevelItem(0).child(44).text(0) == "Written by the operator"


def test_line_numbers_are_shown_beside_the_text(window: MainWindow) -> None:
    edit = window.editor.text_edit
    assert edit.gutter.isVisible() and edit.gutter.width() >= edit.fontMetrics().horizontalAdvance("1294")
    assert edit.viewportMargins().left() == edit.gutter.width()
    numbers = edit.gutter.numbers_in_view()
    assert numbers[:3] == [1, 2, 3]
    image = edit.gutter.grab().toImage()
    assert any(image.pixelColor(x, y) != image.pixelColor(0, 0)
               for x in range(image.width()) for y in range(min(image.height(), 30)))  # digits painted


def test_at_800_px_the_outline_steps_aside_until_asked_for(qtbot, window: MainWindow) -> None:
    window.resize(800, 600)
    qtbot.waitUntil(lambda: window.editor.width() < 700)
    outline, edit = window.editor.outline, window.editor.text_edit
    assert not outline.isVisible()
    assert edit.width() >= 250 and window.editor.preview.width() >= 250  # the text and preview get the room
    qtbot.keyClick(edit, Qt.Key.Key_O, CTRL | Qt.KeyboardModifier.ShiftModifier)
    assert outline.isVisible() and outline.title.text() == "Outline · 44"
    window.resize(1280, 800)
    qtbot.waitUntil(lambda: window.editor.width() > 900)
    assert outline.isVisible()
    qtbot.keyClick(edit, Qt.Key.Key_O, CTRL | Qt.KeyboardModifier.ShiftModifier)
    assert not outline.isVisible()  # the operator's choice holds at any width
