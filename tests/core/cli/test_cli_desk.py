"""The CLI items of issue 22 ("The CLI, same drive"), each as the operator sees it: output and exit code."""

from __future__ import annotations

import builtins
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.cli import main
from core.settings.user_config import load_user_config

DAILY = ".fusion/memory/2026-08-19.md"


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_history_list_resolves_a_bare_name_like_show(layered_project, capsys, user_config_dir):
    root = str(layered_project)
    assert run(capsys, "append", "--project", root, "--file", "2026-08-19.md", "Leases use the DB clock")[0] == 0
    code, full, _ = run(capsys, "history", "list", "--project", root, "--file", DAILY, "--appends")
    assert code == 0 and "Leases use the DB clock" in full
    code, bare, err = run(capsys, "history", "list", "--project", root, "--file", "2026-08-19.md", "--appends")
    assert code == 0 and bare == full and err == ""
    code, out, _ = run(capsys, "history", "list", "--project", root, "--file", "2026-08-19.md")
    code_full, out_full, _ = run(capsys, "history", "list", "--project", root, "--file", DAILY)
    assert (code, out) == (code_full, out_full)
    assert "No versions of 2026-08-19.md stored" not in out


def test_migrate_with_nothing_to_do_exits_0(layered_project, capsys, user_config_dir):
    code, out, err = run(capsys, "migrate", "--project", str(layered_project))
    assert code == 0 and err == ""
    assert out.startswith("Nothing to migrate:")
    code, out, _ = run(capsys, "migrate", "--project", str(layered_project), "--json")
    assert code == 0 and json.loads(out)["nothingToMigrate"] is True


def test_providers_timeout_help_is_true_and_deadline_is_a_flag(capsys, user_config_dir):
    with pytest.raises(SystemExit):
        main(["providers", "set", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "seconds to wait for a reply" not in help_text
    assert "each network step" in help_text and "--deadline SECONDS" in help_text
    code, _, err = run(capsys, "providers", "set", "slow", "--kind", "openai", "--base-url", "http://127.0.0.1:9/v1",
                       "--model", "m", "--timeout", "3", "--deadline", "20")
    assert code == 0, err
    saved = load_user_config().providers["slow"]
    assert saved.timeout_s == 3 and saved.deadline_s == 20
    code, out, _ = run(capsys, "providers", "list")
    assert "timeout=3s deadline=20s" in out


def test_connections_set_without_psycopg_says_what_to_install(capsys, user_config_dir, monkeypatch):
    real_import = builtins.__import__

    def no_psycopg(name, *args, **kwargs):
        if name == "psycopg" or name.startswith("psycopg."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name, *args, **kwargs)

    for module in [m for m in sys.modules if m == "psycopg" or m.startswith("psycopg.")]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setattr(builtins, "__import__", no_psycopg)
    code, out, err = run(capsys, "connections", "set", "team", "--dsn", "postgresql://u:p@localhost:5432/db")
    assert code == 1
    assert "ModuleNotFoundError" not in err and err.count("\n") == 1
    assert "'postgres' extra" in err and "pip install" in err


def test_budget_set_consumers_as_the_docs_write_it(layered_project, capsys, user_config_dir):
    root = str(layered_project)
    code, out, err = run(capsys, "budget", "--project", root, "--set-consumers", "MEMORY.md", "fusion,claude-code")
    assert code == 0, err
    assert "fusion, claude-code" in out
    code, out, err = run(capsys, "budget", "--project", root, "--set-consumers", "MEMORY.md", "default")
    assert code == 0, err


def test_no_broken_pipe_when_the_reader_stops_early(layered_project, tmp_path: Path):
    """`memdesk budget | head -1`, through a real pipe: no "Broken pipe", exit 0."""
    env = {**os.environ, "MEMDESK_CONFIG_DIR": str(tmp_path / "cfg")}
    command = f"{sys.executable} -m core.cli budget --project {layered_project} | head -1"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True, env=env,
                          cwd=Path(__file__).resolve().parents[3], timeout=120)
    assert done.stdout.count("\n") == 1
    assert "Broken pipe" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
    assert done.returncode == 0


def test_a_short_password_is_masked_as_a_token_not_as_every_letter():
    """A password "p" masked every p of the error ("****ort 1 failed … acce****ting")."""
    from core.settings.connections import scrub

    dsn = "postgresql://u:p@127.0.0.1:1/db"
    line = scrub('connection to server at "127.0.0.1", port 1 failed: accepting; user=u password=p', dsn)
    assert "port 1 failed" in line and "accepting" in line
    assert line.endswith("password=****") and "password=p" not in line
