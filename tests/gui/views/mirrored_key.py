"""A project whose agent wrote a key into its mirror: the Activity view's tests' common start.

A sqlite memory mirrored to ``.fusion/memory.md``; ``memdesk append`` (a process of its own), then the agent's
shell ``>>`` of a line holding an AWS key into the mirror, then another ``memdesk append``, which takes the
agent's line into the database and leaves the firewall's report on it in the activity."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
KEY = "AKIAIOSFODNN7EXAMPLE"  # the sample the firewall's rules flag (tests/core/firewall/test_rules.py)


def mirrored_key_project(tmp_path: Path) -> Path:
    """The project (under ``tmp_path``) after the two appends and the agent's line between them."""
    root = tmp_path / "project"
    (root / ".fusion").mkdir(parents=True)
    (root / ".fusion" / "config.json").write_text(json.dumps({"memoryBackend": "sqlite",
                                                              "memoryBackendConfig": {"mirror": True}}))
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))

    def append(text: str) -> None:
        subprocess.run([sys.executable, "-m", "core.cli", "append", text, "--project", str(root)], check=True,
                       env=env, cwd=root, capture_output=True, timeout=120)

    append("Leases renew at two thirds of their term; a lost renewal retries with backoff")
    with open(root / ".fusion" / "memory.md", "a", encoding="utf-8") as fh:  # the agent's >>
        fh.write(f"- deploy key {KEY} for ci\n")
    append("Deploys go out on Tuesdays after the staging soak passes")
    return root
