"""A user-scope state file (tokens, bindings, the read log…) linked out of the user's memdesk folder is refused
in words about that folder, not about a project (found by the round-5 review: ``memdesk tokens create`` through
a planted ``tokens.json`` link said the link "leaves the project root" and told the user to replace it "inside
the project"). Through a real ``memdesk`` process; nothing is written through the link."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.core.server.conftest import REPO, cli_env


def test_a_tokens_file_linked_out_is_refused_naming_the_config_folder(tmp_path: Path, user_config_dir: Path):
    outside = tmp_path / "elsewhere" / "tokens.json"
    outside.parent.mkdir()
    outside.write_text("{}", encoding="utf-8")
    user_config_dir.mkdir(parents=True)
    (user_config_dir / "tokens.json").symlink_to(outside)
    done = subprocess.run([sys.executable, "-m", "core.cli", "tokens", "create", "agent"], cwd=REPO,
                          env=cli_env(user_config_dir), capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    message = done.stderr.strip()
    assert len(message.splitlines()) == 1, message
    assert "tokens.json" in message and "memdesk config folder" in message, message
    assert "project" not in message, message
    assert outside.read_text(encoding="utf-8") == "{}"
