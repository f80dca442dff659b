"""``memdesk dream``, ``memdesk compact`` and ``memdesk proposals show|apply`` on real Fusion-format files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def layered(layered_project: Path, user_config_dir: Path) -> Path:
    for path in layered_project.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return layered_project


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / ".fusion").rglob("*.md"))}


def test_dream_all_agents_then_show_and_apply(layered, capsys):
    before = snapshot(layered)
    code, out, _err = run(capsys, "dream", "--all-agents", "--provider", "offline", "-p", str(layered))
    assert code == 0 and out.count("Staged dream proposal") == 3
    assert snapshot(layered) == before
    ids = [line.split()[-1] for line in out.splitlines() if line.startswith("Review it:")]
    code, out, _ = run(capsys, "proposals", "show", ids[0], "--json", "-p", str(layered))
    data = json.loads(out)
    assert code == 0 and data["lostFacts"] == [] and data["changes"] and data["ledger"]
    assert {"number", "path", "removed", "added"} <= set(data["changes"][0])
    code, out, _ = run(capsys, "proposals", "show", ids[0], "-p", str(layered))
    assert "Ledger" in out and "Conservation check: all" in out
    code, out, _ = run(capsys, "proposals", "-p", str(layered))
    assert code == 0 and all(i in out for i in ids)
    for pid in ids:
        code, out, err = run(capsys, "proposals", "apply", pid, "-p", str(layered))
        assert code == 0, err
    assert b"Processed into dreams on" in (layered / ".fusion/memory/2026-08-20.md").read_bytes()
    assert b"# Agent Daily Memory 2026-08-20" in (layered / ".fusion/agent-memory/reviewer/2026-08-20.md").read_bytes()
    code, _out, err = run(capsys, "proposals", "apply", ids[0], "-p", str(layered))
    assert code == 1 and "is applied" in err and err.count("\n") == 1


def test_compact_and_bad_input(layered, capsys):
    path = layered / ".fusion/memory/MEMORY.md"
    path.write_text(path.read_text() + "\n- Use `bun` for scripts in `tools/`.\n\n- Use `bun` for scripts in `tools/`.\n")
    code, out, err = run(capsys, "compact", "--file", "MEMORY.md", "--provider", "offline", "-p", str(layered))
    assert code == 0, err
    pid = out.split("proposal ")[1].split(":")[0]
    code, out, _ = run(capsys, "proposals", "show", pid, "-p", str(layered))
    assert "exact duplicate" in out
    before = snapshot(layered)
    for argv, fragment in ((["compact", "--file", "../outside.md"], "contains '..'"),
                           (["compact", "--file", "MEMORY.md", "--provider", "nope"], "no provider named"),
                           (["dream", "--agent", "ghost", "--provider", "offline"], "no agent 'ghost'"),
                           (["proposals", "apply", pid, "--change", "99"], "has no change 99")):
        code, _out, err = run(capsys, *argv, "-p", str(layered))
        assert code == 2 and fragment in err and err.count("\n") == 1, (argv, err)
    assert snapshot(layered) == before
    code, out, err = run(capsys, "proposals", "apply", pid, "-p", str(layered))
    assert code == 0 and path.read_text().count("- Use `bun` for scripts in `tools/`.") == 1


def test_dream_in_seed_layout_is_refused(real_project, user_config_dir, capsys):
    code, _out, err = run(capsys, "dream", "--provider", "offline", "-p", str(real_project))
    assert code == 2 and "layered layout" in err


def test_rewrites_and_backups_from_the_cli(layered, capsys):
    from tests.core.consolidation.test_consolidation_programs import fusion_dream_by_hand

    before = fusion_dream_by_hand(layered)
    code, out, _ = run(capsys, "rewrites", "-p", str(layered))
    assert code == 0 and "2 documents rewritten at" in out and "facts lost" in out
    run_id = out.split()[0]
    code, out, err = run(capsys, "rewrites", "undo", run_id, "-p", str(layered))
    assert code == 0, err
    pid = out.split("proposal ")[1].split(":")[0]
    code, _out, err = run(capsys, "proposals", "apply", pid, "--allow-loss", "-p", str(layered))
    assert code == 0, err
    assert (layered / ".fusion/memory/2026-08-19.md").read_bytes() == before["2026-08-19.md"]
    code, out, _ = run(capsys, "backups", "-p", str(layered))
    assert code == 0 and "No Fusion memory backup" in out
    code, _out, err = run(capsys, "backups", "restore", "memory-nope", "-p", str(layered))
    assert code == 2 and "no memory backup 'memory-nope'" in err


def test_policy_from_the_cli(layered, capsys):
    code, out, _ = run(capsys, "consolidation-policy", "-p", str(layered))
    assert code == 0 and out.startswith("unattended: off; max change: 65,536 bytes")
    code, out, _ = run(capsys, "consolidation-policy", "--unattended", "on", "--max-change-bytes", "1000",
                       "-p", str(layered))
    assert code == 0 and "unattended: on; max change: 1,000 bytes" in out
    assert json.loads((layered / ".fusion/memdesk/consolidation.json").read_text()) == \
        {"unattended": True, "maxChangeBytes": 1000}
    code, _out, err = run(capsys, "consolidation-policy", "--max-change-bytes", "-5", "-p", str(layered))
    assert code == 2 and "maxChangeBytes" in err
    assert json.loads((layered / ".fusion/memdesk/consolidation.json").read_text())["maxChangeBytes"] == 1000
