"""No edit is ever lost (issue 22, "Loses work"): the real window, driven with keys, and the bytes on disk.

Repro 1: type in MEMORY.md, switch to a daily note and type there, then quit (Ctrl+Q or the close
button). Every unsaved document is listed, and nothing closes until the operator answers.
Repro 2: another program changes the line being typed on; "Merge by hand", then Ctrl+Z as the banner
suggests, then save: the save is refused and the conflict shown again, never the other change dropped.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QThreadPool, QTimer
from PySide6.QtWidgets import QApplication

from gui.main_window import MainWindow
from gui.recent import RecentProjects
from gui.widgets.unsaved_dialog import UnsavedDialog

MEMORY = ".fusion/memory/MEMORY.md"
DAILY = ".fusion/memory/2026-08-19.md"
CTRL = Qt.KeyboardModifier.ControlModifier


@pytest.fixture
def window(qtbot, layered_project: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("MEMDESK_CACHE_DIR", str(tmp_path / "cache"))
    win = MainWindow(recent=RecentProjects(persist=False))  # closed here, not by qtbot: its close would ask
    win.show_error = lambda text: pytest.fail(f"unexpected error dialog: {text}")
    win.resize(1200, 800)
    win.show()
    qtbot.waitExposed(win)
    assert win.open_project(layered_project)
    yield win
    if win.session is not None:
        win.confirm_discard = lambda: "discard"
        win.close()
    win.deleteLater()
    QThreadPool.globalInstance().waitForDone(5000)


def _type_in_two_documents(qtbot, win: MainWindow) -> None:
    edit = win.editor.text_edit
    edit.setFocus()
    qtbot.keyClicks(edit, "TYPED IN MEMORY ")
    assert win.open_document(DAILY)
    edit.setFocus()
    qtbot.keyClicks(edit, "TYPED IN DAILY ")
    assert win.editor.unsaved_documents() == [DAILY, MEMORY]


def _answer_dialog(button: str, seen: list[list[str]]) -> None:
    """When the modal unsaved dialog is up, record what it lists and press ``button``."""
    def press() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, UnsavedDialog):
            QTimer.singleShot(20, press)
            return
        seen.append(dialog.paths())
        target = {"save": dialog.save_button, "discard": dialog.discard_button, "cancel": dialog.cancel_button}[button]
        target.click()

    QTimer.singleShot(0, press)


@pytest.mark.parametrize("how", ["ctrl+q", "close button"])
def test_quit_lists_every_unsaved_document_and_save_all_writes_each(qtbot, window, layered_project, how):
    before = {p: (layered_project / p).read_bytes() for p in (MEMORY, DAILY)}
    _type_in_two_documents(qtbot, window)
    seen: list[list[str]] = []
    _answer_dialog("save", seen)
    if how == "ctrl+q":
        qtbot.keyClick(window.editor.text_edit, Qt.Key.Key_Q, CTRL)
    else:
        window.close()
    assert seen == [[DAILY, MEMORY]]
    assert not window.isVisible()
    assert (layered_project / MEMORY).read_bytes() == b"TYPED IN MEMORY " + before[MEMORY]
    assert (layered_project / DAILY).read_bytes() == b"TYPED IN DAILY " + before[DAILY]


def test_cancel_closes_nothing_and_keeps_both_edits(qtbot, window, layered_project):
    before = {p: (layered_project / p).read_bytes() for p in (MEMORY, DAILY)}
    _type_in_two_documents(qtbot, window)
    seen: list[list[str]] = []
    _answer_dialog("cancel", seen)
    qtbot.keyClick(window.editor.text_edit, Qt.Key.Key_Q, CTRL)
    assert seen == [[DAILY, MEMORY]]
    assert window.isVisible() and window.session is not None
    assert window.editor.unsaved_documents() == [DAILY, MEMORY]
    assert {p: (layered_project / p).read_bytes() for p in (MEMORY, DAILY)} == before
    window.open_document(MEMORY)
    assert window.editor.text().startswith("TYPED IN MEMORY ")


def test_escape_is_cancel(qtbot, window, layered_project):
    _type_in_two_documents(qtbot, window)

    def escape() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, UnsavedDialog):
            QTimer.singleShot(20, escape)
            return
        qtbot.keyClick(dialog, Qt.Key.Key_Escape)

    QTimer.singleShot(0, escape)
    window.close()
    assert window.isVisible() and window.editor.unsaved_documents() == [DAILY, MEMORY]


def test_discard_all_closes_and_writes_nothing(qtbot, window, layered_project):
    before = {p: (layered_project / p).read_bytes() for p in (MEMORY, DAILY)}
    _type_in_two_documents(qtbot, window)
    seen: list[list[str]] = []
    _answer_dialog("discard", seen)
    window.close()
    assert seen == [[DAILY, MEMORY]] and not window.isVisible()
    assert {p: (layered_project / p).read_bytes() for p in (MEMORY, DAILY)} == before


def test_save_all_stops_at_a_document_that_changed_on_disk(qtbot, window, layered_project):
    """A document another program rewrote is not overwritten: it is shown in conflict and nothing closes."""
    _type_in_two_documents(qtbot, window)
    (layered_project / MEMORY).write_text("# Project Memory\n\n- rewritten by another program\n", encoding="utf-8")
    seen: list[list[str]] = []
    _answer_dialog("save", seen)
    window.close()
    assert window.isVisible()
    assert window.session.current_path == MEMORY and window.editor.external.in_conflict
    assert (layered_project / MEMORY).read_text(encoding="utf-8") == "# Project Memory\n\n- rewritten by another program\n"
    assert (layered_project / DAILY).read_bytes().startswith(b"TYPED IN DAILY ")


def test_opening_another_project_lists_every_unsaved_document(qtbot, window, layered_project, sample_project):
    _type_in_two_documents(qtbot, window)
    seen: list[list[str]] = []
    _answer_dialog("cancel", seen)
    assert not window.open_project(sample_project)
    assert seen == [[DAILY, MEMORY]] and window.session.root == layered_project.resolve()
    _answer_dialog("save", seen)
    assert window.open_project(sample_project)
    assert (layered_project / MEMORY).read_bytes().startswith(b"TYPED IN MEMORY ")
    assert (layered_project / DAILY).read_bytes().startswith(b"TYPED IN DAILY ")


def test_switching_backend_lists_every_unsaved_document(qtbot, window, layered_project):
    _type_in_two_documents(qtbot, window)
    backends = window.show_view("backends")
    backends.select(backends.model.row_of("readonly"))
    seen: list[list[str]] = []
    _answer_dialog("cancel", seen)
    assert not backends.use_selected()
    assert seen == [[DAILY, MEMORY]]
    assert "Not switched" in backends.status.text()
    assert window.editor.unsaved_documents() == [DAILY, MEMORY]
    _answer_dialog("save", seen)
    assert backends.use_selected()
    assert window.editor.unsaved_documents() == []
    assert (layered_project / DAILY).read_bytes().startswith(b"TYPED IN DAILY ")


def test_merge_by_hand_then_undo_then_save_shows_the_conflict_again(qtbot, window, layered_project):
    path = layered_project / MEMORY
    edit = window.editor.text_edit
    edit.setFocus()
    qtbot.keyClicks(edit, "MINE ")  # on the first line
    original = path.read_text(encoding="utf-8")
    first, rest = original.split("\n", 1)
    path.write_text(first + " (THEIRS)\n" + rest, encoding="utf-8")  # another program, the same line
    window.editor.on_disk_changed()
    assert window.editor.external.in_conflict
    window.editor.conflict_view.merge_button.click()
    assert "THEIRS" in window.editor.text()
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_Z, CTRL)  # as the banner suggests
    assert "THEIRS" not in window.editor.text() and window.editor.dirty
    qtbot.keyClick(edit, Qt.Key.Key_S, CTRL)
    assert path.read_text(encoding="utf-8") == first + " (THEIRS)\n" + rest  # not a byte written
    assert window.editor.external.in_conflict
    assert "no longer holds 1 line(s) that changed on disk" in window.editor.conflict_view.headline.text()
    window.editor.conflict_view.merge_button.click()  # merged again from before the other change
    assert "THEIRS" in window.editor.text() and "MINE" in window.editor.text()
    merged = window.editor.text()
    if "<<<<<<<" in merged:  # the same line on both sides: keep both words, drop the markers
        edit.selectAll()
        edit.insertPlainText("MINE " + first + " (THEIRS)\n" + rest)  # as a paste would
    qtbot.keyClick(edit, Qt.Key.Key_S, CTRL)
    assert "(THEIRS)" in path.read_text(encoding="utf-8") and "MINE" in path.read_text(encoding="utf-8")


def test_keep_mine_after_the_warning_saves_knowingly(qtbot, window, layered_project):
    path = layered_project / MEMORY
    edit = window.editor.text_edit
    edit.setFocus()
    qtbot.keyClicks(edit, "MINE ")
    original = path.read_text(encoding="utf-8")
    path.write_text(original + "\n- agent line appended\n", encoding="utf-8")
    window.editor.on_disk_changed()  # an append: merged into the dirty editor as one undo step
    assert "agent line appended" in window.editor.text()
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_Z, CTRL)
    assert "agent line appended" not in window.editor.text()
    qtbot.keyClick(edit, Qt.Key.Key_S, CTRL)
    assert window.editor.external.in_conflict
    assert path.read_text(encoding="utf-8").endswith("- agent line appended\n")
    window.editor.conflict_view.keep_mine_button.click()
    qtbot.keyClick(edit, Qt.Key.Key_S, CTRL)
    assert not window.editor.dirty
    assert "agent line appended" not in path.read_text(encoding="utf-8")
