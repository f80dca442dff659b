"""Typing in a big memory defers the outline, the firewall scan and the load budget to a pause (measured in
``bench/keystroke_bench.py``); once typing stops, each shows the typed text: the outline lists the new
section, the secret is underlined, the budget meter counts the new lines, and the unsaved dot is there at once."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCharFormat, QTextCursor

from gui.editor.navigation import BACKGROUND_ABOVE
from gui.main_window import MainWindow
from gui.recent import RecentProjects
from tests.conftest import REAL_MEMORY


@pytest.fixture
def big_project(tmp_path):
    real = REAL_MEMORY.read_text(encoding="utf-8")
    root = tmp_path / "big"
    (root / ".fusion" / "memory").mkdir(parents=True)  # current Fusion's layout: its agents read 400 lines a time
    text = real * (BACKGROUND_ABOVE // len(real) + 2)  # past the size whose outline is found on a worker
    (root / ".fusion" / "memory" / "MEMORY.md").write_text(text, encoding="utf-8")
    return root, text


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMDESK_CACHE_DIR", str(tmp_path / "cache"))
    win = MainWindow(recent=RecentProjects(persist=False))
    qtbot.addWidget(win)
    win.confirm_discard = lambda: "discard"
    win.resize(1200, 800)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win._close_project()


def _outline_titles(window) -> list[str]:
    tree = window.editor.outline.tree
    out = []
    for i in range(tree.topLevelItemCount()):
        item = tree.topLevelItem(i)
        out.append(item.text(0))
        out.extend(item.child(j).text(0) for j in range(item.childCount()))
    return out


def test_after_typing_stops_the_outline_underlines_and_budget_show_what_was_typed(qtbot, window, big_project):
    root, text = big_project
    window.open_project(root)
    editor = window.editor
    qtbot.waitUntil(lambda: not editor.buffer.loading and not editor.text_edit.isReadOnly(), timeout=30_000)
    meter = window.status.budget_meter
    qtbot.waitUntil(lambda: f"for {len(text.splitlines()):,} lines" in meter.toolTip(), timeout=30_000)
    qtbot.waitUntil(lambda: "Conventions" in _outline_titles(window), timeout=30_000)
    edit = editor.text_edit
    cursor = edit.textCursor()
    cursor.movePosition(QTextCursor.MoveOperation.End)
    edit.setTextCursor(cursor)
    edit.setFocus()

    for line in ("", "## Typed after the pause", "", "- Deploy key AKIAIOSFODNN7EXAMPLE"):
        qtbot.keyClicks(edit, line)
        qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert window.editor.title().endswith("•")  # the unsaved dot at once, no pause needed
    assert "Typed after the pause" not in _outline_titles(window)  # not yet: typing has not paused

    qtbot.waitUntil(lambda: "Typed after the pause" in _outline_titles(window), timeout=30_000)
    lines = len(edit.toPlainText().splitlines())
    assert lines == len(text.splitlines()) + 4
    qtbot.waitUntil(lambda: f"for {lines:,} lines" in meter.toolTip(), timeout=30_000)  # the typed lines count

    def underlined() -> dict[str, object]:
        return {s.cursor.selectedText(): s.format.underlineStyle() for s in edit.extraSelections()}

    qtbot.waitUntil(lambda: "AKIAIOSFODNN7EXAMPLE" in underlined(), timeout=30_000)
    assert underlined()["AKIAIOSFODNN7EXAMPLE"] == QTextCharFormat.UnderlineStyle.WaveUnderline
    qtbot.keyClicks(edit, "x")  # typing again hides the marks until the next pause
    assert "AKIAIOSFODNN7EXAMPLE" not in underlined()
    qtbot.waitUntil(lambda: "AKIAIOSFODNN7EXAMPLE" in underlined(), timeout=30_000)
