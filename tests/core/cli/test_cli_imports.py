"""Fast commands: each imports only what it needs (no pydantic, model or Qt for a keyword search)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.cli import COMMANDS, build_parser

REPO = Path(__file__).resolve().parents[3]
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
    assert set(choices) == {command}  # its module's other commands are not built


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


# -- memdesk append: the project model and the budget check without pydantic ---------------------------
# What `append` on a file backend no longer imports: the settings and load-rule models (pydantic), the
# user config, the plugin scan (importlib.metadata), the temporary-file machinery, the filelock library
# (core.storage.locks takes the same flock itself), platformdirs (core.storage.userdirs), OpenSSL's hashes
# (an append hashes nothing), argparse's shutil, history's versions (core.storage.history.worker records the
# event), the search types and the backend picker's BackendInfo.
APPEND_FREE = ("pydantic", "core.settings.model", "core.documents.load_rules", "core.settings.user_config",
               "core.budget.rules", "importlib.metadata", "tempfile", "core.search.derived", "croniter", "filelock",
               "platformdirs", "hashlib", "shutil", "difflib", "core.storage.history.versions", "core.storage.saving",
               "core.search.types", "core.backends.info")
#: Nor, on the seed layout (the one `python -m bench core` times), `dataclasses` with the `inspect`, `ast` and
#: `dis` it brings (~5 ms of a ~60 ms process: the append path's records are :class:`core.frozen.Record`\ s),
#: `logging` with `traceback`, `tokenize` and `textwrap` (~4 ms: core.logs resolves a logger when it first logs),
#: `concurrent.futures` with `queue` (history's worker is core.storage.history.jobs), or `getpass` with `termios`
#: (core.storage.userdirs.login_name).
SEED_APPEND_FREE = (*APPEND_FREE, "dataclasses", "inspect", "ast", "dis", "copy", "logging", "traceback", "tokenize",
                    "concurrent.futures", "queue", "getpass", "termios", "core.settings.store.connections")


def run_cli(root: Path, tmp_path: Path, *args: str, modules: tuple[str, ...] = APPEND_FREE) -> dict:
    """Run ``main(args)`` in a fresh interpreter: its exit code, output and which of ``modules`` it imported."""
    code = (f"import sys, json, io, contextlib; from core.cli import main; out = io.StringIO(); err = io.StringIO()\n"
            f"with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err): rc = main({list(args)!r})\n"
            f"print(json.dumps({{'rc': rc, 'out': out.getvalue(), 'err': err.getvalue(), "
            f"'mods': [m for m in {modules!r} if m in sys.modules]}}))")
    env = {**os.environ, "PYTHONPATH": str(REPO), "MEMDESK_CACHE_DIR": str(tmp_path / "cache"),
           "MEMDESK_CONFIG_DIR": str(tmp_path / "user-config")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=root, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_append_on_the_seed_layout_imports_no_model_and_writes_the_entry(sample_project: Path, tmp_path: Path):
    # Fusion loads the seed file whole: the budget check needs no measures either.
    out = run_cli(sample_project, tmp_path, "append", "a light entry 4711", "-p", str(sample_project),
                  modules=(*SEED_APPEND_FREE, "core.budget.report", "core.budget.measure"))
    assert (out["rc"], out["mods"]) == (0, [])
    assert out["out"].startswith("Memory written to project scope")
    text = (sample_project / ".fusion" / "memory.md").read_text(encoding="utf-8")
    assert text.endswith("\na light entry 4711")
    again = run_cli(sample_project, tmp_path, "append", "a light entry 4711", "-p", str(sample_project),
                    modules=SEED_APPEND_FREE)
    assert (again["rc"], again["mods"]) == (0, []) and "already" in again["out"].lower()
    assert (sample_project / ".fusion" / "memory.md").read_text(encoding="utf-8") == text
    empty = run_cli(sample_project, tmp_path, "append", "   ", "-p", str(sample_project))
    assert (empty["rc"], empty["mods"], empty["out"]) == (2, [], "") and empty["err"].strip()


def test_append_with_layer_agent_and_file_on_the_layered_layout_imports_no_model(layered_project: Path,
                                                                                 tmp_path: Path):
    root = str(layered_project)
    for args, rel in ((["--layer", "long-term"], ".fusion/memory/MEMORY.md"),
                      (["--file", "MEMORY.md"], ".fusion/memory/MEMORY.md")):
        out = run_cli(layered_project, tmp_path, "append", f"layered entry {rel} {args[0]}", *args, "-p", root,
                      "--json")
        doc = json.loads(out["out"])
        assert (out["rc"], out["mods"], doc["status"], doc["path"]) == (0, [], "written", rel)
        assert f"layered entry {rel} {args[0]}" in (layered_project / rel).read_text(encoding="utf-8")
    out = run_cli(layered_project, tmp_path, "append", "an agent's daily note", "--agent", "reviewer", "-p", root,
                  "--json")
    doc = json.loads(out["out"])
    assert (out["rc"], out["mods"], doc["status"]) == (0, [], "written")
    assert doc["path"].startswith(".fusion/agent-memory/reviewer/")
    assert "an agent's daily note" in (layered_project / doc["path"]).read_text(encoding="utf-8")


def test_append_warnings_without_the_models_are_those_of_the_models(layered_project: Path, tmp_path: Path):
    rel = ".fusion/memory/MEMORY.md"
    long = "".join(f"- line {i}\n" for i in range(450))
    (layered_project / rel).write_text("# Memory\n" + long, encoding="utf-8")
    out = run_cli(layered_project, tmp_path, "append", "past the first read", "--layer", "long-term",
                  "-p", str(layered_project), "--json")
    doc = json.loads(out["out"])
    assert (out["rc"], out["mods"]) == (0, [])
    assert doc["warnings"] and "fusion's first read" in doc["warnings"][0]
    # The same append measured with the pydantic consumer table gives the same warnings.
    from core.budget import BUILTIN_CONSUMERS, append_warnings, chosen_consumers

    after = (layered_project / rel).read_text(encoding="utf-8")
    before = after[: after.index("\npast the first read")]
    table = {c.id: c for c in BUILTIN_CONSUMERS}
    assert append_warnings(rel, before, after, chosen_consumers(rel, None, table)) == doc["warnings"]


def test_consumers_chosen_for_the_seed_file_warn_as_the_models_do(real_project: Path, tmp_path: Path):
    rel = ".fusion/memory.md"
    (real_project / ".fusion" / "config.json").write_text(json.dumps(
        {"settings": {"memdeskBudgetConsumers": {rel: ["claude-code", "fusion", "codex"]}}}), encoding="utf-8")
    before = (real_project / rel).read_text(encoding="utf-8")
    out = run_cli(real_project, tmp_path, "append", "an entry past claude-code's cut", "-p", str(real_project),
                  "--json")
    doc = json.loads(out["out"])
    assert (out["rc"], out["mods"]) == (0, [])
    assert [w.split("'s ")[0] for w in doc["warnings"]] == ["entry falls past claude-code", "entry falls past codex"]
    from core.budget import BUILTIN_CONSUMERS, append_warnings

    table = {c.id: c for c in BUILTIN_CONSUMERS}
    after = (real_project / rel).read_text(encoding="utf-8")
    assert append_warnings(rel, before, after, [table["claude-code"], table["fusion"], table["codex"]]) \
        == doc["warnings"]


def test_a_user_who_defines_consumers_gets_them_in_append_warnings(sample_project: Path, tmp_path: Path):
    (tmp_path / "user-config").mkdir()
    (tmp_path / "user-config" / "config.json").write_text(json.dumps(
        {"consumers": {"fusion": {"lines": 3, "appliesTo": "**"}}}), encoding="utf-8")
    out = run_cli(sample_project, tmp_path, "append", "an entry past three lines", "-p", str(sample_project),
                  "--json", modules=())
    doc = json.loads(out["out"])
    assert doc["status"] == "written" and any("fusion" in w for w in doc["warnings"]), doc


def test_append_refuses_when_memory_is_off_and_forces_without_the_models(sample_project: Path, tmp_path: Path):
    cfg = sample_project / ".fusion" / "config.json"
    doc = json.loads(cfg.read_text())
    doc["settings"]["memoryEnabled"] = False
    cfg.write_text(json.dumps(doc))
    before = (sample_project / ".fusion" / "memory.md").read_bytes()
    out = run_cli(sample_project, tmp_path, "append", "while off", "-p", str(sample_project))
    assert (out["rc"], out["mods"]) == (1, []) and "memory is switched off" in out["err"]
    assert (sample_project / ".fusion" / "memory.md").read_bytes() == before
    out = run_cli(sample_project, tmp_path, "append", "while off", "--force", "-p", str(sample_project))
    assert (out["rc"], out["mods"]) == (0, [])
    assert (sample_project / ".fusion" / "memory.md").read_text(encoding="utf-8").endswith("\nwhile off")


@pytest.mark.parametrize("settings", [{"memoryEnabled": "yes"}, {"historyMinVersions": 0},
                                      {"memoryBackend": " "}, {"insightExtractionSchedule": "not cron"}])
def test_append_with_invalid_settings_still_names_the_setting(sample_project: Path, tmp_path: Path, settings):
    cfg = sample_project / ".fusion" / "config.json"
    doc = json.loads(cfg.read_text())
    doc["settings"].update(settings)
    cfg.write_text(json.dumps(doc))
    before = (sample_project / ".fusion" / "memory.md").read_bytes()
    out = run_cli(sample_project, tmp_path, "append", "never written", "-p", str(sample_project), modules=())
    assert out["rc"] == 2 and next(iter(settings)) in out["err"], out
    assert (sample_project / ".fusion" / "memory.md").read_bytes() == before


CONFIGS = [{}, {"memoryEnabled": False}, {"memoryBackend": "qmd"}, {"memoryBackendType": "readonly"},
           {"memoryBackend": "file", "memoryBackendType": "sqlite"}, {"memoryBackendType": ""},
           {"memoryBackend": "sqlite"}, {"memoryEnabled": None}, {"memoryEnabled": 1}, {"memory_enabled": False},
           {"historyRetentionDays": 36_500}, {"historyRetentionDays": 36_501}, {"historyMinVersions": True},
           {"insightExtractionMinIntervalMs": -1}, {"insightExtractionSchedule": "0 2 * * *"},
           {"insightExtractionSchedule": "5 4 * * *"}, {"memoryBackendConfig": {"x": 1}},
           {"memoryBackendConfig": []}, {"memdeskBudgetConsumers": {".fusion/memory.md": ["codex"]}},
           {"memdeskBudgetConsumers": {".fusion/memory.md": "codex"}}, {"unknownKey": [1, 2]}]


@pytest.mark.parametrize("settings", CONFIGS)
@pytest.mark.parametrize("nested", [True, False])
def test_light_settings_agree_with_the_settings_model(project: Path, settings: dict, nested: bool):
    from core.cli.light import light_settings
    from core.errors import SettingsError
    from core.settings import load_settings

    (project / ".fusion").mkdir()
    doc = {"nextId": 1, "settings": settings} if nested else settings
    (project / ".fusion" / "config.json").write_text(json.dumps(doc), encoding="utf-8")
    light = light_settings(project)
    try:
        full = load_settings(project)
    except SettingsError:
        assert light is None  # what the model refuses always takes the full path, which names it
        return
    if light is None:
        return  # another backend, or a value only the model can check: the full path reads it
    assert (light.memory_enabled, light.memory_backend, light.memory_backend_config, light.memdesk_budget_consumers,
            light.model_fields_set) == (full.memory_enabled, full.memory_backend, full.memory_backend_config,
                                        full.memdesk_budget_consumers, full.model_fields_set)
    assert light.history_min_versions == full.history_min_versions  # any other setting: from the model


def test_the_light_copies_of_constants_match_their_sources():
    from core import project, settings
    from core.backends.registry import LAYERED_DEFAULT_BACKEND_ID
    from core.cli import light

    assert project.CONFIG_PATH == settings.CONFIG_PATH
    assert light.DEFAULT_INSIGHT_SCHEDULE == settings.DEFAULT_INSIGHT_SCHEDULE
    assert light._INT_BOUNDS == {"insightExtractionMinIntervalMs": (0, settings.MAX_MIN_INTERVAL_MS),
                                 "historyRetentionDays": (0, settings.MAX_HISTORY_RETENTION_DAYS),
                                 "historyMinVersions": (1, settings.MAX_HISTORY_MIN_VERSIONS)}
    assert light._FIELDS.items() <= settings.ALIAS_TO_FIELD.items()
    assert set(light._FIELDS) | set(light._MODEL_ONLY) == set(settings.ALIAS_TO_FIELD)
    assert set(light._OWN) == settings.OWN_KEYS
    assert LAYERED_DEFAULT_BACKEND_ID in light.FILE_BACKENDS
    from core.settings.store import connections

    assert (light.CONNECTIONS_FILE, light.FUSION_HOME_ENV) == (connections.CONNECTIONS_FILE, connections.FUSION_HOME_ENV)


def test_the_light_user_config_path_is_the_user_configs(monkeypatch, tmp_path: Path):
    from core.budget.registry import user_config_path
    from core.settings import user_config

    assert user_config_path() == user_config.user_config_path()
    monkeypatch.setenv("MEMDESK_CONFIG_DIR", str(tmp_path))
    assert user_config_path() == user_config.user_config_path() == tmp_path / "config.json"


@pytest.mark.parametrize("xdg", [None, "/srv/xdg-config", "relative/xdg", ""])
@pytest.mark.parametrize("home", ["/home/someone", "/", "relative-home", None])
def test_the_user_config_folder_is_platformdirs_answer(monkeypatch, xdg: str | None, home: str | None):
    import platformdirs

    from core.storage import userdirs

    for name, value in (("XDG_CONFIG_HOME", xdg), ("HOME", home)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    monkeypatch.delenv("MEMDESK_CONFIG_DIR", raising=False)
    expected = Path(platformdirs.user_config_dir("memdesk", appauthor=False))
    assert userdirs.platform_config_dir() == expected == userdirs.user_config_dir()


def test_the_plain_rules_are_the_load_rule_models():
    import inspect

    from core.budget.plain import UNITS, PlainRule
    from core.budget.table import BUILTIN_CONSUMERS, PLAIN_CONSUMERS
    from core.documents.load_rules import UNITS as MODEL_UNITS
    from core.documents.load_rules import LoadRule

    params = inspect.signature(PlainRule).parameters  # a frozen Record: its fields are its __init__'s parameters
    assert list(params) == list(PlainRule._fields)
    fields = {name: p.default for name, p in params.items()}
    assert list(fields) == list(LoadRule.model_fields)
    assert {k: v for k, v in fields.items() if k != "what"} == {
        k: f.default for k, f in LoadRule.model_fields.items() if k != "what"}
    assert UNITS == MODEL_UNITS
    for plain, model in zip(PLAIN_CONSUMERS, BUILTIN_CONSUMERS, strict=True):
        assert plain.data() == model.model_dump()
        for path in (".fusion/memory.md", ".fusion/memory/MEMORY.md", "AGENTS.md", "docs/GEMINI.md", "x/y.md"):
            assert plain.rule_for(path)[0].limits() == model.rule_for(path)[0].limits()
            assert plain.rule_for(path)[1] == model.rule_for(path)[1]


def test_a_plugin_cannot_replace_a_builtin_backend(monkeypatch, project: Path):
    from core.backends import registry as registry_mod
    from core.backends.file import FileMemoryBackend

    class Impostor(FileMemoryBackend):
        id = "file"
        name = "Impostor"

    class Other(FileMemoryBackend):
        id = "other"
        name = "Other"

    class EP:
        def __init__(self, cls):
            self.name, self.value, self.cls = cls.__name__, f"tests:{cls.__name__}", cls

        def load(self):
            return self.cls

    monkeypatch.setattr(registry_mod, "entry_points",
                        lambda group: [EP(Impostor), EP(Other)] if group == "memdesk.backends" else [])
    reg = registry_mod.default_registry()
    assert type(reg.create("file", {}, project)) is FileMemoryBackend  # before the plugins were scanned
    assert reg.list()[-1] == "other" and "file" in reg.list()
    assert type(reg.create("file", {}, project)) is FileMemoryBackend  # and after
    assert type(reg.create("other", {}, project)) is Other


@pytest.mark.parametrize("columns", [None, "50", "0", "-3", "wide"])
def test_the_help_width_is_shutils(monkeypatch, columns: str | None):
    import shutil

    from core.cli import terminal_columns

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert terminal_columns() == shutil.get_terminal_size().columns
