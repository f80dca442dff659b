"""The document beside the editor is editable (issue 22, side by side), and its edits are the editor's unsaved
edits of that document: marked in the list and the tabs, listed by the quit dialog, written by Save All
and Ctrl+S through the editor's save with its checks (an agent's append merged, a rewrite shown as a
conflict), never a second copy. The document the editor shows is read-only beside it.

Driven in the real window with key events; bytes on disk checked.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QThreadPool, QTimer
from PySide6.QtWidgets import QApplication

from gui.main_window import MainWindow
from gui.recent import RecentProjects
from gui.widgets.side_document import EDITABLE_NOTE
from gui.widgets.unsaved_dialog import UnsavedDialog

MEMORY = ".fusion/memory/MEMORY.md"
DAILY = ".fusion/memory/2026-08-19.md"
CTRL = Qt.KeyboardModifier.ControlModifier


@pytest.fixture
def window(qtbot, layered_project: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("MEMDESK_CACHE_DIR", str(tmp_path / "cache"))
    win = MainWindow(recent=RecentProjects(persist=False))
    win.show_error = lambda text: pytest.fail(f"unexpected error dialog: {text}")
    win.resize(1200, 800)
    win.show()
    qtbot.waitExposed(win)
    assert win.open_project(layered_project)
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow, timeout=3000)
    yield win
    if win.session is not None:
        win.confirm_discard = lambda: "discard"
        win.close()
    win.deleteLater()
    QThreadPool.globalInstance().waitForDone(5000)


def open_beside(qtbot, win: MainWindow, path: str):
    edit = win.editor.text_edit
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_Backslash, CTRL)
    side = win.desk.side
    side.chooser.setCurrentIndex(side.chooser.findData(path))
    qtbot.waitUntil(lambda: side.path == path and side.attached is not None, timeout=3000)
    return side


def type_at_end(qtbot, side, text: str) -> None:
    side.text.setFocus()
    qtbot.keyClick(side.text, Qt.Key.Key_End, CTRL)
    qtbot.keyClick(side.text, Qt.Key.Key_Return)
    qtbot.keyClicks(side.text, text)


def test_typing_beside_marks_the_document_and_save_all_writes_it(qtbot, window, layered_project):
    before = (layered_project / DAILY).read_bytes()
    memory_before = (layered_project / MEMORY).read_bytes()
    side = open_beside(qtbot, window, DAILY)
    assert not side.text.isReadOnly() and side.note.text() == EDITABLE_NOTE
    assert side.text.document() is window.editor.buffer.slots[DAILY].document  # one text per document
    type_at_end(qtbot, side, "- typed beside")
    assert window.editor.unsaved_documents() == [DAILY]
    assert window.picker.is_marked_dirty(DAILY)
    assert window.session.current_path == MEMORY and not window.editor.dirty
    qtbot.keyClick(side.text, Qt.Key.Key_S, CTRL | Qt.KeyboardModifier.AltModifier)  # Save All
    qtbot.waitUntil(lambda: window.editor.unsaved_documents() == [], timeout=5000)
    assert before.endswith(b"\n")  # Ctrl+End is on the empty last line: Return, then the text
    assert (layered_project / DAILY).read_bytes() == before + b"\n- typed beside"
    assert (layered_project / MEMORY).read_bytes() == memory_before
    assert window.session.current_path == MEMORY  # the editor is back where it was
    qtbot.waitUntil(lambda: side.attached is not None, timeout=3000)  # and the pane edits again
    assert not window.picker.is_marked_dirty(DAILY)


def test_ctrl_s_in_the_pane_saves_the_pane_s_document(qtbot, window, layered_project):
    side = open_beside(qtbot, window, DAILY)
    type_at_end(qtbot, side, "- saved with ctrl+s")
    memory_edit = window.editor.text_edit
    qtbot.keyClicks(memory_edit, "MINE ")  # the editor's own document stays unsaved
    side.text.setFocus()
    qtbot.keyClick(side.text, Qt.Key.Key_S, CTRL)
    assert (layered_project / DAILY).read_text(encoding="utf-8").endswith("- saved with ctrl+s")
    assert window.editor.unsaved_documents() == [MEMORY]
    assert not (layered_project / MEMORY).read_text(encoding="utf-8").startswith("MINE ")


def test_quit_lists_the_document_edited_beside_and_cancel_keeps_it(qtbot, window, layered_project):
    before = (layered_project / DAILY).read_bytes()
    side = open_beside(qtbot, window, DAILY)
    type_at_end(qtbot, side, "- not lost")
    seen: list[list[str]] = []

    def cancel() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, UnsavedDialog):
            QTimer.singleShot(20, cancel)
            return
        seen.append(dialog.paths())
        dialog.cancel_button.click()

    QTimer.singleShot(0, cancel)
    window.close()
    assert seen == [[DAILY]] and window.isVisible()
    assert (layered_project / DAILY).read_bytes() == before
    assert side.text.toPlainText().endswith("- not lost")


def test_an_agent_append_while_editing_beside_is_merged_by_the_save(qtbot, window, layered_project):
    side = open_beside(qtbot, window, DAILY)
    type_at_end(qtbot, side, "- mine")
    with (layered_project / DAILY).open("a", encoding="utf-8") as f:
        f.write("\n- appended by an agent\n")
    qtbot.wait(400)  # the pane follows the file, but never over unsaved edits
    assert side.text.toPlainText().endswith("- mine")
    assert window.save_all()
    on_disk = (layered_project / DAILY).read_text(encoding="utf-8")
    assert "- mine" in on_disk and "- appended by an agent" in on_disk


def test_a_rewrite_on_disk_stops_save_all_at_the_conflict(qtbot, window, layered_project):
    side = open_beside(qtbot, window, DAILY)
    type_at_end(qtbot, side, "- mine")
    (layered_project / DAILY).write_text("# rewritten by another program\n", encoding="utf-8")
    assert not window.save_all()
    editor = window.editor
    assert editor.current_path == DAILY and editor.external.in_conflict  # shown, as any unsaved document
    assert (layered_project / DAILY).read_text(encoding="utf-8") == "# rewritten by another program\n"
    assert side.attached is None and side.text.isReadOnly()  # the editor holds it now; nothing lost
    assert editor.buffer.slots[DAILY].document.toPlainText().endswith("- mine")


def test_the_document_the_editor_shows_is_read_only_beside(qtbot, window, layered_project):
    side = open_beside(qtbot, window, DAILY)
    type_at_end(qtbot, side, "- kept")
    assert window.open_document(DAILY)  # the editor takes it, with the edit
    assert side.attached is None and side.text.isReadOnly()
    assert window.editor.text().endswith("- kept") and window.editor.dirty
    assert window.open_document(MEMORY)  # and gives it back
    qtbot.waitUntil(lambda: side.attached is not None, timeout=3000)
    assert side.text.toPlainText().endswith("- kept") and not side.text.isReadOnly()
    assert window.editor.unsaved_documents() == [DAILY]


def test_a_file_beside_that_becomes_unreadable_is_shown_read_only_with_the_reason(qtbot, window, layered_project):
    """Found by the round-5 review: the pane's re-read swallowed a read error, so a document whose file stopped
    being UTF-8 went on looking editable with its old text, and the note still said it could be edited."""
    side = open_beside(qtbot, window, DAILY)
    assert not side.text.isReadOnly()
    (layered_project / DAILY).write_bytes(b"# note\n\xff\xfe not UTF-8\n")
    qtbot.waitUntil(lambda: side.attached is None, timeout=5000)
    assert side.text.isReadOnly()
    assert side.text.toPlainText().startswith(f"Cannot read {DAILY}")
    assert "not valid UTF-8" in side.text.toPlainText()
    assert (layered_project / DAILY).read_bytes() == b"# note\n\xff\xfe not UTF-8\n"
