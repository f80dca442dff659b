"""Closing a project or the window never waits on the GUI thread (issue 19 item 6): the joins (the outside-
change watch's thread, the watchers' observers, the history worker and the backend) run on the workers,
the window keeps painting and says "Closing …", and unsaved text is saved first when the operator says so."""

from __future__ import annotations

import threading

from PySide6.QtCore import Qt, QTimer

import gui.watcher as watcher_module
from core.project import Project
from core.project.noticed_watch import NoticeWatch
from tests.gui.worker_gate import TICKS

CTRL = Qt.KeyboardModifier.ControlModifier


def _on_gui() -> bool:
    return threading.current_thread() is threading.main_thread()


def test_quitting_saves_then_closes_off_the_gui_thread_while_the_window_paints(qtbot, window, sample_project,
                                                                                monkeypatch):
    """Quit with unsaved text, answer Save: the text is on disk, then the project closes on its worker (held
    here on an event the GUI thread's timer sets), the status bar saying so meanwhile."""
    where: dict[str, list[bool]] = {"project": [], "notice": [], "observer": []}
    gate = threading.Event()
    real_close, real_stop, real_join = Project.close, NoticeWatch.stop, watcher_module._stop_and_join

    def slow_close(self):  # noqa: ANN001
        where["project"].append(_on_gui())
        gate.wait(10)  # on the GUI thread this would hold it: the timer below could never set the gate
        real_close(self)

    def stop(self):  # noqa: ANN001
        where["notice"].append(_on_gui())
        real_stop(self)

    def join(observer):  # noqa: ANN001
        where["observer"].append(_on_gui())
        real_join(observer)

    monkeypatch.setattr(Project, "close", slow_close)
    monkeypatch.setattr(NoticeWatch, "stop", stop)
    monkeypatch.setattr(watcher_module, "_stop_and_join", join)
    edit = window.editor.text_edit
    edit.setFocus()
    qtbot.keyClicks(edit, "typed just before quitting ")
    window.confirm_discard = lambda: "save"
    ticks, said = [0], []

    def tick() -> None:
        ticks[0] += 1
        if ticks[0] >= TICKS and window.status.currentMessage() == f"Closing {sample_project.name}…":
            said.append(True)
            gate.set()

    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(tick)
    timer.start()
    try:
        assert window.close()
    finally:
        timer.stop()
        gate.set()
    assert said and ticks[0] >= TICKS
    assert window.session is None and not window.isVisible()
    text = (sample_project / ".fusion/memory.md").read_text(encoding="utf-8")
    assert text.startswith("typed just before quitting # Project Memory")
    qtbot.waitUntil(lambda: len(where["observer"]) >= 2, timeout=5000)  # the memory file's and the folder's
    assert where["project"] and where["notice"] == [False] and not any(where["project"] + where["observer"])


def test_quit_cancelled_keeps_the_project_open_and_the_typed_text(qtbot, window, sample_project):
    edit = window.editor.text_edit
    edit.setFocus()
    qtbot.keyClicks(edit, "kept when the quit is cancelled ")
    window.confirm_discard = lambda: "cancel"
    before = (sample_project / ".fusion/memory.md").read_bytes()
    assert not window.close()
    assert window.session is not None and not window.session.closed and window.editor.dirty
    assert edit.toPlainText().startswith("kept when the quit is cancelled # Project Memory")
    assert (sample_project / ".fusion/memory.md").read_bytes() == before
    window.confirm_discard = lambda: "discard"


def test_opening_another_project_closes_the_first_on_its_worker(qtbot, window, sample_project, tmp_path):
    import shutil

    other = tmp_path / "other"
    shutil.copytree(sample_project, other)
    first = window.session
    closed_on: list[bool] = []
    real = first.project.close

    def close() -> None:
        closed_on.append(_on_gui())
        real()

    first.project.close = close
    assert window.open_project(other)
    assert closed_on and not any(closed_on) and first.closed and window.session.root == other.resolve()
