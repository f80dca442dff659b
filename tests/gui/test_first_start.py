"""First start without a display: one clear line and exit 1, before Qt can abort with its xcb message."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gui.main import display_problem

REPO = Path(__file__).resolve().parents[2]


def test_no_display_is_found_and_explained() -> None:
    problem = display_problem({"MEMDESK_COMMAND": "./run.sh"}, platform="linux")
    assert problem is not None and "\n" not in problem
    assert "DISPLAY and WAYLAND_DISPLAY are unset" in problem
    assert "xvfb-run ./run.sh" in problem and "./run.sh --screenshot FILE.png" in problem


def test_a_display_or_a_chosen_platform_is_left_alone(tmp_path: Path) -> None:
    assert display_problem({"QT_QPA_PLATFORM": "offscreen"}, platform="linux") is None
    assert display_problem({}, platform="darwin") is None and display_problem({}, platform="win32") is None
    assert display_problem({"WAYLAND_DISPLAY": "wayland-0"}, platform="linux") is None
    gone = display_problem({"DISPLAY": ":97"}, platform="linux")
    assert gone is not None and "DISPLAY is :97, but no X server is listening there" in gone


def test_memdesk_without_a_display_exits_1_with_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env.update(PYTHONPATH=str(REPO), MEMDESK_COMMAND="./run.sh", HOME=str(tmp_path))
    done = subprocess.run([sys.executable, "-m", "gui.main", str(REPO / "resources" / "sample")], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    if not sys.platform.startswith("linux"):
        return
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memdesk: no display")
    assert "xcb" not in done.stderr and "Aborted" not in done.stderr


def test_screenshot_works_without_a_display(tmp_path: Path, sample_project: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env.update(PYTHONPATH=str(REPO), HOME=str(tmp_path))
    out = tmp_path / "shot.png"
    done = subprocess.run([sys.executable, "-m", "gui.main", str(sample_project), "--screenshot", str(out),
                           "--size", "800x600", "--theme", "dark"], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes().startswith(b"\x89PNG")
