"""The ``memdesk`` entry point: screenshots of each view, argument errors, headless dispatch."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QThreadPool
from PySide6.QtGui import QImage

from gui.main import HEADLESS_COMMANDS, main

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _drain_workers(qapp):
    yield
    QThreadPool.globalInstance().waitForDone(5000)


@pytest.mark.parametrize("view", ["editor", "settings", "backends", "insights", "prune", "audit"])
def test_screenshot_of_each_view(tmp_path: Path, sample_project: Path, view: str) -> None:
    out = tmp_path / "shots" / f"{view}.png"
    assert main([str(sample_project), "--screenshot", str(out), "--view", view]) == 0
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1280, 800)
    assert len({image.pixel(x, y) for x in range(0, 1280, 40) for y in range(0, 800, 40)}) > 3  # not blank


def test_screenshot_size_option(tmp_path: Path, real_project: Path) -> None:
    out = tmp_path / "small.png"
    assert main([str(real_project), "--screenshot", str(out), "--size", "900x600"]) == 0
    assert QImage(str(out)).size().toTuple() == (900, 600)


def test_path_that_is_not_a_folder(tmp_path: Path, capsys) -> None:
    file = tmp_path / "memory.md"
    file.write_text("x", encoding="utf-8")
    assert main([str(file)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "is not a folder" in err
    assert main([str(tmp_path / "missing")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_bad_size_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        main([str(tmp_path), "--size", "big"])
    assert exc.value.code == 2


def test_headless_subcommands_go_to_the_cli(monkeypatch) -> None:
    import core.cli

    seen: list[list[str]] = []
    monkeypatch.setattr(core.cli, "main", lambda argv: seen.append(argv) or 7)
    assert main(["show", "/some/project"]) == 7
    assert seen == [["show", "/some/project"]]
    assert {"show", "append", "prune", "run-scheduled", "reindex"} <= HEADLESS_COMMANDS


def test_entry_point_does_not_import_qt() -> None:
    code = "import sys, gui.main; print(any(m.startswith('PySide6') for m in sys.modules))"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "False"


def test_headless_commands_match_the_cli() -> None:
    import argparse

    from core.cli import build_parser

    subparsers = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(subparsers.choices) == HEADLESS_COMMANDS
