"""Saves and backend switches run on the project's serial worker, never on the GUI thread (issue 19 item 6)."""

from __future__ import annotations

import threading

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

CTRL = Qt.KeyboardModifier.ControlModifier


def test_ctrl_s_writes_on_the_worker_and_says_so(qtbot, window, sample_project, monkeypatch):
    project = window.session.project
    threads: list[str] = []
    real_write = project.write

    def write(*args, **kwargs):
        threads.append(threading.current_thread().name)
        assert threading.current_thread() is not threading.main_thread()
        return real_write(*args, **kwargs)

    monkeypatch.setattr(project, "write", write)
    said: list[str] = []
    window.session.worker.busyChanged.connect(lambda busy, what: busy and what and said.append(what))
    edit = window.editor.text_edit
    edit.setFocus()
    qtbot.keyClicks(edit, "saved off the GUI thread ")
    qtbot.keyClick(edit, Qt.Key.Key_S, CTRL)
    assert threads and not window.editor.dirty
    assert said == ["Saving memory.md…"]
    assert (sample_project / ".fusion/memory.md").read_text(encoding="utf-8").startswith("saved off the GUI thread ")
    assert not window.session.worker.busy


def test_a_backend_switch_runs_on_the_worker(qtbot, window):
    store = window.session.store
    threads: list[bool] = []
    real = store.update_settings

    def update(*args, **kwargs):
        threads.append(threading.current_thread() is threading.main_thread())
        return real(*args, **kwargs)

    store.update_settings = update  # type: ignore[method-assign]
    window.session.switch_backend("sqlite")
    assert threads == [False] and window.session.backend.id == "sqlite"


def test_a_collection_waits_while_the_worker_runs(qtbot, window, monkeypatch):
    """The GUI thread's cyclic collection (gui.gc_guard) waits for a pause in the worker's calls, as for typing."""
    import gc

    from PySide6.QtCore import QTimer

    from gui import gc_guard

    collector = gc_guard.install(QApplication.instance())
    collected: list[int] = []
    monkeypatch.setattr(gc, "collect", lambda generation=2: collected.append(generation) or 0)
    monkeypatch.setattr(gc, "get_count", lambda: (10_000, 0, 0))  # a young collection is due
    monkeypatch.setattr(gc_guard, "_last_input", [float("-inf")])
    gate, on_gui = threading.Event(), []

    def during() -> None:  # on the GUI thread, while the worker's call waits on the gate
        on_gui.append(threading.current_thread() is threading.main_thread())
        collector.check()
        gate.set()

    QTimer.singleShot(0, during)
    window.session.worker.call(lambda: gate.wait(10), "")
    assert on_gui == [True] and collected == []  # not while the call ran
    monkeypatch.setattr(gc_guard, "_last_input", [float("-inf")])  # the pause has come
    collector.check()
    assert collected == [0]
