"""The project model (design §3a) on both layouts: documents, paths, appends, backends, no bypass."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from core.documents.layout import LONG_TERM_SCAFFOLD, Layout, daily_scaffold, detect_layout, sanitize_agent_id
from core.errors import MemoryBackendError
from core.project import MemoryDisabledError, Project
from core.storage import fileio
from tests.snapshot import tree

REPO = Path(__file__).resolve().parents[3]
LAYERED_ORDER = [
    ".fusion/memory/MEMORY.md",
    ".fusion/memory/2026-08-20.md",
    ".fusion/memory/2026-08-19.md",
    ".fusion/memory/2026-08-18.md",
    ".fusion/memory/DREAMS.md",
    ".fusion/agent-memory/executor-7/MEMORY.md",
    ".fusion/agent-memory/executor-7/2026-08-20.md",
    ".fusion/agent-memory/reviewer/MEMORY.md",
    ".fusion/agent-memory/reviewer/2026-08-20.md",
    ".fusion/memory/memory-insights.md",
]


def cli(root: Path, *args: str, stdin: str | None = None, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run([sys.executable, "-m", "core.cli", *args, "--project", str(root)], input=stdin,
                          capture_output=True, text=True, env=full_env, timeout=60)


# -- layout -----------------------------------------------------------------------------------------
def test_layered_fixture_lists_its_documents_in_design_order(layered_project):
    project = Project(layered_project)
    assert project.layout.kind == "layered"
    assert [d.path for d in project.documents()] == LAYERED_ORDER
    by_path = {d.path: d for d in project.documents()}
    assert by_path[".fusion/memory/MEMORY.md"].label == "Long-term memory"
    assert by_path[".fusion/memory/2026-08-19.md"].label == "Daily notes 2026-08-19"
    assert by_path[".fusion/memory/DREAMS.md"].label == "Dreams"
    assert by_path[".fusion/agent-memory/reviewer/MEMORY.md"].agent == "reviewer"
    assert by_path[".fusion/memory/MEMORY.md"].size == (layered_project / ".fusion/memory/MEMORY.md").stat().st_size


def test_opening_a_layered_project_changes_no_byte_and_creates_nothing(layered_project):
    before = tree(layered_project)
    project = Project(layered_project)
    project.documents()
    for doc in project.documents():
        project.read(doc.path)
    project.read_insights()
    assert project.backend.id == "qmd" and project.backend.name == "QMD (Quantized Memory Distillation)"
    assert tree(layered_project) == before


def test_read_only_commands_create_nothing(layered_project, tmp_path):
    before = tree(layered_project)
    env = {"MEMDESK_CACHE_DIR": str(tmp_path / "cache"), "MEMDESK_CONFIG_DIR": str(tmp_path / "cfg")}
    for args in (["show"], ["files"], ["files", "--json"], ["audit"], ["backends"], ["settings", "get"],
                 ["search", "useTasks"], ["show", "--file", "DREAMS.md"]):
        result = cli(layered_project, *args, env=env)
        assert result.returncode == 0, (args, result.stderr)
    assert tree(layered_project) == before


def test_files_json_has_the_documented_fields(layered_project):
    result = cli(layered_project, "files", "--json")
    rows = json.loads(result.stdout)
    assert [r["path"] for r in rows] == LAYERED_ORDER
    assert set(rows[0]) == {"path", "label", "layer", "agent", "size", "updatedAt", "legacy"}


@pytest.mark.parametrize("given, expected", [
    ("MEMORY.md", ".fusion/memory/MEMORY.md"),
    ("memory/MEMORY.md", ".fusion/memory/MEMORY.md"),
    (".fusion/memory/MEMORY.md", ".fusion/memory/MEMORY.md"),
    ("DREAMS.md", ".fusion/memory/DREAMS.md"),
    ("2026-08-19.md", ".fusion/memory/2026-08-19.md"),
    ("memory/2026-08-19.md", ".fusion/memory/2026-08-19.md"),
    ("agent-memory/reviewer/MEMORY.md", ".fusion/agent-memory/reviewer/MEMORY.md"),
    ("memory-insights.md", ".fusion/memory/memory-insights.md"),
])
def test_paths_normalise_as_design_says(layered_project, given, expected):
    assert Layout(layered_project).normalize(given) == expected


@pytest.mark.parametrize("bad", ["../MEMORY.md", "/etc/passwd", ".fusion/../../x", ".fusion/config.json",
                                 ".git/hooks/pre-commit", "C:/x.md", "memory\\MEMORY.md", "notes.md",
                                 ".fusion/memory/2026-13-99x.md", ".fusion/agent-memory/../memory/MEMORY.md"])
def test_other_paths_are_refused_and_never_read(layered_project, bad):
    with pytest.raises(MemoryBackendError) as exc:
        Project(layered_project).read(bad)
    assert exc.value.code in {"NOT_FOUND", "INVALID_CONFIG"}


def test_cli_refuses_a_bad_file_with_exit_2_and_one_line(layered_project):
    result = cli(layered_project, "show", "--file", "../../etc/passwd")
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1


def test_agent_ids_are_sanitized_like_fusion():
    assert sanitize_agent_id("exec utor/7") == "exec-utor-7"
    assert sanitize_agent_id("") == "agent" and sanitize_agent_id("..") == "agent"
    assert sanitize_agent_id("a__b.c-d") == "a__b.c-d"


def test_seed_layout_is_detected_and_never_gets_layered_paths(sample_project):
    project = Project(sample_project)
    assert detect_layout(sample_project) == "seed" and project.memory_path == ".fusion/memory.md"
    with pytest.raises(MemoryBackendError):
        project.read("MEMORY.md")
    with pytest.raises(MemoryBackendError):
        project.append("x", layer="daily")
    assert not (sample_project / ".fusion" / "memory").exists()


# -- editing and appending --------------------------------------------------------------------------
def test_each_layered_file_saves_byte_exact(layered_project):
    project = Project(layered_project)
    for doc in project.documents():
        raw = (layered_project / doc.path).read_bytes()
        text = project.read(doc.path)
        result = project.write(doc.path, text)
        assert not result.changed and (layered_project / doc.path).read_bytes() == raw
        project.write(doc.path, text + "- edited\n")
        assert (layered_project / doc.path).read_bytes() == raw + b"- edited\n"


def test_append_to_todays_daily_note_in_fusions_format(layered_project):
    day = date(2026, 12, 1)
    project = Project(layered_project)
    outcome = project.append("  Use the DB clock for lease expiry  ", today=day)
    path = layered_project / ".fusion/memory/2026-12-01.md"
    assert outcome.status == "written" and outcome.path == ".fusion/memory/2026-12-01.md"
    assert path.read_text() == daily_scaffold("2026-12-01") + "\nUse the DB clock for lease expiry\n"
    again = project.append("Use the DB clock for lease expiry", today=day)
    assert again.status == "skipped_duplicate" and "already present" in again.message
    assert path.read_text().count("lease expiry") == 1


def test_append_long_term_and_per_agent(layered_project):
    project = Project(layered_project)
    before = (layered_project / ".fusion/memory/MEMORY.md").read_text()
    project.append("keep leases in the DB clock", layer="long-term")
    assert (layered_project / ".fusion/memory/MEMORY.md").read_text() == before + "\nkeep leases in the DB clock\n"
    out = project.append("agent note", agent="new agent", today=date(2026, 12, 1))
    assert out.path == ".fusion/agent-memory/new-agent/2026-12-01.md"
    assert (layered_project / out.path).read_text().endswith("\nagent note\n")
    assert not (layered_project / ".fusion/memory.md").exists()


def test_new_long_term_file_gets_the_exact_scaffold(tmp_path):
    root = tmp_path / "p"
    (root / ".fusion" / "memory").mkdir(parents=True)
    project = Project(root)
    project.create_document()
    assert (root / ".fusion/memory/MEMORY.md").read_text() == LONG_TERM_SCAFFOLD


def test_empty_append_does_no_io(tmp_path):
    root = tmp_path / "p"
    root.mkdir()
    out = Project(root).append("   \n ")
    assert out.status == "skipped_empty" and out.file_path is None
    assert list(root.iterdir()) == []


def test_append_with_memory_off_is_refused_unless_forced(sample_project):
    project = Project(sample_project)
    project.update_settings({"memoryEnabled": False})
    before = (sample_project / ".fusion/memory.md").read_bytes()
    with pytest.raises(MemoryDisabledError):
        project.append("agent note while off")
    assert (sample_project / ".fusion/memory.md").read_bytes() == before
    result = cli(sample_project, "append", "agent note while off")
    assert result.returncode == 1 and "switched off" in result.stderr
    assert project.append("forced", force=True).status == "written"


def test_cli_append_layer_and_agent(layered_project):
    result = cli(layered_project, "append", "--agent", "reviewer", "--layer", "long-term", "review rule", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["path"] == ".fusion/agent-memory/reviewer/MEMORY.md" and data["warnings"] == []
    assert (layered_project / data["path"]).read_text().endswith("\nreview rule\n")


def test_rotation_is_batched(project):
    from core.entries import DEFAULT_MAX_LINES, append_memory_entry

    (project / ".fusion").mkdir()
    (project / ".fusion/memory.md").write_text("# Project Memory\n\n## Architecture\n")
    moved = []
    for i in range(60):
        moved.append(append_memory_entry(project, f"entry {i}", max_lines=100).archived_entries)
    rotations = [m for m in moved if m]
    assert 1 <= len(rotations) <= 4 and sum(rotations) >= 10  # a batch at a time, not one per append
    assert DEFAULT_MAX_LINES == 2000
    text = (project / ".fusion/memory.md").read_text()
    archive = (project / ".fusion/memory-archive.md").read_text()
    for i in range(60):
        assert (f"entry {i}\n" in text + "\n") != (f"entry {i}\n" in archive + "\n")


# -- backends: no bypass ----------------------------------------------------------------------------
def readonly(root: Path) -> None:
    cfg = root / ".fusion" / "config.json"
    data = json.loads(cfg.read_text()) if cfg.exists() else {}
    target = data.get("settings", data) if isinstance(data.get("settings"), dict) else data
    target["memoryBackend"] = "readonly"
    cfg.write_text(json.dumps(data))


@pytest.mark.parametrize("fixture", ["sample_project", "layered_project"])
def test_readonly_refuses_every_cli_write_path(request, fixture, tmp_path):
    root = request.getfixturevalue(fixture)
    readonly(root)
    candidate = tmp_path / "candidate.md"
    candidate.write_text("# Project Memory\n\n## Architecture\n\n## Decisions\n\n## Conventions\n\n## Pitfalls\n")
    before = tree(root)
    env = {"MEMDESK_CONFIG_DIR": str(tmp_path / "cfg"), "MEMDESK_CACHE_DIR": str(tmp_path / "cache")}
    for args, stdin in ((["append", "an agent note"], None), (["write"], "replacement\n"),
                        (["prune", "apply", str(candidate)], None), (["migrate", "--apply"], None),
                        (["append", "--file", "MEMORY.md", "x"], None)):
        result = cli(root, *args, stdin=stdin, env=env)
        if args[0] == "migrate" and result.stdout.startswith("Nothing to migrate"):
            assert result.returncode == 0  # nothing to do is no failure (issue 22), and nothing is written
            continue
        assert result.returncode != 0, args
    assert tree(root) == before


def test_readonly_refuses_a_migration_that_has_something_to_migrate(layered_project, tmp_path):
    """The case above where ``migrate --apply`` has work: a legacy memory.md beside .fusion/memory/."""
    (layered_project / ".fusion" / "memory.md").write_text("# Project Memory\n\n## Decisions\n\n- legacy note\n")
    env = {"MEMDESK_CONFIG_DIR": str(tmp_path / "cfg"), "MEMDESK_CACHE_DIR": str(tmp_path / "cache")}
    assert "after migration" in cli(layered_project, "migrate", env=env).stdout  # there is something to do
    readonly(layered_project)
    before = tree(layered_project)
    result = cli(layered_project, "migrate", "--apply", env=env)
    assert result.returncode != 0 and "READ_ONLY" in result.stderr, result
    assert len([line for line in result.stderr.splitlines() if line.strip()]) == 1
    assert tree(layered_project) == before


def test_readonly_refuses_every_core_write_path(layered_project):
    from core.automation.extraction import store_imported_reply
    from core.insights import write_insights_memory, write_working_memory
    from core.proposals import accept_insights

    readonly(layered_project)
    project = Project(layered_project)
    before = tree(layered_project)
    for call in (lambda: project.write(None, "x"), lambda: project.append("x"),
                 lambda: project.write_insights("x"), lambda: project.create_document("DREAMS.md"),
                 lambda: write_working_memory(layered_project, "x"),
                 lambda: write_insights_memory(layered_project, "x")):
        with pytest.raises(MemoryBackendError) as exc:
            call()
        assert exc.value.code == "READ_ONLY"
    assert tree(layered_project) == before
    del accept_insights, store_imported_reply


def test_insights_accepted_land_in_the_layered_path(layered_project):
    from core.automation.extraction import store_imported_reply
    from core.proposals import accept_insights

    reply = json.dumps({"summary": "s", "insights": [{"category": "pitfall", "content": "Never trust mtime"}],
                        "prunedMemory": None})
    run = store_imported_reply(layered_project, reply, "test")
    accept_insights(layered_project, run.proposal_id)
    assert "Never trust mtime" in (layered_project / ".fusion/memory/memory-insights.md").read_text()
    assert not (layered_project / ".fusion/memory-insights.md").exists()


def test_extraction_on_sqlite_without_mirror_sees_the_memory(project, tmp_path, monkeypatch):
    from core.automation.extraction import run_extraction

    monkeypatch.setenv("MEMDESK_CONFIG_DIR", str(tmp_path / "cfg"))
    fusion = project / ".fusion"
    fusion.mkdir()
    (fusion / "config.json").write_text(json.dumps({"memoryBackend": "sqlite",
                                                    "memoryBackendConfig": {"mirror": False}}))
    p = Project(project)
    assert p.backend.id == "sqlite"
    body = "# Project Memory\n\n## Architecture\n\n- The scheduler owns leases\n\n## Conventions\n\n## Pitfalls\n"
    p.write(None, body)
    p.close()
    assert not (fusion / "memory.md").exists()
    from core.providers.offline import OfflineProvider

    run = run_extraction(project, OfflineProvider())
    assert run.ok, run.message
    assert run.memory_hash_at_start == fileio.content_hash(body)


def test_sqlite_without_mirror_serves_appends_from_the_database(project):
    fusion = project / ".fusion"
    fusion.mkdir()
    (fusion / "config.json").write_text(json.dumps({"memoryBackend": "sqlite",
                                                    "memoryBackendConfig": {"mirror": False}}))
    p = Project(project)
    p.append("first entry", today=date(2026, 12, 1))
    p.append("first entry", today=date(2026, 12, 1))
    assert p.read() == "\n\n<!-- 2026-12-01 -->\nfirst entry"
    assert not (fusion / "memory.md").exists()


def test_unknown_backend_falls_back_to_file_with_a_reason(sample_project):
    cfg = sample_project / ".fusion/config.json"
    data = json.loads(cfg.read_text())
    data.setdefault("settings", data)["memoryBackend"] = "pinecone"
    cfg.write_text(json.dumps(data))
    project = Project(sample_project)
    assert project.backend.id == "file" and "pinecone" in (project.fallback_reason or "")
    result = cli(sample_project, "backends")
    assert "fallback" in result.stdout and "pinecone" in result.stdout


def test_qmd_is_resolved_without_rewriting_the_config(layered_project):
    cfg = layered_project / ".fusion/config.json"
    raw = cfg.read_bytes()
    project = Project(layered_project)
    assert project.backend.id == "qmd"
    project.append("x")
    assert cfg.read_bytes() == raw


# -- migration --------------------------------------------------------------------------------------
def test_migrate_moves_legacy_entries_under_matching_sections(layered_project):
    legacy = ("# Project Memory\n\n<!-- This file stores durable project learnings. -->\n\n## Architecture\n\n"
              "- Legacy decision about leases\n\n## Pitfalls\n\n- Legacy pitfall\n\n## Deploy notes\n\n- Only on Fridays\n")
    (layered_project / ".fusion/memory.md").write_text(legacy)
    listed = {d.path: d for d in Project(layered_project).documents()}
    assert listed[".fusion/memory.md"].legacy
    dry = cli(layered_project, "migrate")
    assert dry.returncode == 0 and "+- Legacy decision about leases" in dry.stdout
    assert (layered_project / ".fusion/memory.md").read_text() == legacy  # a dry run writes nothing
    done = cli(layered_project, "migrate", "--apply")
    assert done.returncode == 0, done.stderr
    text = (layered_project / ".fusion/memory/MEMORY.md").read_text()
    decisions = text.index("## Decisions")
    assert decisions < text.index("- Legacy decision about leases") < text.index("## Conventions")
    pitfalls = text.index("## Pitfalls")
    assert pitfalls < text.index("- Legacy pitfall") < text.index("## Context")
    assert "## Deploy notes\n\n- Only on Fridays" in text
    assert not (layered_project / ".fusion/memory.md").exists()
    from core.storage.history import versions as history

    paths = {v.path for v in history.list_versions(layered_project)}
    assert {".fusion/memory.md", ".fusion/memory/MEMORY.md"} <= paths


def test_instructions_and_timestamps_use_utc(layered_project):
    target = Project(layered_project).append_target()
    assert target == f".fusion/memory/{datetime.now(UTC).date().isoformat()}.md"
    assert fileio.content_hash("") == hashlib.sha256(b"").hexdigest()


def test_process_run_result_has_fusions_flat_shape(sample_project):
    from core.insights import process_insight_extraction_run
    from core.insights.model import ProcessRunInput

    reply = json.dumps({"summary": "two things", "insights": [{"category": "pitfall", "content": "Flat shape"}],
                        "prunedMemory": None})
    result = process_insight_extraction_run(sample_project, ProcessRunInput(reply, True, "2026-12-01T00:00:00Z"))
    assert result.summary == "two things" and result.insights[0].content == "Flat shape"
    assert result.pruned_memory is None and result.extracted_at and result.new_insight_count == 1
    assert result.duplicate_count == 0 and result.to_json()["summary"] == "two things"


@pytest.mark.parametrize("planted", [".git/hooks/pre-commit", ".fusion/config.json", "../outside.md",
                                     ".fusion/memdesk/proposals/x.json"])
def test_restore_of_a_planted_history_row_is_refused(sample_project, planted):
    from core.storage.history import versions as history

    version_id = history.record_version(sample_project, planted, "#!/bin/sh\necho owned\n", "planted")
    before = tree(sample_project)
    with pytest.raises(MemoryBackendError) as exc:
        Project(sample_project).restore(version_id)
    assert "not a memory document" in exc.value.message
    assert tree(sample_project) == before
    assert not (sample_project / ".git").exists()


def test_an_undated_head_over_budget_rotates_in_batches_not_on_every_append(project):
    from core.entries import append_memory_entry

    (project / ".fusion").mkdir()
    (project / ".fusion/memory.md").write_text("# Project Memory\n\n" + "".join(f"- fact {i}\n" for i in range(300)))
    results = [append_memory_entry(project, f"entry {i}", max_lines=100) for i in range(30)]
    rewrites = [r.archived_entries for r in results if r.archived_entries]
    assert len(rewrites) <= 30 // 3 and min(rewrites) >= 3  # each rewrite moves a batch
    text = (project / ".fusion/memory.md").read_text()
    assert "entry 29" in text and text.count("- fact ") == 300


def test_order_key_keeps_design_order(layered_project):
    docs = Layout(layered_project).documents()
    assert [d.path for d in sorted(reversed(docs), key=Layout.order_key)] == LAYERED_ORDER
    described = [Layout(layered_project).describe(d.path, d.size) for d in docs]
    assert [(d.label, d.layer, d.agent) for d in described] == [(d.label, d.layer, d.agent) for d in docs]


def test_a_backend_without_a_mirror_still_lists_its_document(project):
    (project / ".fusion").mkdir()
    (project / ".fusion" / "config.json").write_text(json.dumps({"memoryBackend": "sqlite",
                                                                 "memoryBackendConfig": {"mirror": False}}))
    p = Project(project)
    body = "# Project Memory\n\n- kept in the database\n"
    p.write(None, body)
    docs = p.documents()
    assert [d.path for d in docs] == [".fusion/memory.md"] and docs[0].layer == "working"
    assert docs[0].size == len(body.encode())
    assert not (project / ".fusion" / "memory.md").exists()
