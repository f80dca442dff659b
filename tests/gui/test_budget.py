"""The load-budget meter and the cut line as the operator sees them: open, type, an agent appends, choose."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QThreadPool
from PySide6.QtGui import QTextCursor

from core.budget import set_document_consumers
from gui.budget_tracker import DEBOUNCE_MS
from gui.editor.cut_line import LINE_COLOUR
from gui.main_window import MainWindow

REPO = Path(__file__).resolve().parents[2]
MEMORY = ".fusion/memory.md"
APPEND = ("import sys; from core.entries import append_memory_entry; "
          "print(append_memory_entry(sys.argv[1], sys.argv[2]).status)")


def _index(lines: int) -> str:
    return "# Project Memory\n" + "\n".join(f"- [note {i}](note-{i}.md) — hook" for i in range(2, lines + 1)) + "\n"


@pytest.fixture
def open_window(open_budget_window):
    """The shared window fixture (tests/gui/conftest.py), at 1200x800 unless a size is given."""
    return lambda root, size=(1200, 800): open_budget_window(root, size)


def _scroll_to_line(win: MainWindow, line: int) -> None:
    edit = win.editor.text_edit
    edit.setTextCursor(QTextCursor(edit.document().findBlockByNumber(line - 1)))
    edit.centerCursor()


def test_meter_and_cut_line_on_the_real_memory(qtbot, open_window, real_project: Path) -> None:
    set_document_consumers(real_project, MEMORY, ["fusion", "claude-code"])
    win = open_window(real_project)
    meter = win.status.budget_meter
    assert meter.isVisible() and meter.label.text() == "✂ Claude Code: line 167/1,293"
    assert meter.chosen() == ["fusion", "claude-code"]
    assert "Fusion: loaded whole" in meter.toolTip()
    overlay = win.editor.budget.overlay
    assert overlay.isVisible() and overlay.line == 167 and "Claude Code stops loading here" in overlay.label
    _scroll_to_line(win, 167)
    qtbot.wait(50)
    y = overlay.line_y(167)
    assert 0 < y < overlay.height()
    image = win.editor.text_edit.grab().toImage()  # the text field as shown, with the line drawn over it
    origin = overlay.geometry().topLeft()

    def red_run(row: int) -> int:
        return sum(1 for x in range(0, overlay.width(), 2)
                   if _is_cut_colour(image.pixelColor(origin.x() + x, origin.y() + row)))

    assert red_run(y) > overlay.width() // 6
    assert red_run(y - 6) < overlay.width() // 20  # just above: the last loaded line, not struck through
    preview = win.editor.preview
    preview.render_now()
    shown = preview.browser.toPlainText()
    assert "✂ Claude Code stops loading after this line" in shown
    # At the end of line 166 (Component tests, loaded), before line 167 (Route tests, not loaded).
    assert shown.index("new API functions") < shown.index("stops loading after") < shown.index("Route tests")
    assert "of 1,294" in preview.note.text()  # the preview counts the lines of the memory, no marker line
    assert "✂" not in win.editor.text()  # the marker is the preview's, never the memory's
    past = win.editor.budget.sections_past()  # for the outline: what Claude Code never sees
    assert ("Color Theme System", 172, True) in past and ("Conventions", 122, False) in past


def test_closing_while_a_recompute_runs_is_clean(qtbot, open_window, real_project: Path) -> None:
    set_document_consumers(real_project, MEMORY, ["claude-code"])
    win = open_window(real_project)
    tracker = win.editor.budget
    qtbot.keyClicks(win.editor.text_edit, "typed")
    tracker.start_recompute()
    assert tracker.pending()
    win.close()  # the result of the worker is dropped, nothing is drawn on a deleted field
    QThreadPool.globalInstance().waitForDone(5000)
    qtbot.wait(50)


def test_typing_past_200_lines_moves_the_meter_after_a_pause(qtbot, open_window, project: Path) -> None:
    (project / ".fusion").mkdir()
    (project / MEMORY).write_text(_index(199), encoding="utf-8")
    set_document_consumers(project, MEMORY, ["claude-code"])
    win = open_window(project)
    meter, tracker = win.status.budget_meter, win.editor.budget
    assert meter.label.text() == "Claude Code: 199/200 lines" and not tracker.overlay.isVisible()
    computed = tracker.compute_count
    edit = win.editor.text_edit
    edit.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(edit, "- two")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    qtbot.keyClicks(edit, "- more")
    assert tracker.compute_count == computed and tracker.pending()  # keystrokes only restart the timer
    qtbot.waitUntil(lambda: not tracker.pending(), timeout=DEBOUNCE_MS * 10)
    assert tracker.compute_count == computed + 1
    assert meter.label.text() == "✂ Claude Code: line 201/201"
    assert tracker.overlay.isVisible() and tracker.overlay.line == 201
    assert meter.state == "over"


def test_meter_updates_after_an_external_append(qtbot, open_window, project: Path) -> None:
    (project / ".fusion").mkdir()
    (project / MEMORY).write_text(_index(198).rstrip("\n"), encoding="utf-8")
    set_document_consumers(project, MEMORY, ["claude-code"])
    win = open_window(project)
    meter = win.status.budget_meter
    assert meter.label.text() == "Claude Code: 198/200 lines"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    status = subprocess.run([sys.executable, "-c", APPEND, str(project), "An agent's late finding"], cwd=REPO,
                            env=env, capture_output=True, text=True, timeout=60, check=True).stdout.strip()
    assert status == "written"
    qtbot.waitUntil(lambda: "An agent's late finding" in win.editor.text(), timeout=10_000)
    qtbot.waitUntil(lambda: meter.label.text() == "✂ Claude Code: line 201/201", timeout=5000)
    assert win.editor.budget.overlay.line == 201


def test_choosing_readers_saves_them_in_the_project(qtbot, open_window, real_project: Path) -> None:
    win = open_window(real_project)
    meter = win.status.budget_meter
    assert meter.chosen() == ["fusion"] and meter.label.text() == "Fusion: loads it all"
    claude = next(a for a in meter.menu.actions() if a.data() == "claude-code")
    claude.trigger()
    # memdesk's own setting: in memdesk's state, and Fusion's config.json is never created for it (issue 18).
    own = real_project / ".fusion" / "memdesk" / "settings.json"
    assert not (real_project / ".fusion" / "config.json").exists()
    config = json.loads(own.read_text(encoding="utf-8"))
    assert config["memdeskBudgetConsumers"] == {MEMORY: ["fusion", "claude-code"]}
    qtbot.waitUntil(lambda: meter.label.text() == "✂ Claude Code: line 167/1,293", timeout=5000)
    for action in meter.menu.actions():
        if action.isChecked():
            action.trigger()
    config = json.loads(own.read_text(encoding="utf-8"))
    assert "memdeskBudgetConsumers" not in config  # nothing chosen: back to the defaults
    qtbot.waitUntil(lambda: meter.chosen() == ["fusion"], timeout=5000)


def test_an_unsaveable_choice_is_reported_and_the_meter_keeps_the_old_one(qtbot, open_window,
                                                                           real_project: Path) -> None:
    win = open_window(real_project)
    config = real_project / ".fusion" / "config.json"
    config.write_text("{ not json", encoding="utf-8")
    messages: list[str] = []
    win.editor.budget.statusMessage.connect(messages.append)
    next(a for a in win.status.budget_meter.menu.actions() if a.data() == "codex").trigger()
    assert messages and messages[-1].startswith("Readers not saved:") and "not valid JSON" in messages[-1]
    assert config.read_text(encoding="utf-8") == "{ not json"
    assert win.status.budget_meter.chosen() == ["fusion"]


def test_screenshots_of_the_meter(qtbot, open_window, real_project: Path, tmp_path: Path) -> None:
    set_document_consumers(real_project, MEMORY, ["fusion", "claude-code"])
    for size in ((800, 600), (2560, 1440)):
        win = open_window(real_project, size)
        _scroll_to_line(win, 167)
        qtbot.wait(100)
        assert win.width() == size[0]  # the meter leaves the window usable at 800 px
        meter = win.status.budget_meter
        assert meter.geometry().right() <= win.status.width() and meter.label.width() >= meter.label.sizeHint().width()
        folder = os.environ.get("MEMDESK_SCREENSHOTS")
        image = win.grab()
        assert not image.isNull()
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            image.save(str(Path(folder) / f"budget-{size[0]}x{size[1]}.png"))
        win.close()


def _is_cut_colour(colour) -> bool:
    return abs(colour.red() - LINE_COLOUR.red()) < 40 and abs(colour.green() - LINE_COLOUR.green()) < 40 \
        and abs(colour.blue() - LINE_COLOUR.blue()) < 40


def test_the_meter_follows_the_document_shown(qtbot, open_window, layered_project: Path) -> None:
    daily = ".fusion/memory/2026-08-20.md"
    set_document_consumers(layered_project, ".fusion/memory/MEMORY.md", ["claude-code"])
    win = open_window(layered_project)
    meter, tracker = win.status.budget_meter, win.editor.budget
    assert tracker.relpath == ".fusion/memory/MEMORY.md" and meter.chosen() == ["claude-code"]
    assert meter.label.text() == "✂ Claude Code: line 144/190"  # its 25,000-character gate
    win.editor.switch_document(daily)
    qtbot.waitUntil(lambda: tracker.relpath == daily and not tracker.pending() and meter.chosen() == ["fusion"],
                    timeout=5000)
    assert meter.label.text() == "Fusion: 59/400 lines" and not tracker.overlay.isVisible()
