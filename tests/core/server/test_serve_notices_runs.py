"""``memdesk serve`` keeps what another program rewrites (issue 21, must-have 3): Fusion's dream run in a
separate process changes three documents no client has read; each one's text before is in history, the
run is one event of three documents, and undoing it through the CLI restores the bytes."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

from core.storage.history import versions as history
from core.storage.noticed import EXTERNAL_CHANGE
from tests.core.fusion_dream_process import TOUCHED, run_fusion_dream
from tests.core.server.conftest import REPO, cli_env


def _kept(root: Path) -> dict[str, list[bytes]]:
    out: dict[str, list[bytes]] = {}
    for v in history.list_versions(root, None):
        if v.source == EXTERNAL_CHANGE:
            out.setdefault(v.path, []).append(history.get_version(root, v.id)[1].encode("utf-8"))
    return out


def _cli(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_serve_keeps_every_document_a_dream_run_rewrote_and_the_run_undoes(layered_project: Path,
                                                                          user_config_dir: Path, tokens):
    root = layered_project
    for path in root.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    tokens.create("agent-a")
    env = cli_env(user_config_dir)
    server = subprocess.Popen([sys.executable, "-m", "core.cli", "serve", "--project", str(root), "--port", "0"],
                              cwd=REPO, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        assert server.stderr is not None
        for line in server.stderr:
            if "memdesk: serving" in line:
                break
        else:
            raise AssertionError("memdesk serve did not start")
        before = run_fusion_dream(root)
        deadline = time.monotonic() + 30
        while set(_kept(root)) != set(TOUCHED) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _kept(root) == {rel: [before[rel]] for rel in TOUCHED}  # byte-exact, one version each
    finally:
        server.terminate()
        server.wait(30)
    listed = _cli(env, "rewrites", "--project", str(root))
    m = re.search(r"^(run-\d+)  3 documents rewritten at \d\d:\d\d by another program", listed, re.M)
    assert m, listed
    staged = _cli(env, "rewrites", "undo", m.group(1), "--project", str(root))
    pid = re.search(r"Staged undo proposal (\S+):", staged).group(1)
    _cli(env, "proposals", "apply", pid, "--allow-loss", "--project", str(root))
    for rel in TOUCHED:
        assert (root / rel).read_bytes() == before[rel], rel
