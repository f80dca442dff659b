"""Fast commands: each imports only what it needs (no pydantic, model or Qt for a keyword search)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.cli import COMMANDS, build_parser

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("pydantic", "numpy", "wordllama", "PySide6", "httpx", "croniter")


def imported_after(root: Path, tmp_path: Path, *args: str, entry: str = "core.cli") -> dict:
    code = (f"import sys, json; from {entry} import main; rc = main({list(args)!r}); "
            f"print(json.dumps({{'rc': rc, 'mods': [m for m in {HEAVY!r} if m in sys.modules]}}))")
    env = {**os.environ, "PYTHONPATH": str(REPO), "MEMDESK_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=root, check=False)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_keyword_search_on_the_file_backend_imports_nothing_heavy(sample_project: Path, tmp_path: Path):
    out = imported_after(sample_project, tmp_path, "search", "claim", "--mode", "keyword", "-p", str(sample_project))
    assert out == {"rc": 0, "mods": []}


def test_the_gui_entry_runs_headless_commands_without_qt(sample_project: Path, tmp_path: Path):
    out = imported_after(sample_project, tmp_path, "search", "claim", "--mode", "keyword", "-p", str(sample_project),
                         entry="gui.main")
    assert out["rc"] == 0 and "PySide6" not in out["mods"]
    out = imported_after(sample_project, tmp_path, "show", "-p", str(sample_project), entry="gui.main")
    assert out["rc"] == 0 and "PySide6" not in out["mods"]


def test_a_keyword_search_on_the_hybrid_backend_never_loads_the_model(sample_project: Path, tmp_path: Path):
    cfg = sample_project / ".fusion" / "config.json"
    doc = json.loads(cfg.read_text())
    doc["settings"]["memoryBackend"] = "hybrid"
    cfg.write_text(json.dumps(doc))
    out = imported_after(sample_project, tmp_path, "search", "claim", "--mode", "keyword", "-p", str(sample_project))
    assert out["rc"] == 0 and "wordllama" not in out["mods"] and "numpy" not in out["mods"]


def test_every_command_is_in_the_table_and_known_to_the_gui_entry():
    from gui.main import HEADLESS_COMMANDS

    registered = set(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert registered <= set(COMMANDS), registered - set(COMMANDS)
    assert set(COMMANDS) <= HEADLESS_COMMANDS, set(COMMANDS) - HEADLESS_COMMANDS


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_one_command_builds_a_parser_with_its_module_only(command: str):
    parser = build_parser(command)
    choices = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert command in choices


@pytest.mark.parametrize("fixture, file", [("sample_project", None), ("layered_project", None),
                                           ("layered_project", "MEMORY.md"), ("sample_project", ".fusion/memory.md")])
def test_show_without_the_project_model_prints_what_the_project_reads(request, capsys, fixture: str, file):
    from core.cli import main
    from core.project import Project

    root = request.getfixturevalue(fixture)
    args = ["show", "--json", "-p", str(root)] + (["--file", file] if file else [])
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    project = Project(root)
    rel = project.resolve_path(file)
    assert (doc["path"], doc["content"], doc["backend"], doc["fallbackReason"]) == (
        rel, project.read(rel), project.backend.id, None)
    project.close()


def test_show_on_the_file_backend_imports_no_settings_model(sample_project: Path, tmp_path: Path):
    out = imported_after(sample_project, tmp_path, "show", "-p", str(sample_project))
    assert out == {"rc": 0, "mods": []}
