"""Sizes and small states the operator sees (issue 22): the first window fits a 1280x800 screen, the
document list shows Layer and Changed at that size, Redo is listed once, and a stale "Not saved"
banner goes with Ctrl+Z."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QThreadPool
from PySide6.QtWidgets import QApplication

from gui.main_window import DEFAULT_SIZE, MainWindow
from gui.recent import RecentProjects
from gui.widgets.shortcuts_dialog import shortcut_rows

CTRL = Qt.KeyboardModifier.ControlModifier


@pytest.fixture
def window(qtbot, layered_project: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("MEMDESK_CACHE_DIR", str(tmp_path / "cache"))
    win = MainWindow(layered_project, recent=RecentProjects(persist=False))
    win.confirm_discard = lambda: "discard"
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.close()
    QThreadPool.globalInstance().waitForDone(5000)


def test_the_first_window_fits_a_1280_by_800_screen(window):
    size = window.size()
    assert (size.width(), size.height()) <= DEFAULT_SIZE
    assert size.width() <= 1280 - 64 and size.height() <= 800 - 64  # room for a title bar and a panel


def test_the_document_list_shows_layer_and_changed_at_the_default_size(qtbot, layered_project):
    """As ``memdesk`` starts on a 1280x800 screen: the window at its default size, then the project."""
    window = MainWindow(recent=RecentProjects(persist=False))
    qtbot.addWidget(window)
    window.resize(*DEFAULT_SIZE)
    window.show()
    qtbot.waitExposed(window)
    assert window.open_project(layered_project)
    qtbot.wait(50)
    picker = window.picker
    assert not picker.isColumnHidden(1) and not picker.isColumnHidden(3)
    row = picker._items[".fusion/memory/2026-08-19.md"]
    assert row.text(1) == "daily" and row.text(3)  # the layer and the last change are shown
    assert picker.header().sectionSize(1) > 0 and picker.header().sectionSize(3) > 0


def test_redo_is_listed_once(window):
    rows = [r for r in shortcut_rows(window) if r[1] == "Redo"]
    assert len(rows) == 1
    keys = rows[0][2].split(", ")
    assert len(keys) == len(set(keys))


def test_a_stale_not_saved_banner_goes_with_ctrl_z(qtbot, window, layered_project):
    editor = window.editor
    edit = editor.text_edit
    window.activateWindow()
    edit.setFocus()
    qtbot.keyClicks(edit, "x")
    (layered_project / ".fusion/memory").chmod(0o555)
    path = layered_project / ".fusion/memory/MEMORY.md"
    path.chmod(0o444)
    try:
        editor.notice.show_message("Not saved — your text is still here. Write failed (TEST): refused", "error")
        qtbot.keyClick(edit, Qt.Key.Key_Z, CTRL)
        assert not editor.dirty
        assert editor.notice.text() == ""
    finally:
        path.chmod(0o644)
        (layered_project / ".fusion/memory").chmod(0o755)


def test_a_marked_merge_notice_goes_when_ctrl_z_undoes_the_merge(qtbot, window, layered_project):
    editor, edit = window.editor, window.editor.text_edit
    path = layered_project / ".fusion/memory/MEMORY.md"
    edit.setFocus()
    qtbot.keyClicks(edit, "MINE ")
    first, rest = path.read_text(encoding="utf-8").split("\n", 1)
    path.write_text(first + " THEIRS\n" + rest, encoding="utf-8")
    editor.on_disk_changed()
    editor.conflict_view.merge_button.click()
    assert "<<<<<<<" in editor.text() and "<<<<<<<" in editor.notice.text()
    qtbot.keyClick(edit, Qt.Key.Key_S, CTRL)
    assert editor.notice.text().startswith("Not saved: 1 conflict block(s)")
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_Z, CTRL)
    qtbot.waitUntil(lambda: editor.notice.text() == "", timeout=2000)
    assert "<<<<<<<" not in editor.text()
    QApplication.processEvents()
