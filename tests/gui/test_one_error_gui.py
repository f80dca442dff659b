"""Issue 22, "One error is printed twice", on the app's side of the ``memdesk`` command: a project that cannot
be opened is reported once, in one line, never a second time by the logger with a traceback; a memory file
that is a symbolic link loop opens with its banner instead of a crash.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QThreadPool

REPO = Path(__file__).resolve().parents[2]


def test_a_project_that_cannot_be_opened_is_reported_once_in_one_line(qtbot, tmp_path, sample_project,
                                                                       monkeypatch, caplog):
    import gui.session
    from gui.main_window import MainWindow
    from gui.recent import RecentProjects

    denied = sample_project / ".fusion" / "memory"

    def refuse(self, root, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(denied))

    monkeypatch.setattr(gui.session.ProjectSession, "__init__", refuse)
    win = MainWindow(recent=RecentProjects(persist=False))
    qtbot.addWidget(win)
    shown: list[str] = []
    win.show_error = shown.append
    before = {p: p.read_bytes() for p in sample_project.rglob("*") if p.is_file()}
    with caplog.at_level(logging.DEBUG):
        assert win.open_project(sample_project) is False
    assert shown == [f"Cannot open {sample_project}: cannot read {denied}: Permission denied; check the owner and "
                     "mode of the file and of its folder"]
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []  # the terminal's second copy
    assert {p: p.read_bytes() for p in sample_project.rglob("*") if p.is_file()} == before


def test_a_memory_file_that_is_a_link_loop_opens_with_its_reason(tmp_path):
    root = tmp_path / "loop"
    (root / ".fusion").mkdir(parents=True)
    os.symlink("memory.md", root / ".fusion" / "memory.md")  # points at itself
    out = subprocess.run([sys.executable, "-m", "gui.main", "--screenshot", str(tmp_path / "loop.png"), str(root)],
                         cwd=REPO, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    assert out.stdout == f"memdesk: wrote {tmp_path / 'loop.png'}\n"
    assert os.readlink(root / ".fusion" / "memory.md") == "memory.md"  # left as it was
    QThreadPool.globalInstance().waitForDone(5000)
