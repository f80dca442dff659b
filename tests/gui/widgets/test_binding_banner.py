"""A project whose settings name a team binding not confirmed yet opens read-only, with the reason and a
Confirm button (issue 19, item 3); a real PostgreSQL server, a real window driven by a click."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QThreadPool

from core.backends.postgres import PostgresMemoryBackend
from core.settings.bindings import confirmed
from gui.main_window import MainWindow
from gui.recent import RecentProjects
from tests.core.pg_server import PgServer, project_key

MEMORY = ".fusion/memory.md"


def test_an_unconfirmed_team_binding_is_read_only_until_the_operator_confirms(qtbot, tmp_path: Path, pg: PgServer,
                                                                              pg_connection: str):
    key = project_key()
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    seed = PostgresMemoryBackend()
    seed.initialize({"connection": "team", "projectKey": key, "mirror": False}, theirs)
    seed.write("# Project Memory\n\n- the other project's plans\n")
    seed.shutdown()
    root = tmp_path / "cloned"
    (root / ".fusion" / "memdesk").mkdir(parents=True)
    settings = {"memoryBackend": "postgres", "memoryBackendConfig": {"connection": "team", "projectKey": key,
                                                                     "mirror": True}}
    (root / ".fusion" / "memdesk" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    (root / ".fusion" / "config.json").write_text(json.dumps(settings), encoding="utf-8")
    win = MainWindow(root, recent=RecentProjects(QSettings(str(tmp_path / "r.ini"), QSettings.Format.IniFormat)))
    win.confirm_discard = lambda: "discard"
    qtbot.addWidget(win)
    win.show()
    try:
        banner = win.editor.binding_banner
        qtbot.waitUntil(lambda: banner.isVisible(), timeout=5000)
        assert f'project key "{key}"' in banner.text() and "not confirmed" in banner.text()
        assert win.editor.text_edit.isReadOnly()
        assert "the other project's plans" not in win.editor.text_edit.toPlainText()
        assert not (root / MEMORY).exists()  # nothing mirrored into the folder
        qtbot.mouseClick(banner.button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: "the other project's plans" in win.editor.text_edit.toPlainText(), timeout=10_000)
        assert not banner.isVisible() and not win.editor.text_edit.isReadOnly()
        assert win.session.backend.id == "postgres"
        assert confirmed(root) == ("team", key)
    finally:
        win.close()
        QThreadPool.globalInstance().waitForDone(5000)
