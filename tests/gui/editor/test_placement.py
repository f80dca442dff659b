"""Every jump puts its target in the upper third of the view (issue 22): go to line, find, an outline
click, Ctrl+Down and a search result, on the real agent memory, whose long entries wrap at 800x600."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt, QThreadPool
from PySide6.QtWidgets import QApplication

from gui.main_window import MainWindow
from gui.recent import RecentProjects

CTRL = Qt.KeyboardModifier.ControlModifier


@pytest.fixture
def window(qtbot, tmp_path: Path, real_project: Path):
    win = MainWindow(real_project, recent=RecentProjects(QSettings(str(tmp_path / "r.ini"),
                                                                    QSettings.Format.IniFormat)))
    win.confirm_discard = lambda: "discard"
    qtbot.addWidget(win)
    win.resize(800, 600)
    win.show()
    win.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is win)
    win.editor.text_edit.setFocus()
    yield win
    win.close()
    QThreadPool.globalInstance().waitForDone(5000)


def _place(window: MainWindow) -> float:
    """Where the cursor's screen line is, as a fraction of the view's height (0 top, 1 bottom)."""
    edit = window.editor.text_edit
    return edit.cursorRect().top() / edit.viewport().height()


def test_the_text_wraps(window):
    edit = window.editor.text_edit
    assert edit.document().lineCount() > edit.document().blockCount()  # long entries take several screen lines


def test_go_to_line_by_keys_lands_in_the_upper_third(qtbot, window):
    edit = window.editor.text_edit
    qtbot.keyClick(edit, Qt.Key.Key_G, CTRL)
    qtbot.keyClicks(window.editor.goto_bar.field, "900")
    qtbot.keyClick(window.editor.goto_bar.field, Qt.Key.Key_Return)
    assert edit.current_line() == 899
    assert 0.0 <= _place(window) <= 1 / 3


def test_find_puts_each_match_in_the_upper_third(qtbot, window):
    edit = window.editor.text_edit
    qtbot.keyClick(edit, Qt.Key.Key_F, CTRL)
    qtbot.keyClicks(window.editor.find_bar.field, "promptWithFallback")
    for _ in range(4):
        qtbot.keyClick(window.editor.find_bar.field, Qt.Key.Key_Return)
        assert edit.textCursor().selectedText() == "promptWithFallback"
        assert 0.0 <= _place(window) <= 1 / 3 or edit.verticalScrollBar().value() in (0, edit.verticalScrollBar().maximum())


def test_outline_click_and_ctrl_down_land_in_the_upper_third(qtbot, window):
    outline, edit = window.editor.outline, window.editor.text_edit
    if not outline.isVisible():
        window.actions_by_name["outline"].trigger()
    item = outline.tree.topLevelItem(0).child(20)
    outline.tree.scrollToItem(item)
    qtbot.mouseClick(outline.tree.viewport(), Qt.MouseButton.LeftButton, pos=outline.tree.visualItemRect(item).center())
    assert edit.textCursor().block().text().startswith("## ")
    assert 0.0 <= _place(window) <= 1 / 3
    line = edit.current_line()
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_Down, CTRL)
    assert edit.current_line() > line and edit.textCursor().block().text().startswith("## ")
    assert 0.0 <= _place(window) <= 1 / 3


def test_a_search_result_opens_in_the_upper_third(window):
    assert window.open_document(".fusion/memory.md", 1100)
    assert window.editor.text_edit.current_line() == 1099
    assert 0.0 <= _place(window) <= 1 / 3
