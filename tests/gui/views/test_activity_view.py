"""The Activity view: every write by every writer, newest first, filterable, opening the document at the entry."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt

from core.project import Project
from core.storage.history import versions as history
from gui.views.activity_view import ActivityView
from gui.widgets.shortcuts_dialog import ShortcutsDialog
from tests.gui.desk_window import CTRL, DREAMS, MEMORY, type_text

DAILY_REVIEWER = ".fusion/agent-memory/reviewer/2026-08-20.md"


def _agents_write(root) -> None:
    other = Project(root)  # another program: an agent's process beside the window
    try:
        other.append("Check the migration order before merging", path=DAILY_REVIEWER, author="mcp:reviewer")
        other.append("Leases use the DB clock", layer="long-term", author="cli")
    finally:
        other.close()
    history.settled()


def _activity(desk, qtbot=None) -> ActivityView:
    view = desk.show_view("activity")
    assert isinstance(view, ActivityView)
    if qtbot is not None:  # the history is read on a worker thread
        qtbot.waitUntil(lambda: view.load_count > 0, timeout=5000)
    return view


def test_every_write_newest_first_with_its_writer_and_kind(qtbot, desk, layered_project):
    edit = desk.editor.text_edit
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_End, CTRL)
    type_text(qtbot, edit, "\n- the operator's own line")
    qtbot.keyClick(edit, Qt.Key.Key_S, CTRL)
    assert not desk.editor.dirty
    time.sleep(1.1)  # history records times to the second: the agents write in the next one
    _agents_write(layered_project)
    view = _activity(desk, qtbot)
    rows = view.visible_rows()
    shown = [(r[1], r[2], r[3]) for r in rows]  # the Document column leaves out ".fusion/"
    saver = history.list_versions(layered_project)[0].author  # the app's save, as the pipeline recorded its writer
    assert saver and saver != "unknown"
    assert shown == [("cli", "append", "memory/MEMORY.md"), ("mcp:reviewer", "append", DAILY_REVIEWER[8:]),
                     (saver, "replace", "memory/MEMORY.md")]
    assert rows[2][4].startswith("saved in the editor — the previous text (")
    assert rows[0][4] == "Leases use the DB clock"
    assert view.count_label.text() == "3 writes"


def test_filters_narrow_by_writer_document_and_kind_and_text(qtbot, desk, layered_project):
    _agents_write(layered_project)
    view = _activity(desk, qtbot)
    view.writer_filter.setFocus()
    view.writer_filter.setCurrentIndex(view.writer_filter.findText("mcp:reviewer"))
    assert [r[3] for r in view.visible_rows()] == [DAILY_REVIEWER.removeprefix(".fusion/")]
    assert view.count_label.text() == "1 of 2 writes"
    view.writer_filter.setCurrentIndex(0)
    view.kind_filter.setCurrentIndex(view.kind_filter.findText("replace"))
    assert view.visible_rows() == []
    view.kind_filter.setCurrentIndex(0)
    view.document_filter.setCurrentIndex(view.document_filter.findText(MEMORY))
    assert [r[4] for r in view.visible_rows()] == ["Leases use the DB clock"]
    view.document_filter.setCurrentIndex(0)
    qtbot.keyClick(view, Qt.Key.Key_L, CTRL)
    assert view.text_filter.hasFocus()
    qtbot.keyClicks(view.text_filter, "migration")
    assert [r[1] for r in view.visible_rows()] == ["mcp:reviewer"]


def test_enter_opens_the_document_at_the_entry(qtbot, desk, layered_project):
    _agents_write(layered_project)
    view = _activity(desk, qtbot)
    assert view.select_key(next(e.key for e in view.model.entries if e.path == DAILY_REVIEWER))
    view.table.setFocus()
    qtbot.keyClick(view.table, Qt.Key.Key_Return)
    assert desk.session.current_path == DAILY_REVIEWER
    lines = (layered_project / DAILY_REVIEWER).read_text(encoding="utf-8").split("\n")
    cursor_line = desk.editor.text_edit.textCursor().blockNumber()
    assert lines[cursor_line] == "Check the migration order before merging"


def test_an_agents_append_appears_while_the_view_is_shown(qtbot, desk, layered_project):
    view = _activity(desk, qtbot)
    assert view.count_label.text() == "No writes recorded yet"
    _agents_write(layered_project)
    qtbot.waitUntil(lambda: len(view.visible_rows()) == 2, timeout=5000)
    assert view.visible_rows()[0][1] == "cli"


def test_the_activity_shortcuts_are_listed(desk):
    _activity(desk)
    rows = ShortcutsDialog(desk).rows
    assert ("Activity", "Filter the activity", "Ctrl+L") in rows
    assert any(r[0] == "View" and r[1] == "Go to Activity" for r in rows)


def test_an_agents_read_through_the_local_server_is_listed_and_opens_at_its_lines(qtbot, desk, layered_project,
                                                                                  user_config_dir):
    import httpx

    from core.server.tokens import TokenStore
    from core.storage import readlog

    token = TokenStore().create("claude-desktop")
    server = desk.desk.server
    assert server.start(desk.session.root, 0), server.error
    try:
        reply = httpx.get(f"{server.url}/api/memory/file", params={"path": "DREAMS.md"},
                          headers={"Authorization": f"Bearer {token}", "User-Agent": "claude-desktop/1.0"},
                          timeout=30)
        assert reply.status_code == 200
    finally:
        server.stop()
    readlog.flush()
    view = _activity(desk, qtbot)
    view.kind_filter.setCurrentIndex(view.kind_filter.findText("read"))
    rows = view.visible_rows()
    assert len(rows) == 1
    assert rows[0][2] == "read" and rows[0][3] == "memory/DREAMS.md"
    assert "claude-desktop" in rows[0][1]
    assert rows[0][4].startswith("read lines 1–")
    view.table.setCurrentIndex(view.model.index(0, 0))
    view.table.setFocus()
    qtbot.keyClick(view.table, Qt.Key.Key_Return)
    assert desk.session.current_path == DREAMS and desk.editor.text_edit.textCursor().blockNumber() == 0
