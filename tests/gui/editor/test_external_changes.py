"""Changes made on disk by another process while the window is open (a real second writer)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication

from gui.main_window import MainWindow

REPO = Path(__file__).resolve().parents[3]
MEMORY = ".fusion/memory.md"
WAIT_MS = 10_000

APPEND = ("import sys; from core.entries import append_memory_entry; "
          "print(append_memory_entry(sys.argv[1], sys.argv[2]).status)")
REWRITE = ("import sys, pathlib; p = pathlib.Path(sys.argv[1], '.fusion', 'memory.md'); "
           "p.write_text(p.read_text(encoding='utf-8').replace(sys.argv[2], sys.argv[3]), encoding='utf-8')")


def other_process(code: str, *args: str) -> str:
    """Run ``code`` in a separate Python process (another program writing the memory)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=60, check=True)
    return done.stdout.strip()


@pytest.fixture
def window(sample_window):
    """The sample project open in a shown window that watches its memory file (tests/gui/conftest.py)."""
    return sample_window


def _type_at(qtbot, editor, position: int, text: str) -> None:
    cursor = editor.text_edit.textCursor()
    cursor.setPosition(position)
    editor.text_edit.setTextCursor(cursor)
    qtbot.keyClicks(editor.text_edit, text)


def _conflict_over_pitfalls(qtbot, window: MainWindow, root: Path):
    """Type "MINE " at the start, let another process rename ``## Pitfalls``, wait for the conflict view."""
    editor = window.editor
    _type_at(qtbot, editor, 0, "MINE ")
    other_process(REWRITE, str(root), "## Pitfalls", "## Traps")
    qtbot.waitUntil(lambda: editor.pages.currentWidget() is editor.conflict_view, timeout=WAIT_MS)
    return editor


def test_agent_append_while_dirty_is_merged(qtbot, window: MainWindow, sample_project: Path) -> None:
    editor = window.editor
    _type_at(qtbot, editor, 0, "OPERATOR ")
    position = editor.text_edit.textCursor().position()
    assert other_process(APPEND, str(sample_project), "Agents must batch SQL inserts.") == "written"
    on_disk = (sample_project / MEMORY).read_text(encoding="utf-8")
    qtbot.waitUntil(lambda: "Agents must batch SQL inserts." in editor.text(), timeout=WAIT_MS)
    assert editor.text() == "OPERATOR " + on_disk  # both: my edit and the agent's entry
    assert editor.text_edit.textCursor().position() == position
    assert editor.dirty and window.isWindowModified()
    merged = "Merged 1 new entry appended on disk: “Agents must batch SQL inserts.”"
    assert window.statusBar().currentMessage() == merged
    assert editor.pages.currentWidget() is not editor.conflict_view
    assert (sample_project / MEMORY).read_text(encoding="utf-8") == on_disk  # untouched until save
    assert editor.save()
    saved = (sample_project / MEMORY).read_text(encoding="utf-8")
    assert saved.startswith("OPERATOR ") and saved.endswith("Agents must batch SQL inserts.")


def test_two_appends_then_save_keeps_both(qtbot, window: MainWindow, sample_project: Path) -> None:
    editor = window.editor
    _type_at(qtbot, editor, 0, "X")
    other_process(APPEND, str(sample_project), "First agent entry.")
    other_process(APPEND, str(sample_project), "Second agent entry.")
    qtbot.waitUntil(lambda: "Second agent entry." in editor.text(), timeout=WAIT_MS)
    assert "First agent entry." in editor.text()
    assert editor.save()
    text = (sample_project / MEMORY).read_text(encoding="utf-8")
    assert text.startswith("X") and "First agent entry." in text and text.endswith("Second agent entry.")


def test_rewrite_while_dirty_opens_conflict_view(qtbot, window: MainWindow, sample_project: Path) -> None:
    editor = window.editor
    _type_at(qtbot, editor, 0, "MINE ")
    other_process(REWRITE, str(sample_project), "# Project Memory", "# Rewritten Memory")
    qtbot.waitUntil(lambda: editor.pages.currentWidget() is editor.conflict_view, timeout=WAIT_MS)
    view = editor.conflict_view
    assert view.mine_text().startswith("MINE # Project Memory")
    assert view.disk_text().startswith("# Rewritten Memory")
    disk = (sample_project / MEMORY).read_text(encoding="utf-8")
    assert not editor.save()  # a save cannot slip past the open conflict
    assert (sample_project / MEMORY).read_text(encoding="utf-8") == disk
    qtbot.waitUntil(lambda: "line(s) only in yours" in view.summary.text(), timeout=WAIT_MS)


def test_conflict_keep_mine_overwrites_knowingly(qtbot, window: MainWindow, sample_project: Path) -> None:
    editor = _conflict_over_pitfalls(qtbot, window, sample_project)
    qtbot.mouseClick(editor.conflict_view.keep_mine_button, Qt.MouseButton.LeftButton)
    assert editor.pages.currentIndex() == 0 and editor.dirty
    assert editor.save()
    text = (sample_project / MEMORY).read_text(encoding="utf-8")
    assert text.startswith("MINE ") and "## Pitfalls" in text


def test_conflict_take_disk_then_undo_brings_mine_back(qtbot, window: MainWindow, sample_project: Path) -> None:
    editor = _conflict_over_pitfalls(qtbot, window, sample_project)
    qtbot.mouseClick(editor.conflict_view.take_disk_button, Qt.MouseButton.LeftButton)
    assert editor.text() == (sample_project / MEMORY).read_text(encoding="utf-8")
    assert not editor.dirty
    editor.text_edit.undo()
    assert editor.text().startswith("MINE ") and editor.dirty


def test_conflict_merge_by_hand(qtbot, window: MainWindow, sample_project: Path) -> None:
    editor = _conflict_over_pitfalls(qtbot, window, sample_project)
    qtbot.mouseClick(editor.conflict_view.merge_button, Qt.MouseButton.LeftButton)
    text = editor.text()
    assert text.startswith("MINE # Project Memory") and "## Traps" in text  # both sides, no overlap
    assert "Merged your edits" in editor.notice.text()
    assert editor.save()
    assert (sample_project / MEMORY).read_text(encoding="utf-8") == text


def test_merge_by_hand_marks_overlaps_and_refuses_to_save_them(qtbot, window: MainWindow,
                                                               sample_project: Path) -> None:
    editor = window.editor
    _type_at(qtbot, editor, 2, "Our ")  # "# Our Project Memory"
    other_process(REWRITE, str(sample_project), "# Project Memory", "# Their Project Memory")
    qtbot.waitUntil(lambda: editor.pages.currentWidget() is editor.conflict_view, timeout=WAIT_MS)
    editor.conflict_view.mergeRequested.emit()
    assert "<<<<<<< mine" in editor.text() and ">>>>>>> disk" in editor.text()
    assert not editor.save()
    assert "conflict block" in editor.notice.text()


def test_change_while_clean_reloads_silently_keeping_cursor(qtbot, window: MainWindow, sample_project: Path) -> None:
    editor = window.editor
    cursor = editor.text_edit.textCursor()
    cursor.setPosition(500)
    editor.text_edit.setTextCursor(cursor)
    other_process(REWRITE, str(sample_project), "## Pitfalls", "## Known traps")
    qtbot.waitUntil(lambda: "## Known traps" in editor.text(), timeout=WAIT_MS)
    assert editor.text() == (sample_project / MEMORY).read_text(encoding="utf-8")
    assert editor.text_edit.textCursor().position() == 500
    assert not editor.dirty and not window.isWindowModified()
    assert editor.pages.currentWidget() is not editor.conflict_view


def test_append_while_clean_keeps_cursor_and_stays_clean(qtbot, window: MainWindow, sample_project: Path) -> None:
    editor = window.editor
    editor.text_edit.moveCursor(QTextCursor.MoveOperation.End)
    end = editor.text_edit.textCursor().position()
    other_process(APPEND, str(sample_project), "Appended while nobody typed.")
    qtbot.waitUntil(lambda: "Appended while nobody typed." in editor.text(), timeout=WAIT_MS)
    assert editor.text_edit.textCursor().position() == end
    assert not editor.dirty


def test_own_save_is_not_taken_for_an_external_change(qtbot, window: MainWindow, sample_project: Path) -> None:
    editor = window.editor
    qtbot.keyClicks(editor.text_edit, "saved by me ")
    assert editor.save()
    qtbot.keyClicks(editor.text_edit, "still typing")
    qtbot.wait(600)  # the watcher reports our own write; nothing must happen
    assert editor.text().startswith("saved by me still typing")
    assert editor.dirty and editor.pages.currentIndex() == 0
    assert editor.notice.text() == ""


def test_unreadable_change_while_dirty_keeps_edits(qtbot, window: MainWindow, sample_project: Path) -> None:
    editor = window.editor
    _type_at(qtbot, editor, 0, "MINE ")
    good = (sample_project / MEMORY).read_bytes()
    (sample_project / MEMORY).write_bytes(good + b"\n- half a character: \xe2\x82")
    qtbot.waitUntil(lambda: "cannot be read" in editor.notice.text(), timeout=WAIT_MS)
    assert editor.text().startswith("MINE ") and editor.dirty
    (sample_project / MEMORY).write_bytes(good + "\n- half a character: €".encode())
    qtbot.waitUntil(lambda: editor.text().endswith("€"), timeout=WAIT_MS)
    assert editor.notice.text() == "" and editor.text().startswith("MINE ")


def test_merges_and_reloads_are_kept_in_the_notice_list(qtbot, window: MainWindow, sample_project: Path) -> None:
    editor, notices = window.editor, window.status.notifications
    assert notices.text() == "Notices"
    other_process(REWRITE, str(sample_project), "## Pitfalls", "## Known traps")  # clean: a reload
    qtbot.waitUntil(lambda: "## Known traps" in editor.text(), timeout=WAIT_MS)
    _type_at(qtbot, editor, 0, "OPERATOR ")
    assert other_process(APPEND, str(sample_project), "Agents must batch SQL inserts.") == "written"
    qtbot.waitUntil(lambda: notices.unseen == 2, timeout=WAIT_MS)
    qtbot.wait(6500)  # the status-bar message is long gone; the notices stay
    assert window.statusBar().currentMessage() == ""
    assert notices.text() == "Notices (2)"
    qtbot.mouseClick(notices, Qt.MouseButton.LeftButton)
    assert notices.popup.isVisible()
    rows = notices.popup.texts()
    assert "Merged 1 new entry appended on disk: “Agents must batch SQL inserts.”" in rows[0]  # newest first
    assert "Reloaded memory.md (changed on disk)" in rows[1]
    assert notices.text() == "Notices"  # seen now
    notices.popup.hide()


def test_dirty_state_shows_on_the_memory_tab(qtbot, window: MainWindow) -> None:
    editor = window.editor
    index = window.tabs.indexOf(editor)
    assert window.tabs.tabText(index) == "Memory"
    _type_at(qtbot, editor, 0, "x")
    assert window.tabs.tabText(index) == "Memory •"
    qtbot.keyClick(editor.text_edit, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # back to saved
    assert window.tabs.tabText(index) == "Memory"
    _type_at(qtbot, editor, 0, "y")
    assert editor.save()
    assert window.tabs.tabText(index) == "Memory"


def test_conflict_markers_are_marked_in_editor_and_preview(qtbot, window: MainWindow, sample_project: Path) -> None:
    editor = window.editor
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    editor.text_edit.setFocus()
    _type_at(qtbot, editor, 2, "Our ")
    other_process(REWRITE, str(sample_project), "# Project Memory", "# Their Project Memory")
    qtbot.waitUntil(lambda: editor.pages.currentWidget() is editor.conflict_view, timeout=WAIT_MS)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_M,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)  # Merge by hand
    assert editor.pages.currentWidget() is not editor.conflict_view
    doc = editor.text_edit.document()
    lines = editor.text().split("\n")
    marked = [i for i, line in enumerate(lines) if line.startswith(("<<<<<<<", "=======", ">>>>>>>"))]
    assert len(marked) == 3
    editor.buffer.format_visible()
    for number in marked:
        formats = list(doc.findBlockByNumber(number).layout().formats())
        assert formats and formats[0].length == len(lines[number])
        assert formats[0].format.background().color() == editor.highlighter.conflict.background().color()
    editor.preview.render_now()
    shown = editor.preview.browser.toPlainText()
    assert "<<<<<<< mine" in shown and ">>>>>>> disk" in shown and "=======" in shown
    block, tinted = editor.preview.document.begin(), []
    while block.isValid():
        if block.blockFormat().background().color().name() == "#ffc9c5":  # .conflict-marker in preview.css
            tinted.append(block.text())
        block = block.next()
    assert [t[:7] for t in tinted] == ["<<<<<<<", "=======", ">>>>>>>"]
    assert "Our Project Memory" in shown and "Their Project Memory" in shown
