"""The open documents as tabs above the editor: switch, mark unsaved, close (never one with edits)."""

from __future__ import annotations

from PySide6.QtCore import Qt

from gui.widgets.shortcuts_dialog import ShortcutsDialog
from tests.gui.desk_window import CTRL, DREAMS, MEMORY

DAILY = ".fusion/memory/2026-08-20.md"


def test_tabs_follow_the_documents_opened_and_switch_close_with_keys(qtbot, desk, layered_project):
    tabs = desk.desk.tabs
    assert tabs is not None and tabs.paths() == [MEMORY]
    desk.open_document(DREAMS)
    desk.open_document(DAILY)
    assert tabs.paths() == [MEMORY, DREAMS, DAILY] and tabs.tabText(tabs.currentIndex()) == "2026-08-20.md"
    desk.activateWindow()
    qtbot.waitUntil(desk.isActiveWindow, timeout=3000)
    edit = desk.editor.text_edit
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_PageUp, CTRL)  # previous tab: DREAMS.md
    assert desk.session.current_path == DREAMS
    qtbot.keyClicks(edit, "edited ")
    assert tabs.tabText(tabs.currentIndex()) == "DREAMS.md •"
    qtbot.keyClick(edit, Qt.Key.Key_W, CTRL)  # unsaved: the tab stays, the status bar says why
    assert tabs.paths() == [MEMORY, DREAMS, DAILY] and desk.session.current_path == DREAMS
    assert desk.status.currentMessage().startswith(f"{DREAMS} has unsaved edits")
    qtbot.keyClick(edit, Qt.Key.Key_PageDown, CTRL)  # next: the daily note
    assert desk.session.current_path == DAILY
    qtbot.keyClick(edit, Qt.Key.Key_W, CTRL)  # clean: closed, another is shown
    assert tabs.paths() == [MEMORY, DREAMS] and desk.session.current_path in (MEMORY, DREAMS)
    qtbot.mouseClick(tabs, Qt.MouseButton.LeftButton, pos=tabs.tabRect(0).center())
    assert desk.session.current_path == MEMORY
    assert DREAMS in desk.editor.unsaved_documents()  # the edit went nowhere
    desk.open_document(".fusion/agent-memory/reviewer/MEMORY.md")
    assert tabs.tabText(tabs.currentIndex()) == "reviewer/MEMORY.md"


def test_document_tab_keys_are_listed(desk):
    rows = ShortcutsDialog(desk).rows
    assert ("View", "Next document tab", "Ctrl+PgDown") in rows
    assert ("View", "Close document tab", "Ctrl+W") in rows
