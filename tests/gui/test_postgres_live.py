"""Live changes on a postgres project: another host's append reaches the open editor through LISTEN/NOTIFY.

The other host is a separate process with its own user config (``MEMDESK_CONFIG_DIR``) and its own
working copy of the project, connected to the same database: nothing it does touches this host's files,
so only the database's notification can bring the entry into this window's editor.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, QThreadPool
from PySide6.QtGui import QTextCursor

from core.project import Project
from core.settings.bindings import confirm
from core.storage import fileio
from gui.main_window import MainWindow
from gui.recent import RecentProjects
from tests.conftest import REPO
from tests.core.pg_server import PASSWORD, PgServer, project_key

MEMORY = ".fusion/memory.md"
WAIT_MS = 10_000
START = "# Project Memory\n\n## Pitfalls\n\n- leases expire after 30 s\n"


def configure(root: Path, key: str, mirror: bool) -> None:
    (root / ".fusion").mkdir(parents=True, exist_ok=True)
    (root / ".fusion" / "config.json").write_text(json.dumps({
        "memoryBackend": "postgres",
        "memoryBackendConfig": {"connection": "team", "projectKey": key, "mirror": mirror}}), encoding="utf-8")
    confirm(root, "team", key)  # the operator confirms the binding once (core.settings.bindings)


class OtherHost:
    """A second host: its own memdesk user config and project folder, the same database and project key."""

    def __init__(self, pg: PgServer, base: Path, key: str, mirror: bool) -> None:
        self.config = base / "host-b-config"
        self.root = base / "host-b"
        self.root.mkdir()
        configure(self.root, key, mirror)
        self.run("connections", "set", "team", "--dsn", "-", stdin=pg.dsn())
        self.run("backend", "confirm", "--project", str(self.root))  # host B's operator confirms its binding

    def run(self, *args: str, stdin: str | None = None) -> str:
        env = {**os.environ, "MEMDESK_CONFIG_DIR": str(self.config), "PYTHONPATH": str(REPO)}
        done = subprocess.run([sys.executable, "-m", "core.cli", *args], env=env, capture_output=True, text=True,
                              timeout=120, input=stdin)
        assert done.returncode == 0, done.stderr
        assert PASSWORD not in done.stdout + done.stderr
        return done.stdout

    def append(self, text: str) -> None:
        self.run("append", text, "--project", str(self.root))


@pytest.fixture(params=[False, True], ids=["mirror-off", "mirror-on"])
def live(request, qtbot, tmp_path: Path, pg: PgServer, pg_connection: str):
    """This host's window on a postgres project holding START, and the other host."""
    key = project_key()
    root = tmp_path / "host-a"
    root.mkdir()
    configure(root, key, request.param)
    seed = Project(root)
    try:
        assert seed.backend.id == "postgres"
        seed.write(None, START)
    finally:
        seed.close()
    other = OtherHost(pg, tmp_path, key, request.param)
    win = MainWindow(root, recent=RecentProjects(QSettings(str(tmp_path / "r.ini"), QSettings.Format.IniFormat)))
    win.confirm_discard = lambda: "discard"
    qtbot.addWidget(win)
    win.show()
    assert win.session.backend.id == "postgres" and win.backend_watcher.active
    assert win.editor.text_edit.toPlainText() == START
    yield win, other, root
    win.close()
    QThreadPool.globalInstance().waitForDone(5000)


def test_another_hosts_append_shows_in_the_open_editor(qtbot, live):
    win, other, root = live
    if not win.session.project.backend.settings.mirror:
        assert not win.watcher.active  # no file to watch: the notification is the only way the entry can come
    other.append("Workers renew leases every 10 s (from host B)")
    qtbot.waitUntil(lambda: "Workers renew leases every 10 s (from host B)" in win.editor.text_edit.toPlainText(),
                    timeout=WAIT_MS)
    text = win.editor.text_edit.toPlainText()
    assert text.startswith(START) and text.count("from host B") == 1
    assert not win.editor.buffer.dirty  # a clean editor reloads: nothing to save
    assert win.editor.pages.currentIndex() == 0  # the text, not the conflict view


def test_an_append_is_merged_into_a_dirty_editor_keeping_the_operators_edit(qtbot, live):
    win, other, _root = live
    editor = win.editor
    cursor = editor.text_edit.textCursor()
    cursor.movePosition(QTextCursor.MoveOperation.Start)
    editor.text_edit.setTextCursor(cursor)
    qtbot.keyClicks(editor.text_edit, "EDIT ")
    assert editor.buffer.dirty
    other.append("Flaky test traced to clock skew (from host B)")
    qtbot.waitUntil(lambda: "clock skew (from host B)" in editor.text_edit.toPlainText(), timeout=WAIT_MS)
    text = editor.text_edit.toPlainText()
    assert text.startswith("EDIT # Project Memory") and text.count("clock skew (from host B)") == 1
    assert editor.pages.currentIndex() == 0 and editor.buffer.dirty  # merged, no conflict; the edit is not saved
    assert editor.save()
    saved = win.session.project.read()
    assert saved.startswith("EDIT # Project Memory") and "clock skew (from host B)" in saved


def test_a_replacing_write_elsewhere_opens_the_conflict_view_over_a_dirty_editor(qtbot, live):
    win, other, _root = live
    editor = win.editor
    qtbot.keyClicks(editor.text_edit, "MINE ")
    assert editor.buffer.dirty
    other.run("write", "--project", str(other.root), stdin="# Project Memory\n\n- rewritten on host B\n")
    qtbot.waitUntil(lambda: editor.pages.currentWidget() is editor.conflict_view, timeout=WAIT_MS)
    assert "MINE " in editor.buffer.text()  # the operator's text is still there to choose from


def test_own_saves_do_not_come_back_as_changes(qtbot, live):
    win, _other, _root = live
    editor = win.editor
    qtbot.keyClicks(editor.text_edit, "SAVED ")
    assert editor.save()
    qtbot.wait(400)  # the notification of our own commit arrives and must be dropped (own flag)
    assert editor.text_edit.toPlainText().count("SAVED ") == 1 and not editor.buffer.dirty
    assert fileio.content_hash(win.session.project.read()) == editor.buffer.base_hash


def test_after_a_server_restart_the_editor_still_learns_of_another_hosts_append(qtbot, live, pg: PgServer):
    win, other, _root = live
    pg.stop("fast")  # every connection of this window is cut: the feed reconnects and re-reads (resync)
    pg.start()
    other.append("Entry written just after the restart (from host B)")
    qtbot.waitUntil(lambda: "just after the restart (from host B)" in win.editor.text_edit.toPlainText(),
                    timeout=WAIT_MS)
    assert win.editor.text_edit.toPlainText().startswith(START) and not win.editor.buffer.dirty


def test_a_change_made_while_the_feed_was_cut_is_re_read_on_resync(qtbot, live, pg: PgServer, tmp_path: Path):
    import psycopg

    from core.backends.postgres import PostgresMemoryBackend

    win, _other, _root = live
    settings = win.session.backend.settings
    host_c = tmp_path / "host-c"
    host_c.mkdir()
    c = PostgresMemoryBackend()
    c.initialize({"connection": "team", "projectKey": settings.project_key, "mirror": False}, host_c)
    try:
        pid = win.backend_watcher._handle.feed._conn.info.backend_pid
        with psycopg.connect(pg.dsn(), autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        # Committed while this window's LISTEN connection is gone: its notification never reaches it.
        c.append_document(c.primary, lambda cur: "\n- written while the feed was cut (from host C)\n")
        qtbot.waitUntil(lambda: "while the feed was cut (from host C)" in win.editor.text_edit.toPlainText(),
                        timeout=WAIT_MS)
        assert win.editor.text_edit.toPlainText().startswith(START)
    finally:
        c.shutdown()
