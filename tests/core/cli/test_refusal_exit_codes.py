"""Every refusal of bad state or bad input exits 2 with its one line (round-5 review, issue 19): ``inbox list`` on a
too-big inbox exited 1 while other refusals exited 2, and ``tokens create`` exited 1 through a FIFO or a hard link
but 2 through a link out. A failure of the system (a full disk, a lock held too long) stays exit 1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.core.server.conftest import REPO, cli_env


def memdesk(config: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "core.cli", *argv], cwd=REPO, env=cli_env(config),
                          capture_output=True, text=True, timeout=120)


def refused(done: subprocess.CompletedProcess[str], *named: str) -> str:
    assert done.returncode == 2, (done.returncode, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("memdesk: "), done.stderr
    assert "Traceback" not in done.stderr
    for word in named:
        assert word in lines[0], lines[0]
    return lines[0]


def test_inbox_list_on_a_too_big_inbox_exits_2(tmp_path: Path, user_config_dir: Path):
    inbox = tmp_path / ".fusion" / "memdesk" / "inbox.json"
    inbox.parent.mkdir(parents=True)
    with open(inbox, "wb") as f:
        f.truncate(33 * 1024 * 1024)  # sparse: over the inbox's 32 MiB limit
    refused(memdesk(user_config_dir, "inbox", "list", "--project", str(tmp_path)), "inbox.json", "at most")
    assert inbox.stat().st_size == 33 * 1024 * 1024


def test_inbox_unknown_item_exits_2(tmp_path: Path, user_config_dir: Path):
    refused(memdesk(user_config_dir, "inbox", "reject", "nosuchitem", "--project", str(tmp_path)), "nosuchitem")


@pytest.mark.parametrize("kind", ["fifo", "hardlink", "symlink"])
def test_tokens_create_through_bad_state_exits_2(tmp_path: Path, user_config_dir: Path, kind: str):
    user_config_dir.mkdir(parents=True, exist_ok=True)
    tokens = user_config_dir / "tokens.json"
    outside = tmp_path / "outside.json"
    outside.write_text('{"tokens": []}\n')
    if kind == "fifo":
        os.mkfifo(tokens)
    elif kind == "hardlink":
        os.link(outside, tokens)
    else:
        tokens.symlink_to(outside)
    line = refused(memdesk(user_config_dir, "tokens", "create", "bot"), "tokens.json")
    assert {"fifo": "named pipe", "hardlink": "hard link", "symlink": "link"}[kind] in line
    assert outside.read_text() == '{"tokens": []}\n'
    assert not any(p.name.startswith("tokens.json.") for p in user_config_dir.iterdir())  # no temp file left


def test_a_lock_held_too_long_is_a_failure_not_a_refusal():
    """The mapping itself: the door's refusal caused by the OS (a lock timeout) stays exit 1."""
    from core.cli.common import fail_from
    from core.storage.statefiles import StateRefused

    assert fail_from(StateRefused("cannot write the HTTP tokens (x): it is a named pipe", "WRITE_FAILED")).exit_code == 2
    held = StateRefused("cannot write the HTTP tokens (x): held by another writer; try again", "WRITE_FAILED",
                        cause=TimeoutError("held"))
    assert fail_from(held).exit_code == 1
    full = StateRefused("cannot write the HTTP tokens (x): no space", "WRITE_FAILED", cause=OSError(28, "No space"))
    assert fail_from(full).exit_code == 1
