"""``memdesk history``: who changed what, one-line refusals of bad ids, planted rows and damaged databases."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.cli import main
from core.storage import saving
from core.storage.history import versions as history

MEMORY = ".fusion/memory.md"
REPO = Path(__file__).resolve().parents[3]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_shows_label_and_author(capsys, sample_project: Path):
    before = (sample_project / MEMORY).read_text(encoding="utf-8")
    saving.replace_text(sample_project, MEMORY, before + "\n- one\n", source="http", author="agent-7")
    saving.replace_text(sample_project, MEMORY, before + "\n- two\n", source="prune")
    code, out, _err = run(capsys, "history", "list", "-p", str(sample_project))
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2
    assert "before prune" in lines[0] and " - " in lines[0]
    assert "before an HTTP write" in lines[1] and "agent-7" in lines[1] and lines[1].endswith(MEMORY)
    doc = json.loads(run(capsys, "history", "list", "--json", "-p", str(sample_project))[1])
    assert [(v["author"], v["label"]) for v in doc] == [(None, "before prune"), ("agent-7", "before an HTTP write")]


def test_list_hides_files_that_are_not_memory_documents(capsys, sample_project: Path):
    history.record_version(sample_project, ".fusion/memdesk/proposals/p1.json", "{}", "proposal")
    history.record_version(sample_project, MEMORY, "old\n", "editor")
    out = run(capsys, "history", "list", "-p", str(sample_project))[1]
    assert "proposals" not in out and MEMORY in out
    assert "proposals/p1.json" in run(capsys, "history", "list", "--all", "-p", str(sample_project))[1]


def test_appends_are_listed_with_their_author(capsys, sample_project: Path):
    history.record_append(sample_project, MEMORY, "\n\n<!-- 2026-03-01 -->\nuse the lease clock", author="agent-3")
    code, out, _ = run(capsys, "history", "list", "--appends", "-p", str(sample_project))
    assert code == 0 and "agent append" in out and "agent-3" in out and "use the lease clock" in out


@pytest.mark.parametrize("bad", [str(2**63), str(2**70), "-1", "0", "x"])
@pytest.mark.parametrize("action", ["show", "restore"])
def test_bad_ids_are_one_line(capsys, sample_project: Path, action: str, bad: str):
    history.record_version(sample_project, MEMORY, "old\n", "editor")
    before = (sample_project / MEMORY).read_bytes()
    code, out, err = run(capsys, "history", action, "--", bad, "-p", str(sample_project)) if bad.startswith("-") \
        else run(capsys, "history", action, bad, "-p", str(sample_project))
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert (sample_project / MEMORY).read_bytes() == before


@pytest.mark.parametrize("planted", [".git/hooks/pre-commit", "../x", "/tmp/memdesk-planted-cli", "notes.md"])
def test_restore_refuses_planted_rows(capsys, sample_project: Path, planted: str):
    history.record_version(sample_project, planted, "#!/bin/sh\necho owned\n", "editor")
    vid = history.list_versions(sample_project, planted)[0].id
    code, out, err = run(capsys, "history", "restore", str(vid), "-p", str(sample_project))
    assert code == 2 and out == "" and err.count("\n") == 1 and "not a memory document" in err
    assert not (sample_project / ".git").exists() and not (sample_project.parent / "x").exists()
    assert not Path("/tmp/memdesk-planted-cli").exists() and not (sample_project / "notes.md").exists()


def test_restore_goes_through_the_project(capsys, sample_project: Path):
    original = (sample_project / MEMORY).read_text(encoding="utf-8")
    saving.replace_text(sample_project, MEMORY, original + "\n- edited\n")
    vid = history.list_versions(sample_project, MEMORY)[0].id
    code, out, _ = run(capsys, "history", "restore", str(vid), "-p", str(sample_project))
    assert code == 0 and out.startswith(f"Restored version {vid}")
    assert (sample_project / MEMORY).read_text(encoding="utf-8") == original
    assert history.list_versions(sample_project, MEMORY)[0].label == "before restore"


@pytest.mark.parametrize("damage", ["garbage", "folder"])
def test_a_damaged_database_is_one_line_naming_the_file(capsys, sample_project: Path, damage: str):
    db = sample_project / history.HISTORY_DB
    db.parent.mkdir(parents=True, exist_ok=True)
    if damage == "garbage":
        db.write_bytes(os.urandom(4096))
    else:
        db.mkdir()
    for args in (("history", "list"), ("history", "show", "1"), ("history", "restore", "1")):
        code, out, err = run(capsys, *args, "-p", str(sample_project))
        assert code == 1 and out == "" and err.count("\n") == 1, (args, err)
        assert str(db) in err and "move it aside" in err
    history.forget_connections(sample_project)


def test_in_a_real_process(sample_project: Path):
    history.record_version(sample_project, MEMORY, "old\n", "editor", author="agent-9")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "core.cli", "history", "list", "-p", str(sample_project)],
                          capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 0 and "agent-9" in proc.stdout
