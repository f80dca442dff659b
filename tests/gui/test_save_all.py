"""File ▸ Save all (Ctrl+Alt+S) saves every document with unsaved edits, through the real window."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from gui.main_window import MainWindow
from gui.recent import RecentProjects
from gui.widgets.shortcuts_dialog import ShortcutsDialog
from tests.gui.desk_window import type_text

MEMORY = ".fusion/memory/MEMORY.md"
DREAMS = ".fusion/memory/DREAMS.md"
CTRL_ALT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier


@pytest.fixture
def window(qtbot, layered_project, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMDESK_CACHE_DIR", str(tmp_path / "cache"))
    win = MainWindow(recent=RecentProjects(persist=False))
    qtbot.addWidget(win)
    win.confirm_discard = lambda: "discard"
    win.show_error = lambda text: pytest.fail(f"unexpected error dialog: {text}")
    win.resize(1200, 800)
    win.show()
    qtbot.waitExposed(win)
    win.open_project(layered_project)
    yield win
    win._close_project()


def _type_at_end(qtbot, edit, text: str) -> None:
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    type_text(qtbot, edit, text)


def test_ctrl_alt_s_writes_every_unsaved_document_and_keeps_the_one_shown(qtbot, window, layered_project):
    memory_before = (layered_project / MEMORY).read_bytes()
    dreams_before = (layered_project / DREAMS).read_bytes()
    edit = window.editor.text_edit
    _type_at_end(qtbot, edit, "\n- typed into memory")
    window.open_document(DREAMS)
    _type_at_end(qtbot, edit, "\n- typed into dreams")
    assert window.editor.unsaved_documents() == [DREAMS, MEMORY]
    qtbot.keyClick(edit, Qt.Key.Key_S, CTRL_ALT)
    assert (layered_project / MEMORY).read_bytes() == memory_before + b"\n- typed into memory"
    assert (layered_project / DREAMS).read_bytes() == dreams_before + b"\n- typed into dreams"
    assert window.editor.unsaved_documents() == []
    assert window.session.current_path == DREAMS  # the document shown stays shown
    assert window.status.currentMessage().startswith("Saved 2 document(s): DREAMS.md, MEMORY.md")
    assert window.picker is not None and not window.isWindowModified()


def test_save_all_stops_at_a_conflict_and_shows_it_without_overwriting_the_disk(qtbot, window, layered_project):
    memory_before = (layered_project / MEMORY).read_bytes()
    edit = window.editor.text_edit
    window.open_document(DREAMS)
    _type_at_end(qtbot, edit, "\n- my dream edit")
    window.open_document(MEMORY)
    _type_at_end(qtbot, edit, "\n- my memory edit")
    other = "# Dreams\n\nRewritten by another program.\n"
    (layered_project / DREAMS).write_text(other, encoding="utf-8")
    qtbot.keyClick(edit, Qt.Key.Key_S, CTRL_ALT)
    assert (layered_project / MEMORY).read_bytes() == memory_before + b"\n- my memory edit"
    assert (layered_project / DREAMS).read_text(encoding="utf-8") == other  # never overwritten
    assert window.session.current_path == DREAMS
    assert window.editor.pages.currentWidget() is window.editor.conflict_view
    assert window.editor.unsaved_documents() == [DREAMS]
    assert ".fusion/memory/DREAMS.md was not saved" in window.status.currentMessage()


def test_save_all_with_nothing_unsaved_says_so(qtbot, window, layered_project):
    before = (layered_project / MEMORY).read_bytes()
    qtbot.keyClick(window.editor.text_edit, Qt.Key.Key_S, CTRL_ALT)
    assert window.status.currentMessage() == "No unsaved documents"
    assert (layered_project / MEMORY).read_bytes() == before


def test_save_all_is_listed_in_the_file_menu_and_the_shortcuts(window):
    dialog = ShortcutsDialog(window)
    assert dialog.shortcut_of("Save all") == "Ctrl+Alt+S"
    assert ("File", "Save all", "Ctrl+Alt+S") in dialog.rows
