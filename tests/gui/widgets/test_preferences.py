"""Edit ▸ Preferences… (Ctrl+,): connections, API tokens and the local server, driven through the dialog."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from core.server.tokens import TokenStore, tokens_path
from core.settings import connections
from gui.widgets.preferences_dialog import PreferencesDialog
from gui.widgets.shortcuts_dialog import ShortcutsDialog
from tests.gui.desk_window import CTRL


@pytest.fixture
def prefs(qtbot, desk, user_config_dir: Path):
    answers: list[str] = []
    desk.activateWindow()
    qtbot.waitUntil(desk.isActiveWindow, timeout=3000)  # shortcuts reach only the active window
    desk.editor.text_edit.setFocus()
    qtbot.keyClick(desk.editor.text_edit, Qt.Key.Key_Comma, CTRL)
    dialog = desk.desk.preferences
    assert isinstance(dialog, PreferencesDialog) and dialog.isVisible()
    dialog.confirm = lambda text: answers.append(text) or True
    dialog.answers = answers
    yield dialog
    desk.desk.server.stop()


def _retype(qtbot, field, text: str) -> None:
    field.setFocus()
    field.selectAll()
    qtbot.keyClick(field, Qt.Key.Key_Delete)
    qtbot.keyClicks(field, text)


def test_a_connection_is_saved_listed_masked_and_removed(qtbot, prefs, user_config_dir):
    page = prefs.connections
    _retype(qtbot, page.name, "team")
    _retype(qtbot, page.dsn, "postgresql://ops:s3cret@db.example:5432/memory")
    qtbot.keyClick(page.dsn, Qt.Key.Key_Return)
    assert page.names() == ["team"]
    assert page.table.item(0, 1).text() == "user=ops password=**** dbname=memory host=db.example port=5432"
    assert page.status.text() == "Saved team: user=ops password=**** dbname=memory host=db.example port=5432"
    assert "s3cret" not in page.status.text() and page.dsn.text() == ""
    assert connections.get_connection("team").dsn == "postgresql://ops:s3cret@db.example:5432/memory"
    page.table.selectRow(0)
    qtbot.mouseClick(page.remove_button, Qt.MouseButton.LeftButton)
    assert prefs.answers and "Remove the connection 'team'?" in prefs.answers[0]
    assert page.names() == [] and connections.list_connections() == []


def test_a_bad_connection_is_said_in_one_line_and_nothing_is_written(qtbot, prefs, user_config_dir):
    page = prefs.connections
    _retype(qtbot, page.name, "bad name")
    _retype(qtbot, page.dsn, "postgresql://localhost/db")
    qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    assert page.status.text().startswith("Not saved: connection name 'bad name' must be")
    _retype(qtbot, page.name, "team")
    _retype(qtbot, page.dsn, "no such = = thing")
    qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    assert page.status.text().startswith("Not saved: the DSN is not a PostgreSQL connection string")
    assert "\n" not in page.status.text()
    assert not connections.connections_path().exists()


def test_test_connects_to_a_real_server(qtbot, prefs, pg):
    page = prefs.connections
    _retype(qtbot, page.name, "team")
    _retype(qtbot, page.dsn, pg.dsn())
    qtbot.keyClick(page.dsn, Qt.Key.Key_Return)
    page.table.selectRow(0)
    qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
    assert page.status.text().startswith("team: connected to PostgreSQL ")
    connections.set_connection("gone", pg.dsn().replace(f"port={pg.port}", "port=1"))
    page.refresh()
    page.table.selectRow(page.names().index("gone"))
    qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
    assert page.status.text().startswith("gone: cannot connect to ")
    assert "password" not in page.status.text() or "****" in page.status.text()


def test_a_token_is_shown_once_listed_and_revoked(qtbot, prefs, user_config_dir):
    page = prefs.tokens
    prefs.tabs.setCurrentWidget(page)
    _retype(qtbot, page.name, "claude-desktop")
    qtbot.keyClick(page.name, Qt.Key.Key_Return)
    token = page.secret.text()
    assert token.startswith("mdk_") and page.secret.isVisible()
    assert "shown only this once" in page.status.text()
    assert page.names() == ["claude-desktop"]
    assert token not in tokens_path().read_text(encoding="utf-8")  # only its hash is kept
    assert TokenStore().verify(token) == "claude-desktop"
    qtbot.mouseClick(page.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == token
    _retype(qtbot, page.name, "claude-desktop")
    qtbot.keyClick(page.name, Qt.Key.Key_Return)
    assert page.status.text().startswith("Not created: a token named 'claude-desktop' exists already")
    page.table.selectRow(0)
    qtbot.mouseClick(page.revoke_button, Qt.MouseButton.LeftButton)
    assert page.names() == [] and TokenStore().verify(token) is None and not page.secret.isVisible()


def test_the_local_server_serves_the_project_with_a_token_and_stops(qtbot, prefs, desk, user_config_dir):
    import httpx

    prefs.tabs.setCurrentWidget(prefs.tokens)
    _retype(qtbot, prefs.tokens.name, "agent-host")
    qtbot.keyClick(prefs.tokens.name, Qt.Key.Key_Return)
    token = prefs.tokens.secret.text()
    page = prefs.server
    prefs.tabs.setCurrentWidget(page)
    page.port.setValue(0)
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    server = desk.desk.server
    assert server.running, page.state.text()
    url = server.url
    assert page.state.text().startswith(f"Serving {desk.session.root} on {url}")
    reply = httpx.get(f"{url}/api/memory/files", headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert reply.status_code == 200
    assert ".fusion/memory/MEMORY.md" in json.dumps(reply.json())
    assert httpx.get(f"{url}/api/memory/files", timeout=30).status_code == 401
    qtbot.mouseClick(page.copy_button, Qt.MouseButton.LeftButton)
    block = json.loads(QGuiApplication.clipboard().text())
    assert block == {"mcpServers": {"memdesk": {"type": "http", "url": f"{url}/mcp",
                                                "headers": {"Authorization": f"Bearer {token}"}}}}
    page.stdio.setChecked(True)
    stdio = json.loads(page.block.toPlainText())["mcpServers"]["memdesk"]
    assert stdio["args"] == ["mcp", "--project", str(desk.session.root)]
    qtbot.mouseClick(page.stop_button, Qt.MouseButton.LeftButton)
    assert not server.running and page.state.text() == "Not serving."
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/api/memory/files", timeout=5)


def test_a_taken_port_is_said(qtbot, prefs):
    import socket

    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    try:
        page = prefs.server
        page.port.setValue(busy.getsockname()[1])
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
        assert page.state.text().startswith(f"Not serving: cannot listen on 127.0.0.1:{busy.getsockname()[1]}")
    finally:
        busy.close()


def test_preferences_is_listed(desk):
    assert ("Edit", "Preferences", "Ctrl+,") in ShortcutsDialog(desk).rows
