"""The Activity view shows the firewall's report on an agent's mirrored line (issue 19, item 1): the document, the
rule and the line, never the key. The agent writes with the shell's ``>>``; ``memdesk append`` (a process of its
own) takes the line into the sqlite database and the window's Activity view lists the report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from gui.views.activity_view import ActivityView

REPO = Path(__file__).resolve().parents[3]
KEY = "AKIAIOSFODNN7EXAMPLE"  # the sample the firewall's rules flag (tests/core/firewall/test_rules.py)


def test_the_report_on_an_agents_mirrored_key_is_a_row_without_the_key(qtbot, tmp_path, monkeypatch):
    from gui.main_window import MainWindow
    from gui.recent import RecentProjects

    monkeypatch.setenv("MEMDESK_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("MEMDESK_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "project"
    (root / ".fusion").mkdir(parents=True)
    (root / ".fusion" / "config.json").write_text(json.dumps({"memoryBackend": "sqlite",
                                                              "memoryBackendConfig": {"mirror": True}}))
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))

    def append(text: str) -> None:
        subprocess.run([sys.executable, "-m", "core.cli", "append", text, "--project", str(root)], check=True,
                       env=env, cwd=root, capture_output=True, timeout=120)

    append("first entry")
    subprocess.run(["sh", "-c", f"printf '%s\\n' '- deploy key {KEY} for ci' >> .fusion/memory.md"], cwd=root,
                   check=True)
    append("second entry")

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
