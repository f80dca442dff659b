"""Helpers for the hostile-input tests: snapshots of folders, so a test can say "nothing on disk changed"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry under ``folder`` (not following links): file bytes, link targets, folder markers."""
    out: dict[str, bytes | str] = {}
    if not os.path.lexists(folder):
        return out
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            rel = str(full.relative_to(folder))
            if full.is_symlink():
                out[rel] = "link->" + os.readlink(full)
            elif full.is_dir():
                out[rel] = "dir"
            elif full.is_file():
                out[rel] = full.read_bytes()
            else:
                out[rel] = "special"
    return out


def run_python(code: str, *, timeout: float = 60, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter with this worktree first on the path."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                          env=env, cwd=cwd)


def run_cli(*args: str, timeout: float = 60, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``memdesk ARGS`` (``python -m core.cli``) in a child process."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "core.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, input=stdin)


def one_line(stderr: str) -> str:
    """The single error line of a failed command (fails the test when there is a traceback or more lines)."""
    lines = [line for line in stderr.splitlines() if line.strip() and "warning:" not in line]
    assert "Traceback" not in stderr, stderr
    assert len(lines) == 1, stderr
    return lines[0]
