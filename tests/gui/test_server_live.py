"""The app and ``memdesk serve`` on one project at once: 8 agents append through HTTP and MCP while the operator's
edit is unsaved; every entry lands once, the editor merges them all, and the operator's edit survives the save."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from core.server.http import create_app
from core.server.runner import bind_socket, make_server
from core.server.service import ServedProjects
from core.server.tokens import TokenStore
from gui.main_window import MainWindow
from tests.core.server.test_server_concurrency import PER_CLIENT, _entry, _mcp_appends
from tests.core.server.test_server_mcp import run_http, run_stdio

MEMORY = ".fusion/memory.md"


@pytest.fixture
def window(sample_window):
    """The sample project open in a shown window that watches its memory file (tests/gui/conftest.py)."""
    return sample_window


@pytest.fixture
def server(user_config_dir: Path, sample_project: Path):
    """``memdesk serve`` over the sample project (a real uvicorn on a free loopback port), and a token."""
    tokens = TokenStore()
    token = tokens.create("swarm")
    sock = bind_socket("127.0.0.1", 0)
    bound = make_server(create_app(ServedProjects([sample_project]), tokens, port=sock.getsockname()[1]), sock)
    thread = bound.start_thread()
    yield f"http://127.0.0.1:{bound.port}", token
    bound.stop()
    thread.join(15)


def test_agents_write_through_the_servers_while_the_editor_is_dirty(qtbot, window: MainWindow, server,
                                                                     user_config_dir: Path, sample_project: Path):
    import httpx

    url, token = server
    editor = window.editor
    cursor = editor.text_edit.textCursor()
    cursor.setPosition(0)
    editor.text_edit.setTextCursor(cursor)
    qtbot.keyClicks(editor.text_edit, "OPERATOR ")
    assert editor.dirty

    errors: list[BaseException] = []
    names: list[str] = []

    def http_client(name: str) -> None:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as c:
            for i in range(PER_CLIENT):
                assert c.post("/api/memory/append", json={"content": _entry(name, i)}).json()["status"] == "written"

    def stdio_client(name: str) -> None:
        assert run_stdio(sample_project, user_config_dir, _mcp_appends(name), client=name) == ["written"] * PER_CLIENT

    def mcp_http_client(name: str) -> None:
        assert run_http(url, token, _mcp_appends(name), client=name) == ["written"] * PER_CLIENT

    def guarded(fn, name: str) -> None:
        try:
            fn(name)
        except BaseException as exc:  # reported in the test's thread
            errors.append(exc)

    threads = []
    for fn, prefix, count in ((http_client, "http", 3), (stdio_client, "stdio", 3), (mcp_http_client, "mcphttp", 2)):
        for i in range(count):
            names.append(f"{prefix}{i}")
            threads.append(threading.Thread(target=guarded, args=(fn, names[-1]), daemon=True))
    for t in threads:
        t.start()
    qtbot.waitUntil(lambda: not any(t.is_alive() for t in threads), timeout=300_000)
    assert not errors, errors

    on_disk = (sample_project / MEMORY).read_text(encoding="utf-8")
    for name in names:
        for i in range(PER_CLIENT):
            assert on_disk.count(_entry(name, i)) == 1, (name, i)
    # The watcher merges every appended entry into the unsaved text, keeping the operator's edit.
    qtbot.waitUntil(lambda: editor.text() == "OPERATOR " + on_disk, timeout=30_000)
    assert editor.pages.currentWidget() is not editor.conflict_view
    assert editor.dirty
    assert editor.save()
    saved = (sample_project / MEMORY).read_text(encoding="utf-8")
    assert saved == "OPERATOR " + on_disk
