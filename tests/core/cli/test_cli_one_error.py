"""Issue 22, "One error is printed twice": each failure found by driving every command with bad input on the
sample, a layered project and a missing, unwritable or unreadable one prints exactly one line on stderr.

Found (round 5): a scheduled or manual extraction whose proposal could not be stored printed the error
twice, once by ``log.exception`` (with a traceback) and once by the command; a provider reply that is not
JSON was quoted whole, one "error" line per line of the reply; ``settings get`` and ``inbox`` on a missing
project said ``CliError: ...`` with exit 1 instead of the one line with exit 2.

Real processes (``python -m core.cli``): the logging set up by ``main`` is what printed the second copy,
and only a real process shows what a terminal shows.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.core.chat_server import snapshot

REPO = Path(__file__).resolve().parents[3]


def cli(*argv: str, config: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMDESK_CONFIG_DIR": str(config)}
    env.pop("MEMDESK_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "core.cli", *argv], cwd=REPO, env=env, input=stdin,
                          capture_output=True, text=True, timeout=120)


def files_under(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def block_proposals(root: Path) -> None:
    """A file where memdesk keeps its proposals folder: storing a proposal fails (as root too)."""
    (root / ".fusion" / "memdesk").mkdir(parents=True, exist_ok=True)
    (root / ".fusion" / "memdesk" / "proposals").write_text("not a folder\n")


def test_extract_that_cannot_store_its_proposal_prints_one_line(tidepool, user_config_dir):
    block_proposals(tidepool)
    before = snapshot(tidepool)
    out = cli("extract", "-p", str(tidepool), config=user_config_dir)
    assert out.returncode == 1
    assert out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("memdesk: extraction failed: the reply could not be stored for review: cannot "
                               "write ")
    assert ".fusion/memdesk/proposals" in lines[0]  # names the file in the way
    assert "Traceback" not in out.stderr and "[Errno" not in out.stderr
    assert snapshot(tidepool) == before


def test_run_scheduled_that_cannot_store_its_proposal_prints_one_line(tidepool, user_config_dir):
    block_proposals(tidepool)
    before = snapshot(tidepool)
    out = cli("run-scheduled", "-p", str(tidepool), config=user_config_dir)
    assert out.returncode == 1
    assert out.stdout == ""
    assert out.stderr.count("\n") == 1, out.stderr  # was: "storing the proposal failed", a traceback, then this
    assert out.stderr.startswith("memdesk: extraction failed: the reply could not be stored for review: ")
    assert "storing the proposal failed" not in out.stderr and "Traceback" not in out.stderr
    assert snapshot(tidepool) == before


def test_a_reply_of_many_lines_that_is_not_json_is_one_line_of_error(tidepool, user_config_dir):
    reply = "I could not do that.\nHere is why:\n  - line three\n  - line four\n"
    script = f"import sys; sys.stdout.write({reply!r})"
    command = shlex.join([sys.executable, "-c", script])
    assert cli("providers", "set", "chatty", "--kind", "command", "--command", command,
               config=user_config_dir).returncode == 0
    before = snapshot(tidepool)
    out = cli("extract", "-p", str(tidepool), "--provider", "chatty", config=user_config_dir)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr == ("memdesk: extraction failed: chatty's reply is not the extraction JSON: Failed to parse "
                          "insight extraction response as JSON: I could not do that. Here is why: - line three "
                          "- line four\n")
    assert snapshot(tidepool) == before


@pytest.mark.parametrize("argv", [["settings", "get"], ["settings", "get", "memoryEnabled"], ["inbox", "list"],
                                  ["inbox", "accept", "x1"]])
def test_a_missing_project_is_one_line_of_bad_input_on_every_command(tmp_path, user_config_dir, argv):
    missing = tmp_path / "nowhere"
    out = cli(*argv, "-p", str(missing), config=user_config_dir)
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == f"memdesk: project folder {str(missing)!r} does not exist or is not a folder\n"
    assert not missing.exists()


def test_settings_get_on_a_folder_it_cannot_read_is_one_line(layered_project, user_config_dir):
    (layered_project / ".fusion" / "config.json").unlink()
    (layered_project / ".fusion" / "config.json").mkdir()
    before = files_under(layered_project)
    out = cli("settings", "get", "-p", str(layered_project), config=user_config_dir)
    assert out.stderr.count("\n") <= 1 and "CliError" not in out.stderr and "Traceback" not in out.stderr
    assert files_under(layered_project) == before


def test_serve_on_a_busy_port_says_only_why(sample_project, user_config_dir):
    import socket

    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]
    try:
        out = cli("serve", "-p", str(sample_project), "--port", str(port), config=user_config_dir)
    finally:
        busy.close()
    assert (out.returncode, out.stdout) == (1, "")
    # was: "warning: no tokens yet…" first, for a server that never started
    assert out.stderr == f"memdesk: cannot listen on 127.0.0.1:{port}: Address already in use\n"


def test_serve_on_a_port_that_is_not_one_says_only_why(sample_project, user_config_dir):
    out = cli("serve", "-p", str(sample_project), "--port", "99999", "--host", "0.0.0.0", config=user_config_dir)
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == "memdesk: --port 99999 is not a port number (0-65535)\n"
