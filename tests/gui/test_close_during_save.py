"""The window closed while a save runs on the project's worker (a window manager's close is not user input:
the save's event loop, which skips keys and clicks, still delivers it). Whatever the operator answers, the
typed text is on disk once everything has unwound, and nothing raises."""

from __future__ import annotations

import sys
import threading

import pytest
from PySide6.QtCore import Qt, QTimer

from core.storage import pipeline

CTRL = Qt.KeyboardModifier.ControlModifier


@pytest.mark.parametrize("answer", ["save", "discard"])
def test_closing_while_a_save_runs_loses_nothing(qtbot, window, sample_project, monkeypatch, answer):
    gate = threading.Event()
    real = pipeline.replace

    def held(*args, **kwargs):
        gate.wait(10)  # on the worker: the save is under way until the timer below opens it
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline, "replace", held)
    errors: list[BaseException] = []
    import traceback

    monkeypatch.setattr(sys, "excepthook", lambda t, v, tb: (errors.append(v), traceback.print_tb(tb)))
    edit = window.editor.text_edit
    edit.setFocus()
    qtbot.keyClicks(edit, "typed and saved while the window closed ")
    window.confirm_discard = lambda: answer
    closed: list[bool] = []
    QTimer.singleShot(100, lambda: closed.append(window.close()))
    QTimer.singleShot(400, gate.set)
    try:
        qtbot.keyClick(edit, Qt.Key.Key_S, CTRL)
        qtbot.waitUntil(lambda: bool(closed), timeout=10_000)
    finally:
        gate.set()
    qtbot.wait(200)
    text = (sample_project / ".fusion/memory.md").read_text(encoding="utf-8")
    assert text.startswith("typed and saved while the window closed # Project Memory")
    assert errors == []
