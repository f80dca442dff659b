"""Background operations report on the GUI thread, can be cancelled, and survive their owner's deletion."""

from __future__ import annotations

import threading

from PySide6.QtCore import QThread
from PySide6.QtWidgets import QWidget

from gui.tasks import run_in_background


def test_result_arrives_on_the_gui_thread(qtbot):
    seen = {}

    def work(token):
        token.progress(50, "half")
        return threading.current_thread().name

    op = run_in_background(work, on_done=lambda r: seen.update(result=r, thread=QThread.currentThread()),
                           on_progress=lambda p, m: seen.update(progress=(p, m)))
    qtbot.waitUntil(lambda: "result" in seen)
    assert seen["thread"] is QThread.currentThread() and seen["result"] != threading.current_thread().name
    assert not op.running


def test_errors_are_delivered(qtbot):
    errors = []
    op = run_in_background(lambda t: 1 / 0, on_error=errors.append)
    qtbot.waitUntil(lambda: bool(errors))
    assert not op.running
    assert isinstance(errors[0], ZeroDivisionError)


def test_cancelled_results_are_dropped(qtbot):
    gate = threading.Event()
    results = []
    op = run_in_background(lambda t: gate.wait(5) and "late", on_done=results.append)
    op.cancel()
    assert op.token.cancelled and not op.running
    gate.set()
    qtbot.wait(100)
    assert results == []


def test_owner_deleted_while_work_runs_is_safe(qtbot):
    gate = threading.Event()
    results = []
    owner = QWidget()
    run_in_background(lambda t: gate.wait(5) and "done", on_done=results.append, parent=owner)
    owner.deleteLater()
    qtbot.wait(50)
    gate.set()
    qtbot.wait(200)
    assert results == []  # the operation died with its owner; nothing crashed
