"""Documents created on disk by agents appear in the list without F5; sizes follow appends (issue 22)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QThreadPool

from gui.main_window import MainWindow
from gui.recent import RecentProjects

NEW_DAILY = ".fusion/memory/2026-12-01.md"
NEW_AGENT = ".fusion/agent-memory/scout/MEMORY.md"


@pytest.fixture
def window(qtbot, layered_project: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("MEMDESK_CACHE_DIR", str(tmp_path / "cache"))
    win = MainWindow(recent=RecentProjects(persist=False))
    win.confirm_discard = lambda: "discard"
    qtbot.addWidget(win)
    win.resize(1200, 720)
    win.show()
    assert win.open_project(layered_project)
    assert win.documents_watcher.active
    yield win
    win.close()
    QThreadPool.globalInstance().waitForDone(5000)


def test_a_daily_note_and_an_agent_folder_created_on_disk_appear(qtbot, window, layered_project):
    assert NEW_DAILY not in window.picker.paths()
    (layered_project / NEW_DAILY).write_text("# 2026-12-01\n\n- an agent started today's note\n", encoding="utf-8")
    qtbot.waitUntil(lambda: NEW_DAILY in window.picker.paths(), timeout=5000)
    folder = layered_project / ".fusion/agent-memory/scout"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("# scout\n\n- first note\n", encoding="utf-8")
    qtbot.waitUntil(lambda: NEW_AGENT in window.picker.paths(), timeout=5000)
    group = window.picker._items[NEW_AGENT].parent()
    assert group is not None and group.text(0) == "scout"  # grouped under its agent, as F5 would show it


def test_a_size_follows_an_append(qtbot, window, layered_project):
    path = ".fusion/memory/2026-08-19.md"
    before = window.picker._items[path].text(2)
    with (layered_project / path).open("a", encoding="utf-8") as handle:
        handle.write("\n- appended by an agent " + "x" * 4000 + "\n")
    qtbot.waitUntil(lambda: window.picker._items[path].text(2) != before, timeout=5000)
    from core.storage.fileio import format_size

    assert window.picker._items[path].text(2) == format_size((layered_project / path).stat().st_size)


def test_memdesks_own_state_does_not_relist(qtbot, window, layered_project):
    calls: list[int] = []
    window.documents_watcher.changed.connect(lambda: calls.append(1))
    state = layered_project / ".fusion/memdesk"
    state.mkdir(exist_ok=True)
    (state / "scratch.bin").write_bytes(b"x" * 100)
    qtbot.wait(600)
    assert calls == []


def test_a_settings_change_made_outside_the_app_sets_the_editor_read_only_and_back(qtbot, window, layered_project,
                                                                                   capsys, user_config_dir):
    """Issue 22: `memdesk settings unset memoryEnabled` left the editor read-only until an unrelated Apply."""
    from core.cli import main
    from gui.editor.memory_editor import MEMORY_OFF

    editor = window.editor
    assert editor.read_only_reason is None
    assert main(["settings", "set", "memoryEnabled", "false", "--project", str(layered_project)]) == 0
    qtbot.waitUntil(lambda: editor.read_only_reason == MEMORY_OFF, timeout=5000)
    assert editor.text_edit.isReadOnly() and editor.read_only_banner.text() == MEMORY_OFF
    assert main(["settings", "unset", "memoryEnabled", "--project", str(layered_project)]) == 0
    qtbot.waitUntil(lambda: editor.read_only_reason is None, timeout=5000)
    assert not editor.text_edit.isReadOnly() and editor.read_only_banner.text() == ""
    capsys.readouterr()
