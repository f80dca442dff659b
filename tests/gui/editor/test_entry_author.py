"""The editor's footer names who appended the entry under the cursor, and when, from History."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from PySide6.QtCore import QThreadPool
from PySide6.QtGui import QTextCursor

from core.project import Project
from core.storage.history.versions import list_events
from gui.main_window import MainWindow
from gui.recent import RecentProjects

MEMORY = ".fusion/memory.md"
ENTRY = "Lease renewals must carry the worker id, or the scheduler double-books (FN-2101)"


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMDESK_CACHE_DIR", str(tmp_path / "cache"))
    made: list[MainWindow] = []

    def make(root: Path) -> MainWindow:
        win = MainWindow(root, recent=RecentProjects(persist=False))
        qtbot.addWidget(win)
        win.confirm_discard = lambda: "discard"
        win.resize(1200, 800)
        win.show()
        made.append(win)
        return win

    yield make
    for win in made:
        win._close_project()
    QThreadPool.globalInstance().waitForDone(5000)


def _put_cursor_on(win: MainWindow, text: str) -> int:
    edit = win.editor.text_edit
    line = edit.toPlainText().split("\n").index(text)
    edit.setTextCursor(QTextCursor(edit.document().findBlockByNumber(line)))
    return line


def _stamp(root: Path, text: str) -> str:
    event = next(e for e in list_events(root, MEMORY) if e.text == text)
    return datetime.fromisoformat(event.created_at).astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def test_footer_names_the_agent_that_appended_the_entry(qtbot, window, real_project: Path) -> None:
    Project(real_project).append(ENTRY, author="agent-7")
    win = window(real_project)
    footer = win.editor.author_label
    qtbot.waitUntil(lambda: not win.editor.authors.pending(), timeout=5000)
    _put_cursor_on(win, ENTRY)
    assert footer.isVisible() and footer.text() == f"added by agent-7, {_stamp(real_project, ENTRY)}"
    _put_cursor_on(win, "## Conventions")  # written before memdesk kept history: nothing is claimed
    assert footer.text() == ""
    # On the dated marker above the entry: the entry it opens.
    line = _put_cursor_on(win, ENTRY) - 1
    edit = win.editor.text_edit
    edit.setTextCursor(QTextCursor(edit.document().findBlockByNumber(line)))
    assert edit.textCursor().block().text().startswith("<!-- ")
    assert footer.text() == f"added by agent-7, {_stamp(real_project, ENTRY)}"


def test_an_append_arriving_while_open_is_credited_once_it_lands(qtbot, window, real_project: Path) -> None:
    win = window(real_project)
    qtbot.waitUntil(lambda: not win.editor.authors.pending(), timeout=5000)
    later = "Dispatcher retries are capped at three; the fourth goes to the dead-letter list"
    Project(real_project).append(later, author="reviewer-2")
    qtbot.waitUntil(lambda: later in win.editor.text(), timeout=5000)  # the watcher reloads the appended text
    qtbot.waitUntil(lambda: not win.editor.authors.pending(), timeout=5000)
    _put_cursor_on(win, later)
    assert win.editor.author_label.text() == f"added by reviewer-2, {_stamp(real_project, later)}"
    assert not win.editor.dirty
