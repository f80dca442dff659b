"""``memdesk budget``, the per-project choice of consumers, and the warning an append earns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from core.budget import append_warnings, chosen_consumer_ids, prune_budget, set_document_consumers
from core.cli import main
from core.entries import append_memory_entry
from core.errors import SettingsError
from core.project import Project
from core.settings import load_settings

REPO = Path(__file__).resolve().parents[3]
MEM = ".fusion/memory.md"


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def _memory_index(root: Path, lines: int) -> Path:
    """A layered project whose MEMORY.md has ``lines`` lines (no final newline, as agents leave it)."""
    folder = root / ".fusion" / "memory"
    folder.mkdir(parents=True)
    text = "# Project Memory\n" + "\n".join(f"- [note {i}](note-{i}.md) — one-line hook" for i in range(2, lines + 1))
    (folder / "MEMORY.md").write_text(text, encoding="utf-8")
    return folder / "MEMORY.md"


def test_budget_json_on_the_real_memory(real_project: Path, capsys, user_config_dir: Path) -> None:
    code, out, err = run(capsys, "budget", "--project", str(real_project), "--json",
                         "--consumer", "fusion,claude-code", "-c", "codex")
    assert code == 0, err
    [doc] = json.loads(out)["documents"]
    assert doc["path"] == MEM and doc["lines"] == 1293
    cuts = {c["consumer"]: c["firstUnloadedLine"] for c in doc["consumers"]}
    assert cuts == {"fusion": None, "claude-code": 167, "codex": 246}  # Fusion reads the seed file whole
    claude = doc["consumers"][1]
    assert claude["measures"][0] == {"unit": "lines", "used": 1293, "limit": 200, "estimated": False}
    assert any(s["heading"] == "Color Theme System" and s["wholly"] for s in claude["sections"])


def test_budget_text_names_the_cut_and_the_sections(real_project: Path, capsys, user_config_dir: Path) -> None:
    code, out, _ = run(capsys, "budget", "--project", str(real_project), "-c", "claude-code")
    assert code == 0
    assert "line 167 and everything after it is not loaded" in out
    assert "1,293 / 200 lines · 102,144 / 25,000 characters" in out
    assert "Color Theme System (line 172, wholly)" in out


def test_set_consumers_is_saved_in_memdesks_own_state(real_project: Path, capsys, user_config_dir: Path) -> None:
    # Issue 18: the readers are memdesk's own setting: in .fusion/memdesk/settings.json, never in config.json.
    config = real_project / ".fusion" / "config.json"
    config.write_text('{"nextId": 7, "settings": {"memoryEnabled": true, "fusionOnly": 1}}\n', encoding="utf-8")
    before = config.read_bytes()
    own = real_project / ".fusion" / "memdesk" / "settings.json"
    code, out, err = run(capsys, "budget", "--project", str(real_project), "--set-consumers", "memory.md",
                         "claude-code, fusion")
    assert code == 0, err
    assert out.strip() == ".fusion/memory.md is read by: claude-code, fusion"
    assert config.read_bytes() == before
    assert json.loads(own.read_text(encoding="utf-8"))["memdeskBudgetConsumers"] == {MEM: ["claude-code", "fusion"]}
    code, out, _ = run(capsys, "budget", "--project", str(real_project), "--json")
    assert [c["consumer"] for c in json.loads(out)["documents"][0]["consumers"]] == ["claude-code", "fusion"]
    code, out, _ = run(capsys, "budget", "--project", str(real_project), "--set-consumers", MEM, "default")
    assert code == 0 and "fusion (the defaults)" in out
    assert "memdeskBudgetConsumers" not in json.loads(own.read_text(encoding="utf-8"))
    assert config.read_bytes() == before


def test_bad_input_is_one_line_and_changes_nothing(real_project: Path, capsys, user_config_dir: Path) -> None:
    config = real_project / ".fusion" / "config.json"
    config.write_text('{"memoryEnabled": true}\n', encoding="utf-8")
    before = config.read_bytes()
    code, _, err = run(capsys, "budget", "--project", str(real_project), "--set-consumers", MEM, "fusion,nope")
    assert code == 2 and err.count("\n") == 1 and "no consumer named 'nope'" in err
    code, _, err = run(capsys, "budget", "--project", str(real_project), "--consumer", "nope")
    assert code == 2 and "known: fusion, claude-code" in err
    code, _, err = run(capsys, "budget", "--project", str(real_project), "--file", "../../etc/passwd")
    assert code == 2 and err.count("\n") == 1
    assert config.read_bytes() == before


def test_list_consumers_names_each_source(capsys, user_config_dir: Path) -> None:
    code, out, _ = run(capsys, "budget", "--list-consumers", "--json")
    table = {c["id"]: c for c in json.loads(out)}
    assert list(table) == ["fusion", "claude-code", "codex", "gemini-cli", "windsurf"]
    assert table["claude-code"]["rules"][0]["lines"] == 200 and table["claude-code"]["rules"][0]["utf16"] == 25_000
    assert table["codex"]["rules"][1]["tokens"] == 2_500
    assert all(rule["source"] for c in table.values() for rule in c["rules"])


def test_cli_runs_as_a_process_on_a_layered_project(layered_project: Path, user_config_dir: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "MEMDESK_CONFIG_DIR": str(user_config_dir)}
    proc = subprocess.run([sys.executable, "-m", "core.cli", "budget", "--project", str(layered_project),
                           "--file", "MEMORY.md", "-c", "claude-code", "--json"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    [doc] = json.loads(proc.stdout)["documents"]
    assert doc["path"] == ".fusion/memory/MEMORY.md" and doc["consumers"][0]["matchedByPath"]


def test_choice_defaults_and_validation(project: Path, user_config_dir: Path) -> None:
    assert chosen_consumer_ids(".fusion/memory/MEMORY.md", load_settings(project)) == ["fusion"]
    assert chosen_consumer_ids("AGENTS.md", None) == ["codex"]
    settings = set_document_consumers(project, ".fusion/memory/MEMORY.md", ["claude-code"])
    assert chosen_consumer_ids(".fusion/memory/MEMORY.md", settings) == ["claude-code"]
    assert not (project / ".fusion" / "config.json").exists()  # memdesk's own setting (issue 18)
    own = (project / ".fusion" / "memdesk" / "settings.json").read_bytes()
    with pytest.raises(SettingsError, match="no consumer named 'claude'"):
        set_document_consumers(project, ".fusion/memory/MEMORY.md", ["claude"])
    assert (project / ".fusion" / "memdesk" / "settings.json").read_bytes() == own


@pytest.mark.parametrize(("lines", "warned"), [
    (199, ()),  # the entry is line 200: still loaded
    (200, ("entry falls past claude-code's cut (line 201 of 200)",)),
])
def test_an_append_past_claude_codes_cut_warns(project: Path, user_config_dir: Path, lines: int,
                                               warned: tuple[str, ...]) -> None:
    path = _memory_index(project, lines)
    rel = ".fusion/memory/MEMORY.md"
    set_document_consumers(project, rel, ["fusion", "claude-code"])
    outcome = Project(project).append("Ship the meter", path="MEMORY.md")
    assert outcome.status == "written" and outcome.path == rel
    assert path.read_text(encoding="utf-8").endswith("one-line hook\nShip the meter\n")  # Fusion's layered format
    assert outcome.warnings == warned
    assert outcome.to_json()["warnings"] == list(warned)


def test_a_layered_append_past_fusions_first_read_says_so(layered_project: Path, user_config_dir: Path) -> None:
    from core.budget import line_count

    rel = ".fusion/memory/MEMORY.md"
    path = layered_project / rel
    text = path.read_text(encoding="utf-8")
    path.write_text(text + "".join(f"- filler {i}\n" for i in range(400 - line_count(text))), encoding="utf-8")
    outcome = Project(layered_project).append("One more", path="MEMORY.md")
    # Fusion's "\n<content>\n" after a final newline: line 401 is blank, the entry is line 402.
    assert outcome.warnings == ("entry falls past fusion's first read (line 402; a read returns 400 lines)",)


def test_an_append_that_fits_does_not_warn(project: Path, user_config_dir: Path) -> None:
    _memory_index(project, 150)
    set_document_consumers(project, ".fusion/memory/MEMORY.md", ["claude-code", "fusion"])
    outcome = Project(project).append("Still within", path="MEMORY.md")
    assert outcome.status == "written" and outcome.warnings == ()


def test_an_append_on_the_real_memory_warns_for_each_chosen_consumer(real_project: Path,
                                                                     user_config_dir: Path) -> None:
    set_document_consumers(real_project, MEM, ["fusion", "claude-code", "windsurf", "gemini-cli"])
    outcome = Project(real_project).append("A late finding", today=date(2026, 8, 21))
    assert (real_project / MEM).read_text(encoding="utf-8").endswith("\n\n<!-- 2026-08-21 -->\nA late finding")
    assert list(outcome.warnings) == [
        "entry falls past claude-code's cut (line 1,296; claude-code loads 25,000 characters, up to line 166)",
        "entry falls past windsurf's cut (line 1,296; windsurf loads 12,000 characters, up to line 70)",
    ]


def test_the_seed_wrapper_append_matches_the_pure_function(real_project: Path, user_config_dir: Path) -> None:
    before = (real_project / MEM).read_text(encoding="utf-8")
    append_memory_entry(real_project, "Through the seed wrapper", today=date(2026, 8, 21))
    after = (real_project / MEM).read_text(encoding="utf-8")
    assert append_warnings(MEM, before, after, ["claude-code"]) == [
        "entry falls past claude-code's cut (line 1,296; claude-code loads 25,000 characters, up to line 166)"]


def test_prune_budget_shows_before_and_after(real_project: Path, user_config_dir: Path) -> None:
    before = (real_project / MEM).read_text(encoding="utf-8")
    after = "\n".join(before.split("\n")[:150]) + "\n"
    [claude, fusion] = prune_budget(before, after, ["claude-code", "fusion"])
    assert claude.before.cut.first_line == 167 and claude.after.cut is None
    assert claude.summary().startswith("Claude Code: cut at line 167 of 1,293, ")
    assert claude.summary().endswith("→ all 150 lines loaded")
    assert fusion.to_json()["after"]["loadedAll"] is True
