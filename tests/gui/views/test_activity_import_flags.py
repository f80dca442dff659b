"""The Activity view shows the firewall's report on an agent's mirrored line (issue 19, item 1): the document, the
rule and the line, never the key. The agent writes with the shell's ``>>``; ``memdesk append`` (a process of its
own) takes the line into the sqlite database and the window's Activity view lists the report."""

from __future__ import annotations

import os
from pathlib import Path

from gui.views.activity_view import ActivityView
from tests.gui.views.mirrored_key import KEY, mirrored_key_project


def test_the_report_on_an_agents_mirrored_key_is_a_row_without_the_key(qtbot, tmp_path, monkeypatch):
    from gui.main_window import MainWindow
    from gui.recent import RecentProjects

    monkeypatch.setenv("MEMDESK_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("MEMDESK_CACHE_DIR", str(tmp_path / "cache"))
    root = mirrored_key_project(tmp_path)
    win = MainWindow(recent=RecentProjects(persist=False))
    qtbot.addWidget(win)
    win.confirm_discard = lambda: "discard"
    win.resize(1200, 780)
    win.show()
    qtbot.waitExposed(win)
    win.open_project(root)
    view = win.show_view("activity")
    assert isinstance(view, ActivityView)
    qtbot.waitUntil(lambda: view.load_count > 0, timeout=5000)
    rows = view.visible_rows()
    flagged = [r for r in rows if "flagged by the memory firewall" in r[4]]
    assert len(flagged) == 1, rows
    assert flagged[0][1] == "program:mirror"
    line = (root / ".fusion" / "memory.md").read_text(encoding="utf-8").split(KEY)[0].count("\n") + 1
    assert flagged[0][4].startswith(f"secret.aws-key (secret) at line {line} in .fusion/memory.md: ")
    assert not any(KEY in cell for r in rows for cell in r if isinstance(cell, str))
    shots = os.environ.get("MEMDESK_SHOTS")
    if shots:
        win.grab().save(str(Path(shots) / "activity-import-flag.png"))
    win.close()
