"""Confirming team bindings (or setting team connections) from several processes at once keeps every one (found
by the round-5 review: the bindings file was read, changed and written without its lock, so 8 concurrent
confirmations kept 5)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.core.server.conftest import REPO, cli_env

N = 8


def test_concurrent_confirmations_each_keep_their_binding(tmp_path: Path, user_config_dir: Path):
    code = ("import sys; from core.settings import bindings\n"
            "bindings.confirm(sys.argv[1], 'team', sys.argv[2])\n")
    folders = []
    for i in range(N):
        folder = tmp_path / f"project{i}"
        folder.mkdir()
        folders.append(folder)
    procs = [subprocess.Popen([sys.executable, "-c", code, str(f), f"key{i}"], cwd=REPO, env=cli_env(user_config_dir))
             for i, f in enumerate(folders)]
    assert [p.wait(120) for p in procs] == [0] * N
    kept = json.loads((user_config_dir / "bindings.json").read_text(encoding="utf-8"))["projects"]
    assert {k: v["projectKey"] for k, v in kept.items()} == {str(f.resolve()): f"key{i}" for i, f in enumerate(folders)}


def test_concurrent_connections_each_keep_theirs(user_config_dir: Path):
    """The same for ``memdesk connections set`` (the team connections) run at once."""
    procs = [subprocess.Popen([sys.executable, "-m", "core.cli", "connections", "set", f"team{i}",
                               "--dsn", f"postgresql://u@db{i}.example/memdesk"], cwd=REPO, env=cli_env(user_config_dir),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for i in range(N)]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * N, errors
    kept = json.loads((user_config_dir / "connections.json").read_text(encoding="utf-8"))["connections"]
    assert sorted(kept) == sorted(f"team{i}" for i in range(N))


def test_concurrent_provider_changes_each_keep_theirs(user_config_dir: Path):
    """The same for the user config's providers (``memdesk providers set`` from several shells, or beside the app)."""
    code = ("import sys; from core.settings.user_config import set_provider\n"
            "for n in range(10): set_provider(f'{sys.argv[1]}-{n}', {'kind': 'command', 'command': ['cat']})\n")
    procs = [subprocess.Popen([sys.executable, "-c", code, f"local{i}"], cwd=REPO, env=cli_env(user_config_dir))
             for i in range(N)]
    assert [p.wait(120) for p in procs] == [0] * N
    kept = json.loads((user_config_dir / "config.json").read_text(encoding="utf-8"))["providers"]
    assert {f"local{i}-{n}" for i in range(N) for n in range(10)} <= set(kept), sorted(kept)
