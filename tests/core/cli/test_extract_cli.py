"""``memdesk extract|proposals|run-scheduled|providers``: exit codes, one-line errors, and the review flow."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from core.cli import main
from tests.core.chat_server import (
    API_KEY,
    API_KEY_ENV,
    MALFORMED,
    REPO,
    UNAUTHORIZED,
    snapshot,
)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def pending_id(capsys, root) -> str:
    code, out, _ = run(capsys, "proposals", "--project", str(root), "--json")
    assert code == 0
    return json.loads(out)[-1]["id"]


def test_extract_offline_then_review_everything(tidepool, capsys):
    p = str(tidepool)
    code, out, err = run(capsys, "extract", "--project", p, "--provider", "offline")
    assert code == 0, err
    assert "waits for review" in out and "memdesk proposals show" in out
    pid = pending_id(capsys, tidepool)

    code, out, _ = run(capsys, "proposals", "--project", p)
    assert code == 0 and pid in out and "prune: pending" in out
    code, out, _ = run(capsys, "proposals", "show", pid[:10], "--project", p)
    assert code == 0 and "#1 [pending]" in out and "rule-based" in out
    code, out, _ = run(capsys, "proposals", "accept", pid, "--insight", "1", "--insight", "2", "-p", p)
    assert code == 0 and "Merged 2 insights" in out
    code, out, _ = run(capsys, "proposals", "reject", pid, "--all", "-p", p)
    assert code == 0 and "Rejected" in out
    memory_before = (tidepool / ".fusion" / "memory.md").read_text()
    code, out, _ = run(capsys, "proposals", "apply-prune", pid, "-p", p)
    assert code == 0 and out.startswith("Pruned: ")
    assert len((tidepool / ".fusion" / "memory.md").read_text()) < len(memory_before)
    code, out, _ = run(capsys, "proposals", "-p", p)
    assert code == 0 and "Nothing waits for review." in out
    code, out, _ = run(capsys, "proposals", "list", "--all", "-p", p, "--json")
    assert code == 0 and json.loads(out)[0]["pruneStatus"] == "applied"


def test_review_errors_are_one_line_with_exit_codes(tidepool, capsys):
    p = str(tidepool)
    assert run(capsys, "extract", "-p", p, "--provider", "offline")[0] == 0
    pid = pending_id(capsys, tidepool)
    code, _, err = run(capsys, "proposals", "accept", pid, "-p", p)
    assert code == 2 and err.strip() == "memdesk: say which insights: --insight N (repeatable) or --all"
    code, _, err = run(capsys, "proposals", "show", "nope", "-p", p)
    assert code == 2 and "no proposal 'nope'" in err and err.count("\n") == 1
    (tidepool / ".fusion" / "memory.md").write_text("## Architecture\n- changed\n## Conventions\n- c\n")
    code, _, err = run(capsys, "proposals", "apply-prune", pid, "-p", p)
    assert code == 1 and "changed after this extraction started" in err
    code, out, _ = run(capsys, "proposals", "show", pid, "-p", p)
    assert "Prune: stale" in out


def test_extract_with_an_endpoint_from_the_user_config(tidepool, chat_server, capsys, monkeypatch):
    monkeypatch.setenv(API_KEY_ENV, API_KEY)
    code, out, err = run(capsys, "providers", "set", "local", "--kind", "openai", "--base-url", chat_server.base_url,
                         "--model", "test-model", "--api-key-env", API_KEY_ENV, "--timeout", "5")
    assert code == 0, err
    assert run(capsys, "providers", "default", "local")[0] == 0
    code, out, err = run(capsys, "extract", "-p", str(tidepool))
    assert code == 0, err
    assert "5 new insights (1 already known)" in out
    assert chat_server.requests[0].headers["Authorization"] == f"Bearer {API_KEY}"

    for scripted, words in ((UNAUTHORIZED, "HTTP 401"), (MALFORMED, "is not the extraction JSON")):
        before = snapshot(tidepool)
        chat_server.script(scripted)
        code, out, err = run(capsys, "extract", "-p", str(tidepool), "--json")
        assert code == 1
        assert err.startswith("memdesk: extraction failed: ") and words in err and err.count("\n") == 1
        assert json.loads(out)["status"] == "failed"
        assert snapshot(tidepool) == before


def test_unknown_provider_is_bad_input(tidepool, capsys):
    code, _, err = run(capsys, "extract", "-p", str(tidepool), "--provider", "gpt")
    assert code == 2 and "no provider named 'gpt'" in err


def test_providers_commands(user_config_dir, capsys):
    code, out, _ = run(capsys, "providers")
    assert code == 0 and "* offline" in out and "autoApplyPrune: off" in out
    code, _, err = run(capsys, "providers", "set", "x", "--kind", "openai", "--model", "m")
    assert code == 2 and "needs baseUrl and model" in err
    code, _, _ = run(capsys, "providers", "set", "script", "--kind", "command", "--command", "my-llm --fast 'a b'")
    assert code == 0
    assert json.loads((user_config_dir / "config.json").read_text())["providers"]["script"]["command"] == [
        "my-llm", "--fast", "a b"]
    code, _, err = run(capsys, "providers", "default", "nope")
    assert code == 2 and "no provider named 'nope'" in err
    assert run(capsys, "providers", "auto-apply-prune", "on")[0] == 0
    code, out, _ = run(capsys, "providers", "list", "--json")
    data = json.loads(out)
    assert data["autoApplyPrune"] is True and "script" in data["providers"]
    assert run(capsys, "providers", "remove", "script")[0] == 0
    code, _, err = run(capsys, "providers", "remove", "offline")
    assert code == 2 and "built in" in err


def test_run_scheduled_command(tidepool, capsys):
    code, out, _ = run(capsys, "run-scheduled", "-p", str(tidepool))
    assert code == 0 and out.startswith("extraction ran:")
    code, out, _ = run(capsys, "run-scheduled", "-p", str(tidepool), "--json")
    assert code == 0 and json.loads(out)["status"] == "not_due"


def test_missing_project_folder_is_bad_input(tmp_path, capsys, user_config_dir):
    code, _, err = run(capsys, "extract", "-p", str(tmp_path / "nowhere"))
    assert code == 2 and "does not exist" in err


def test_real_process_never_runs_what_the_project_names(tidepool, tmp_path, user_config_dir):
    marker = tmp_path / "pwned"
    config = json.loads((tidepool / ".fusion" / "config.json").read_text())
    config["settings"].update({"extractionCommand": f"touch {marker}", "command": ["touch", str(marker)],
                               "providers": {"offline": {"kind": "command", "command": ["touch", str(marker)]}},
                               "defaultProvider": "offline", "autoApplyPrune": True})
    (tidepool / ".fusion" / "config.json").write_text(json.dumps(config))
    env = {**os.environ, "MEMDESK_CONFIG_DIR": str(user_config_dir)}
    before = snapshot(tidepool)
    for argv in (["extract"], ["run-scheduled"], ["proposals"]):
        out = subprocess.run([sys.executable, "-m", "core.cli", *argv, "-p", str(tidepool)], cwd=REPO, env=env,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
    assert not marker.exists()
    assert snapshot(tidepool) == before


@pytest.mark.parametrize("argv", [["proposals", "apply-prune"], ["proposals", "show"]])
def test_id_is_required(argv, capsys, user_config_dir):
    code, _, err = run(capsys, *argv)
    assert code == 2 and "required" in err
