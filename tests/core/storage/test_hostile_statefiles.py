"""memdesk's own state files through their door (issue 19 item 1), attacked through real ``memdesk`` processes.

A cloned project whose ``.fusion/memdesk`` (or one state file, or the proposals folder) is a link out of
the project, or a user folder whose ``tokens.json`` is a link elsewhere: every state write is refused in
one line naming the file, and nothing outside changes (bytes, mtime, no new file).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.core.hostile import REPO, one_line, snapshot

SAMPLE = REPO / "resources" / "sample"


def memdesk(*args: str, config: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO), MEMDESK_CONFIG_DIR=str(config))
    return subprocess.run([sys.executable, "-m", "core.cli", *args], capture_output=True, text=True, timeout=120,
                          env=env)


def stamps(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.lstat().st_mtime_ns, p.lstat().st_size) for p in folder.rglob("*")}


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    """A sample project, a user config folder, and an 'elsewhere' folder holding a victim file."""
    root = tmp_path / "project"
    shutil.copytree(SAMPLE, root)
    (root / ".fusion" / "memdesk").mkdir(parents=True, exist_ok=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "victim.json").write_text('{"keep": "me"}\n', encoding="utf-8")
    config = tmp_path / "config"
    config.mkdir()
    return {"root": root, "outside": outside, "config": config, "victim": outside / "victim.json"}


def link_out(world: dict[str, Path], rel: str, *, folder: bool) -> None:
    """Make ``rel`` of the project a link to the outside folder (or to the victim file)."""
    path = world["root"] / rel
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(world["outside"] if folder else world["victim"])


CASES = [
    # (what is a link out, is it a folder, the command, what the one line must name)
    (".fusion/memdesk", True, ("settings", "set", "historyRetentionDays", "30"), ".fusion/memdesk"),
    (".fusion/memdesk", True, ("policy", "set", "cli", "secret", "hold"), ".fusion/memdesk"),
    (".fusion/memdesk", True, ("consolidation-policy", "--unattended", "on"), ".fusion/memdesk"),
    (".fusion/memdesk", True, ("extract", "--provider", "offline"), ".fusion/memdesk"),
    (".fusion/memdesk/settings.json", False, ("settings", "set", "historyRetentionDays", "30"),
     ".fusion/memdesk/settings.json"),
    (".fusion/memdesk/firewall-policy.json", False, ("policy", "set", "cli", "secret", "hold"),
     "firewall-policy.json"),
    (".fusion/memdesk/consolidation.json", False, ("consolidation-policy", "--unattended", "on"),
     "consolidation.json"),
    (".fusion/memdesk/proposals", True, ("extract", "--provider", "offline"), ".fusion/memdesk/proposals"),
    (".fusion/config.json", False, ("settings", "set", "memoryEnabled", "false"), ".fusion/config.json"),
]


@pytest.mark.parametrize(("rel", "folder", "command", "named"), CASES,
                         ids=[f"{c[0]}:{c[2][0]}" for c in CASES])
def test_a_state_write_through_a_link_out_is_refused_and_nothing_outside_changes(world, rel, folder, command, named):
    link_out(world, rel, folder=folder)
    before, times = snapshot(world["outside"]), stamps(world["outside"])
    done = memdesk(*command, "--project", str(world["root"]), config=world["config"])
    assert done.returncode != 0, done.stdout + done.stderr
    line = one_line(done.stderr)
    assert named in line and ("link" in line or "leaves the project" in line), line
    assert snapshot(world["outside"]) == before and stamps(world["outside"]) == times


def test_the_same_commands_write_inside_the_project_and_are_logged(world):
    """The control: without the links each command writes its state file, and the state log names it."""
    root, config = world["root"], world["config"]
    for command in (("settings", "set", "historyRetentionDays", "30"), ("policy", "set", "cli", "secret", "hold"),
                    ("consolidation-policy", "--unattended", "on"), ("extract", "--provider", "offline")):
        done = memdesk(*command, "--project", str(root), config=config)
        assert done.returncode == 0, done.stderr
    state = root / ".fusion" / "memdesk"
    assert json.loads((state / "settings.json").read_text())["historyRetentionDays"] == 30
    assert json.loads((state / "firewall-policy.json").read_text())
    assert json.loads((state / "consolidation.json").read_text())["unattended"] is True
    assert len(list((state / "proposals").glob("*.json"))) == 1
    logged = [json.loads(line) for line in (state / "state-log.jsonl").read_text().splitlines()]
    files = [e["file"] for e in logged]
    assert {"settings", "firewall-policy", "consolidation-policy", "proposal"} <= set(files), files
    assert all(e["source"] and e["writer"] for e in logged)


def test_a_tokens_file_linked_out_of_the_user_folder_is_refused(world):
    config = world["config"]
    (config / "tokens.json").symlink_to(world["victim"])
    before, times = snapshot(world["outside"]), stamps(world["outside"])
    done = memdesk("tokens", "create", "bot", config=config)
    assert done.returncode == 2  # a refusal of bad state: exit 2, as every other
    line = one_line(done.stderr)
    assert "tokens.json" in line, line
    assert snapshot(world["outside"]) == before and stamps(world["outside"]) == times


def test_a_user_folder_whose_locks_lead_out_is_refused(world):
    """The user-scope lock folder is state too: a link out there is refused before anything is created."""
    config = world["config"]
    (config / "locks").symlink_to(world["outside"])
    before = snapshot(world["outside"])
    done = memdesk("tokens", "create", "bot", config=config)
    assert done.returncode == 2
    assert "locks" in one_line(done.stderr)
    assert snapshot(world["outside"]) == before
    assert not (config / "tokens.json").exists()


def test_tokens_written_through_the_door_are_logged_in_the_user_folder(world):
    config = world["config"]
    done = memdesk("tokens", "create", "bot", config=config)
    assert done.returncode == 0, done.stderr
    rows = json.loads((config / "tokens.json").read_text())["tokens"]
    assert [r["name"] for r in rows] == ["bot"]
    assert oct((config / "tokens.json").stat().st_mode & 0o777) == "0o600"
    logged = [json.loads(line) for line in (config / "state-log.jsonl").read_text().splitlines()]
    assert [(e["file"], e["source"]) for e in logged] == [("tokens", "tokens")]
    assert "dp_" not in (config / "state-log.jsonl").read_text()  # the log never holds a token


FIFOS = [
    # (where the FIFO is: project-relative, or user:NAME in the user's folder; the command; what the line names)
    (".fusion/memdesk/settings.json", ("show",), ".fusion/memdesk/settings.json"),
    (".fusion/config.json", ("show",), ".fusion/config.json"),
    ("user:firewall.key", ("inbox", "list"), "firewall.key"),
    ("user:reads.db", ("activity",), "reads.db"),
]


@pytest.mark.parametrize(("where", "command", "named"), FIFOS, ids=[f[0] for f in FIFOS])
def test_state_that_is_a_fifo_is_one_line_never_a_hang(world, where, command, named):
    """Stored state is untrusted (issue 19 item 3): a named pipe where a state file belongs never blocks a
    command (each of these waited for ever before), it is refused in one line naming the file."""
    if where.startswith("user:"):
        os.mkfifo(world["config"] / where.removeprefix("user:"))
    else:
        target = world["root"] / where
        target.parent.mkdir(parents=True, exist_ok=True)
        target.unlink(missing_ok=True)
        os.mkfifo(target)
    done = memdesk(*command, "--project", str(world["root"]), config=world["config"])  # times out on a hang
    assert done.returncode == 2, done.stdout + done.stderr  # bad state is refused with exit 2 on every command
    line = one_line(done.stderr)
    assert named in line and "named pipe" in line, line


@pytest.mark.parametrize("command", [("audit",), ("search", "memory"), ("history", "list"), ("append", "hello")],
                         ids=lambda c: c[0])
def test_a_config_json_fifo_never_hangs_a_command(world, command):
    """``open_project``'s settings stamp and history's retention read ``config.json`` too (both waited for ever)."""
    target = world["root"] / ".fusion" / "config.json"
    target.unlink()
    os.mkfifo(target)
    done = memdesk(*command, "--project", str(world["root"]), config=world["config"])  # times out on a hang
    assert "Traceback" not in done.stderr
    if done.returncode:
        assert "config.json" in one_line(done.stderr)


SHAPES = [
    # (project-relative or user:NAME, wrong but valid JSON, the command that reads it, what the one line names)
    (".fusion/memdesk/settings.json", "[1, 2]", ("settings", "get"), "settings.json"),
    (".fusion/memdesk/settings.json", '{"memoryBackend": 5}', ("settings", "get"), "memoryBackend"),
    (".fusion/memdesk/firewall-policy.json", '{"rules": "all"}', ("policy", "show"), "firewall-policy.json"),
    (".fusion/memdesk/inbox.json", '{"version": 1, "items": "x", "mac": "y"}', ("inbox", "list"), "inbox.json"),
    (".fusion/memdesk/consolidation.json", '{"unattended": "yes"}', ("consolidation-policy",), "consolidation.json"),
    (".fusion/memdesk/automations.json", '{"a": 1}', ("run-scheduled",), "automations.json"),
    ("user:tokens.json", '{"tokens": [{"name": 1}]}', ("tokens", "list"), "tokens.json"),
    ("user:config.json", '{"providers": 5}', ("providers", "list"), "config.json"),
    ("user:connections.json", '{"connections": []}', ("connections", "list"), "connections.json"),
    ("user:firewall.key", "not a key", ("inbox", "list"), "firewall.key"),
]


@pytest.mark.parametrize(("where", "text", "command", "named"), SHAPES, ids=[f"{s[0]}:{s[2][0]}" for s in SHAPES])
def test_state_of_the_wrong_shape_is_one_line_naming_it(world, where, text, command, named):
    """Stored state is untrusted (issue 19 item 3): valid JSON of the wrong shape is one line naming the file or
    the field, never a traceback, and the file is left as it was."""
    path = world["config"] / where.removeprefix("user:") if where.startswith("user:") else world["root"] / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    args = (*command, "--project", str(world["root"])) if command[0] not in ("tokens", "connections") else command
    done = memdesk(*args, config=world["config"])
    assert done.returncode == 2, done.stdout + done.stderr
    assert named in one_line(done.stderr)
    assert path.read_text(encoding="utf-8") == text


def test_damaged_schedule_state_is_ignored_and_the_app_keeps_working(world):
    """Run bookkeeping of the wrong shape means 'never ran' (a notice), and the next run rewrites it whole."""
    for rel, text in ((".fusion/memdesk/schedule-state.json", '{"lastRunAt": 5, "x": []}'),
                      (".fusion/memdesk/consolidation-state.json", '["not", "an", "object"]')):
        (world["root"] / rel).write_text(text, encoding="utf-8")
    for command in (("run-scheduled",), ("settings", "get"), ("show",)):
        done = memdesk(*command, "--project", str(world["root"]), config=world["config"])
        assert "Traceback" not in done.stderr, done.stderr
        assert done.returncode == 0, done.stderr


def test_memdesk_activity_state_lists_state_changes_with_their_writer(world):
    root, config = world["root"], world["config"]
    assert memdesk("policy", "set", "cli", "secret", "hold", "--project", str(root), config=config).returncode == 0
    done = memdesk("activity", "--state", "--json", "--project", str(root), config=config)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [(r["kind"], r["path"], r["source"]) for r in rows] == [
        ("state", ".fusion/memdesk/firewall-policy.json", "firewall-policy")]
    assert rows[0]["client"].startswith("cli")  # the CLI's writer, not "memdesk"


def test_a_backend_database_hard_linked_to_another_file_is_never_written(world):
    """The sqlite backend's database is memdesk's state in the project: a planted hard link to another database
    (another project's, or any SQLite file) is refused before SQLite opens it, and that file keeps its bytes."""
    import sqlite3

    root, config = world["root"], world["config"]
    assert memdesk("settings", "set", "memoryBackend", "sqlite", "--project", str(root), config=config).returncode == 0
    victim = world["outside"] / "other.db"
    conn = sqlite3.connect(victim)
    conn.execute("CREATE TABLE kept(x)")
    conn.commit()
    conn.close()
    db = root / ".fusion" / "memdesk" / "memory.db"
    for old in db.parent.glob("memory.db*"):
        old.unlink()
    os.link(victim, db)
    before, times = snapshot(world["outside"]), stamps(world["outside"])
    done = memdesk("append", "a new entry", "--project", str(root), config=config)
    assert "Traceback" not in done.stderr
    assert "memory.db has 1 other hard link" in done.stderr
    assert snapshot(world["outside"]) == before and stamps(world["outside"]) == times
