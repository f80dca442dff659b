"""View ▸ Open beside (Ctrl+\\): another document beside the editor, following its file (editing it: test_side_editing)."""

from __future__ import annotations

from PySide6.QtCore import Qt

from gui.widgets.shortcuts_dialog import ShortcutsDialog
from tests.gui.desk_window import CTRL, DREAMS, MEMORY, type_text


def test_ctrl_backslash_shows_another_document_beside_the_editor(qtbot, desk, layered_project):
    desk.activateWindow()
    qtbot.waitUntil(desk.isActiveWindow, timeout=3000)
    edit = desk.editor.text_edit
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_Backslash, CTRL)
    side = desk.desk.side
    assert side is not None and side.isVisible()
    assert side.path != MEMORY and side.path is not None
    assert side.text.toPlainText() == (layered_project / side.path).read_text(encoding="utf-8")
    assert not side.text.isReadOnly()  # editable beside (tests/gui/test_side_editing.py)
    # Both are on screen: the editor keeps its document and its typing.
    type_text(qtbot, edit, "typed while reading beside ")
    assert desk.session.current_path == MEMORY and desk.editor.dirty
    # Choose DREAMS.md beside; an agent appends to it: the pane follows the file.
    side.chooser.setCurrentIndex(side.chooser.findData(DREAMS))
    assert side.text.toPlainText() == (layered_project / DREAMS).read_text(encoding="utf-8")
    with (layered_project / DREAMS).open("a", encoding="utf-8") as f:
        f.write("\n- appended by an agent\n")
    qtbot.waitUntil(lambda: side.text.toPlainText().endswith("- appended by an agent\n"), timeout=5000)
    # Edit opens it in the editor (the memory's edit is kept, unsaved).
    qtbot.mouseClick(side.edit_button, Qt.MouseButton.LeftButton)
    assert desk.session.current_path == DREAMS and MEMORY in desk.editor.unsaved_documents()
    side.text.setFocus()
    qtbot.keyClick(side, Qt.Key.Key_Escape)
    assert not side.isVisible()


def test_open_beside_is_listed(desk):
    assert ("View", "Open beside (another document, to read or edit)", "Ctrl+\\") in ShortcutsDialog(desk).rows
