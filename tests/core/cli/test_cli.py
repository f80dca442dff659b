"""The headless commands: output, exit codes (0 ok, 1 failure, 2 bad input) and one-line errors."""

from __future__ import annotations

import io
import json
import sys

import pytest

from core.cli import main
from core.insights import read_memory_audit_state
from core.storage.history import versions as history

MEM = ".fusion/memory.md"


def run(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_show_prints_the_memory_and_json_carries_the_hash(sample_project, capsys):
    code, out, _ = run(capsys, "show", "--project", str(sample_project))
    assert code == 0 and out == (sample_project / MEM).read_text()
    code, out, _ = run(capsys, "show", "--project", str(sample_project), "--json")
    data = json.loads(out)
    assert data["backend"] == "file" and data["size"] == (sample_project / MEM).stat().st_size


def test_write_replaces_from_stdin_and_keeps_history(sample_project, capsys, monkeypatch):
    before = (sample_project / MEM).read_text()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"# Project Memory\n")))
    code, out, _ = run(capsys, "write", "--project", str(sample_project))
    assert code == 0 and "Memory written (17 bytes)" in out
    assert (sample_project / MEM).read_text() == "# Project Memory\n"
    version = history.list_versions(sample_project, MEM)[0]
    assert version.source == "cli-write" and history.get_version(sample_project, version.id)[1] == before


def test_write_with_stale_hash_is_refused(sample_project, capsys, monkeypatch):
    before = (sample_project / MEM).read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"mine\n")))
    code, _, err = run(capsys, "write", "--project", str(sample_project), "--expect-hash", "0" * 64)
    assert code == 1 and "CONFLICT" in err and err.count("\n") == 1
    assert (sample_project / MEM).read_bytes() == before


def test_settings_get_set_unset(project, capsys):
    assert run(capsys, "settings", "set", "memoryEnabled", "false", "--project", str(project))[0] == 0
    code, out, _ = run(capsys, "settings", "get", "memoryEnabled", "--project", str(project))
    assert (code, out.strip()) == (0, "false")
    code, _, err = run(capsys, "settings", "set", "insightExtractionMinIntervalMs", "-1", "--project", str(project))
    assert code == 2 and "insightExtractionMinIntervalMs" in err
    assert run(capsys, "settings", "unset", "memoryEnabled", "--project", str(project))[0] == 0
    assert json.loads((project / ".fusion/config.json").read_text()) == {}


def test_backends_lists_the_active_one(sample_project, capsys):
    code, out, _ = run(capsys, "backends", "--project", str(sample_project), "--json")
    rows = {row["id"]: row for row in json.loads(out)}
    assert code == 0 and rows["file"]["active"] and rows["readonly"]["capabilities"] == ["read"]


def test_missing_project_is_bad_input(tmp_path, capsys):
    code, _, err = run(capsys, "show", "--project", str(tmp_path / "nope"))
    assert code == 2 and "does not exist" in err


def test_prune_validate_and_apply_record_the_outcome_in_the_audit(sample_project, capsys):
    reply = sample_project / ".fusion/extraction-reply.json"
    code, out, _ = run(capsys, "prune", "validate", str(reply), "--project", str(sample_project))
    assert code == 0 and out.startswith("valid: Keeps Architecture, Conventions, Pitfalls")
    code, out, _ = run(capsys, "prune", "apply", str(reply), "--project", str(sample_project))
    assert code == 0 and out.startswith("Pruned:")
    assert (sample_project / MEM).read_text().endswith("\n") and not (sample_project / MEM).read_text().endswith("\n\n")
    state = read_memory_audit_state(sample_project)
    assert state["pruning"]["applied"] is True
    assert "## Memory Pruning\n- **Applied:** ✓ Yes" in (sample_project / ".fusion/memory-audit.md").read_text()


def test_invalid_prune_is_refused_and_changes_nothing(sample_project, tmp_path, capsys):
    candidate = tmp_path / "bad.md"
    candidate.write_text("# Project Memory\n\n## Context\n\n- only context\n")
    before = (sample_project / MEM).read_bytes()
    code, out, _ = run(capsys, "prune", "apply", str(candidate), "--project", str(sample_project))
    assert code == 1 and "Missing required sections" in out
    assert (sample_project / MEM).read_bytes() == before


@pytest.mark.parametrize("text", ["{not json", "```json\n{]\n```"])
def test_unreadable_ai_reply_is_bad_input(sample_project, tmp_path, capsys, text):
    reply = tmp_path / "reply.json"
    reply.write_text(text)
    code, _, err = run(capsys, "prune", "validate", str(reply), "--project", str(sample_project))
    assert code == 2 and "Failed to parse insight extraction response as JSON" in err


def test_audit_prints_the_report(sample_project, capsys):
    code, out, _ = run(capsys, "audit", "--project", str(sample_project))
    assert code == 0 and out.startswith("# Memory Audit Report\n")
    code, out, _ = run(capsys, "audit", "--project", str(sample_project), "--json")
    assert json.loads(out)["workingMemory"]["exists"] is True


def test_real_fixture_shows_byte_for_byte(real_project, capsys):
    code, out, _ = run(capsys, "show", "--project", str(real_project))
    assert code == 0 and out.encode("utf-8") == (real_project / MEM).read_bytes()
