"""Issue 22, "The schedule field is squashed after Apply": Apply that finds the schedule invalid outlined the
field with a style-sheet border, which dropped the native frame and shrank it from 22 to 20 px (its text
cramped against the border). The red outline is now a frame laid over the field: in the real window, at
800x600 and 1280x800, the field keeps its width and height through Apply (invalid, then valid) and shows
its whole text; the valid schedule is on disk.
"""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt, QThreadPool

from gui.main_window import MainWindow
from gui.recent import RecentProjects
from gui.views.settings_view import SettingsView

CONFIG = ".fusion/config.json"


@pytest.fixture
def settings_in_window(qtbot, sample_project, monkeypatch, tmp_path):
    monkeypatch.setenv("MEMDESK_CACHE_DIR", str(tmp_path / "cache"))
    windows: list[MainWindow] = []

    def make(width: int, height: int) -> SettingsView:
        win = MainWindow(recent=RecentProjects(persist=False))
        qtbot.addWidget(win)
        win.confirm_discard = lambda: "discard"
        win.resize(width, height)
        win.show()
        qtbot.waitExposed(win)
        assert win.open_project(sample_project)
        win.show_view("settings")
        windows.append(win)
        view = win.findChildren(SettingsView)[0]
        qtbot.waitUntil(view.isVisible, timeout=5000)
        return view

    yield make
    for win in windows:
        win._close_project()
        win.close()
    QThreadPool.globalInstance().waitForDone(5000)


def shows_whole_text(line) -> bool:
    """The line edit is wide enough for its text, its frame's padding and the clear button beside it."""
    return line.fontMetrics().horizontalAdvance(line.text()) + 2 * line.height() <= line.width()


@pytest.mark.parametrize("size", [(800, 600), (1280, 800)])
def test_the_schedule_field_keeps_its_size_through_apply(settings_in_window, qtbot, size):
    view = settings_in_window(*size)
    editor = view.form.editor("insightExtractionSchedule")
    line = editor.line
    qtbot.wait(50)
    before = line.size().toTuple()
    assert shows_whole_text(line)

    line.setFocus()
    qtbot.keyClick(line, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(line, "30 3 * * 1 5")  # six fields: invalid
    qtbot.keyClick(line, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)  # Apply
    qtbot.wait(50)
    assert "Not saved" in view.status.text()
    assert editor.property("invalid") is True
    outline = editor.findChild(type(editor._outline), "invalidOutline")
    assert outline is not None and outline.isVisible() and outline.geometry() == line.geometry()
    assert line.size().toTuple() == before  # was (width, 20) after (width, 22)
    assert line.styleSheet() == "" and editor.styleSheet() == ""  # the native frame is kept
    assert shows_whole_text(line)

    qtbot.keyClick(line, Qt.Key.Key_Backspace)
    qtbot.keyClick(line, Qt.Key.Key_Backspace)
    qtbot.keyClicks(line, "-5")
    qtbot.keyClick(line, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)  # Apply, valid
    qtbot.waitUntil(lambda: view.status.text().startswith("Saved"), timeout=5000)
    qtbot.wait(50)
    assert line.text() == "30 3 * * 1-5"
    assert not outline.isVisible() and editor.property("invalid") is False
    assert line.size().toTuple() == before
    assert shows_whole_text(line)
    saved = json.loads((view.session.root / CONFIG).read_text(encoding="utf-8"))
    assert saved["settings"]["insightExtractionSchedule"] == "30 3 * * 1-5"
