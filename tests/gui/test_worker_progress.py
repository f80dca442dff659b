"""The GUI keeps running while the disk or a database is slow (issue 19 item 6): each action waits on the
project's serial worker, held here on an event the test owns; the window's timers keep firing, the view
says what runs (status text, busy cursor), and once released the bytes on disk are the expected ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QThreadPool
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from gui.main_window import MainWindow
from gui.recent import RecentProjects
from tests.gui.worker_gate import TICKS, run_while_held

CTRL = Qt.KeyboardModifier.ControlModifier


@pytest.fixture
def window(qtbot, sample_project: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("MEMDESK_CACHE_DIR", str(tmp_path / "cache"))
    win = MainWindow(sample_project, recent=RecentProjects(persist=False))
    win.confirm_discard = lambda: "discard"
    qtbot.addWidget(win)
    win.show()
    yield win
    win.close()
    QThreadPool.globalInstance().waitForDone(5000)


def _busy_cursor() -> bool:
    cursor = QGuiApplication.overrideCursor()
    return cursor is not None and cursor.shape() == Qt.CursorShape.BusyCursor


def test_ctrl_s_waits_for_the_worker_while_the_window_runs(qtbot, window, sample_project):
    edit = window.editor.text_edit
    edit.setFocus()
    qtbot.keyClicks(edit, "typed while the disk was slow ")
    memory = sample_project / ".fusion/memory.md"
    before = memory.read_bytes()

    def progress() -> bool:
        return window.status.currentMessage() == "Saving memory.md…" and _busy_cursor() and memory.read_bytes() == before

    _, ticks, saw = run_while_held(window.session.worker, lambda: qtbot.keyClick(edit, Qt.Key.Key_S, CTRL), progress)
    assert ticks >= TICKS and saw  # the GUI thread ran its timers while the save waited, and said so
    assert memory.read_text(encoding="utf-8").startswith("typed while the disk was slow ")
    assert not window.editor.dirty and QApplication.overrideCursor() is None


def test_a_reload_after_a_change_on_disk_reads_on_the_worker(qtbot, window, sample_project):
    memory = sample_project / ".fusion/memory.md"
    memory.write_text(memory.read_text(encoding="utf-8") + "\n- appended by an agent\n", encoding="utf-8")
    _, ticks, saw = run_while_held(window.session.worker, window.editor.on_disk_changed,
                                   lambda: "appended by an agent" not in window.editor.text())
    assert ticks >= TICKS and saw
    assert window.editor.text().endswith("- appended by an agent\n") and not window.editor.dirty


def test_a_backend_switch_waits_for_the_worker_while_the_window_runs(qtbot, window, sample_project):
    _, ticks, saw = run_while_held(window.session.worker, lambda: window.session.switch_backend("sqlite"),
                                   lambda: window.status.currentMessage() == "Switching the backend…")
    assert ticks >= TICKS and saw
    assert window.session.backend.id == "sqlite"
    settings = json.loads((sample_project / ".fusion/memdesk/settings.json").read_text(encoding="utf-8"))
    assert settings["memoryBackend"] == "sqlite" and (sample_project / ".fusion/memdesk/memory.db").is_file()
