"""Find and replace (Ctrl+H) in the editor and find in all documents (Ctrl+Shift+F), through the real window."""

from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from gui.widgets.shortcuts_dialog import ShortcutsDialog
from tests.gui.desk_window import CTRL, CTRL_SHIFT, DREAMS, MEMORY, type_text

CTRL_ALT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier


def test_ctrl_h_replaces_one_match_then_all_as_one_undo_step_and_saves(qtbot, desk, layered_project):
    editor = desk.editor
    edit = editor.text_edit
    disk = (layered_project / MEMORY).read_text(encoding="utf-8")
    count = len(re.findall("sqlite", disk, re.IGNORECASE))
    assert count == 3
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_H, CTRL)
    assert editor.find_bar.isVisible() and editor.replace_bar.isVisible()
    assert editor.find_bar.field.hasFocus()
    qtbot.keyClicks(editor.find_bar.field, "SQLite")
    assert editor.find_bar.count_label.text() == f"1 of {count}"
    editor.replace_bar.field.setFocus()
    qtbot.keyClicks(editor.replace_bar.field, "PostgreSQL")
    qtbot.keyClick(editor.replace_bar.field, Qt.Key.Key_Return)  # the selected first match is replaced
    assert editor.replace_bar.result_label.text() == "Replaced 1"
    assert edit.toPlainText().lower().count("sqlite") == count - 1
    assert edit.textCursor().selectedText().lower() == "sqlite"  # the next one is selected
    qtbot.keyClick(editor.replace_bar.field, Qt.Key.Key_Return, CTRL_ALT)  # replace all
    assert editor.replace_bar.result_label.text() == f"Replaced {count - 1}"
    assert "sqlite" not in edit.toPlainText().lower() and editor.dirty
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_Z, CTRL)  # the replace-all is one undo step
    assert edit.toPlainText().lower().count("sqlite") == count - 1
    qtbot.keyClick(edit, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClick(edit, Qt.Key.Key_S, CTRL)
    saved = (layered_project / MEMORY).read_text(encoding="utf-8")
    assert saved == re.sub("sqlite", "PostgreSQL", disk, flags=re.IGNORECASE)


def test_replace_on_a_read_only_document_changes_nothing_and_says_so(qtbot, desk, layered_project):
    editor = desk.editor
    editor.text_edit.setReadOnly(True)
    editor.show_replace()
    qtbot.keyClicks(editor.find_bar.field, "sqlite")
    qtbot.keyClicks(editor.replace_bar.field, "x")
    before = editor.text_edit.toPlainText()
    qtbot.keyClick(editor.replace_bar.field, Qt.Key.Key_Return, CTRL_ALT)
    assert editor.replace_bar.result_label.text() == "Read-only"
    assert editor.text_edit.toPlainText() == before and not editor.dirty


def test_esc_closes_find_and_replace(qtbot, desk):
    editor = desk.editor
    editor.show_replace()
    qtbot.keyClick(editor.replace_bar.field, Qt.Key.Key_Escape)
    assert not editor.find_bar.isVisible() and not editor.replace_bar.isVisible()


def _dialog(desk):
    return desk.desk.find_all


def test_ctrl_shift_f_lists_every_match_in_every_document_and_opens_one_at_its_line(qtbot, desk, layered_project):
    edit = desk.editor.text_edit
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_End, CTRL)
    type_text(qtbot, edit, "\n- unsaved SQLite note")  # unsaved edits are searched as shown
    qtbot.keyClick(edit, Qt.Key.Key_F, CTRL_SHIFT)
    dialog = _dialog(desk)
    assert dialog is not None and dialog.isVisible()
    qtbot.waitUntil(dialog.field.hasFocus, timeout=3000)
    qtbot.keyClicks(dialog.field, "sqlite")
    qtbot.keyClick(dialog.field, Qt.Key.Key_Return)  # search now
    files = {p: (layered_project / p).read_text(encoding="utf-8") for p in
             [".fusion/memory/MEMORY.md", ".fusion/memory/2026-08-20.md", DREAMS]}
    expected = sum(len(re.findall("sqlite", t, re.IGNORECASE)) for t in files.values()) + 1
    assert dialog.summary.text().startswith(f"{expected} match(es) in 3 of ")
    rows = dialog.visible_rows()
    assert f"{MEMORY}  (4)" in rows and f"{DREAMS}  (1)" in rows
    assert any(r.endswith("- unsaved SQLite note") for r in rows)
    dream_row = "    8:  - Tests that share one SQLite file across stores see no events from each other."
    assert dream_row in rows
    # Select the DREAMS match with the keyboard and open it with Enter.
    qtbot.keyClick(dialog.field, Qt.Key.Key_Down)
    tree = dialog.tree
    while tree.currentItem() is None or tree.currentItem().text(0) != dream_row:
        qtbot.keyClick(tree, Qt.Key.Key_Down)
    qtbot.keyClick(tree, Qt.Key.Key_Return)
    assert desk.session.current_path == DREAMS
    assert desk.editor.text_edit.textCursor().blockNumber() == 7
    assert MEMORY in desk.editor.unsaved_documents()  # the edit stays
    assert desk.errors == []


def test_find_in_all_documents_says_when_nothing_matches(qtbot, desk):
    dialog = desk.desk.show_find_all()
    qtbot.keyClicks(dialog.field, "zzqqxx-nowhere")
    qtbot.waitUntil(lambda: dialog.result is not None and dialog.result.query == "zzqqxx-nowhere", timeout=2000)
    assert dialog.summary.text().startswith("No matches for “zzqqxx-nowhere” in 10 document(s)")
    assert dialog.visible_rows() == []


def test_the_shortcuts_are_listed(desk):
    rows = ShortcutsDialog(desk).rows
    assert ("Edit", "Find and replace", "Ctrl+H") in rows
    assert ("Edit", "Find in all documents", "Ctrl+Shift+F") in rows
    QApplication.processEvents()
