"""Seed 000 §1 and §4.3: path, scaffold, idempotent bootstrap, toggle, prompts, non-fatal setup."""

from __future__ import annotations

import json
import os

import pytest

from core.project_memory import (
    MEMORY_FILE_PATH,
    build_execution_memory_instructions,
    build_triage_memory_instructions,
    default_memory_scaffold,
    ensure_memory_file,
    memory_file_path,
    read_project_memory,
    resolve_memory_instruction_context,
)
from core.store import ProjectStore

SCAFFOLD = (
    "# Project Memory\n\n"
    "<!-- This file stores durable project learnings. Agents consult and update it during triage and execution. -->\n\n"
    "## Architecture\n\n<!-- Key architectural patterns, module boundaries, and design decisions -->\n\n"
    "## Conventions\n\n<!-- Project-specific coding standards, naming patterns, file organization -->\n\n"
    "## Pitfalls\n\n<!-- Known issues, common mistakes, and things to avoid -->\n\n"
    "## Context\n\n<!-- Important background information, dependency constraints, deployment notes -->\n"
)


def test_invariant1_file_path(project):
    assert MEMORY_FILE_PATH == ".fusion/memory.md"
    assert memory_file_path(project) == project / ".fusion" / "memory.md"


def test_scaffold_is_byte_exact():
    assert default_memory_scaffold() == SCAFFOLD


def test_ensure_is_idempotent_and_never_overwrites(project):
    assert ensure_memory_file(project) is True
    assert (project / MEMORY_FILE_PATH).read_text() == SCAFFOLD
    (project / MEMORY_FILE_PATH).write_text("my edits\n")
    assert ensure_memory_file(project) is False
    assert (project / MEMORY_FILE_PATH).read_text() == "my edits\n"


def test_invariant9_read_is_empty_string_when_absent(project):
    assert read_project_memory(project) == ""


def set_config(root, settings):
    (root / ".fusion").mkdir(exist_ok=True)
    (root / ".fusion/config.json").write_text(json.dumps(settings))


def test_invariant3_bootstrap_on_init_when_enabled(project):
    ProjectStore(project).init()
    assert (project / MEMORY_FILE_PATH).read_text() == SCAFFOLD


def test_no_bootstrap_when_disabled(project):
    set_config(project, {"memoryEnabled": False})
    ProjectStore(project).init()
    assert not (project / MEMORY_FILE_PATH).exists()


def test_toggle_on_creates_file_and_never_overwrites(project):
    set_config(project, {"memoryEnabled": False})
    store = ProjectStore(project)
    store.update_settings({"memoryEnabled": True})
    assert (project / MEMORY_FILE_PATH).read_text() == SCAFFOLD
    (project / MEMORY_FILE_PATH).write_text("kept\n")
    store.update_settings({"memoryEnabled": False})
    store.update_settings({"memoryEnabled": True})
    assert (project / MEMORY_FILE_PATH).read_text() == "kept\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_invariant5_bootstrap_failure_is_non_fatal(project):
    (project / ".fusion").mkdir()
    os.chmod(project / ".fusion", 0o500)
    try:
        ProjectStore(project).init()  # must not raise
    finally:
        os.chmod(project / ".fusion", 0o700)


def test_invariant5_failing_bootstrap_never_blocks_init_or_settings(project, monkeypatch, caplog):
    import core.store

    def broken(root):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(core.store, "ensure_memory_file", broken)
    set_config(project, {"memoryEnabled": False})
    store = ProjectStore(project)
    assert store.update_settings({"memoryEnabled": True}).memory_enabled is True
    assert store.init() is not None
    assert "No space left" in caplog.text
    assert json.loads((project / ".fusion/config.json").read_text()) == {"memoryEnabled": True}


def test_invariant2_disabled_means_no_prompt_instructions_but_file_stays_usable(project):
    off = {"memoryEnabled": False}
    assert build_triage_memory_instructions(project, off) == ""
    assert build_execution_memory_instructions(project, off) == ""
    assert resolve_memory_instruction_context(off).backend_type == "disabled"
    from core.backends import resolve_memory_backend

    backend = resolve_memory_backend(off, project)
    backend.write("still writable\n")
    assert backend.read() == "still writable\n"


def test_invariant4_file_backend_prompts_name_project_root_path(project):
    for build in (build_triage_memory_instructions, build_execution_memory_instructions):
        text = build(project / "worktree", None)
        assert text.startswith("\n## Project Memory\n")
        assert "`.fusion/memory.md`" in text and str(project) not in text


def test_default_and_undefined_settings_include_instructions(project):
    assert build_execution_memory_instructions(project) == build_execution_memory_instructions(
        project, {"memoryEnabled": True}
    )
    assert "update `.fusion/memory.md`" in build_execution_memory_instructions(project)


def test_readonly_backend_prompts_consult_only(project):
    ro = {"memoryBackend": "readonly"}
    for build in (build_triage_memory_instructions, build_execution_memory_instructions):
        text = build(project, ro).lower()
        assert "## project memory" in text and "consult" in text
        for word in ("write", "update", "append", ".fusion/memory.md"):
            assert word not in text


def test_backends_without_a_file_get_no_path(project):
    unmirrored = {"memoryBackend": "sqlite", "memoryBackendConfig": {"mirror": False}}
    text = build_execution_memory_instructions(project, unmirrored)
    assert "## Project Memory" in text and ".fusion/memory.md" not in text
    ctx = resolve_memory_instruction_context({"memoryBackendType": "sqlite", "memoryBackendConfig": {"mirror": False}})
    assert ctx.backend_type == "sqlite" and ctx.instruction_path_hint is None and ctx.writable


@pytest.mark.parametrize("backend", ["file", "FILE", "pinecone", "hybrid", "sqlite", "qmd"])
def test_backends_whose_readers_see_the_file_get_the_file_instructions(project, backend):
    """As Fusion resolves them: an unknown id falls back to file; hybrid, qmd and a mirrored sqlite keep it."""
    text = build_execution_memory_instructions(project, {"memoryBackend": backend})
    assert text == build_execution_memory_instructions(project, {"memoryBackend": "file"})
    assert "update `.fusion/memory.md`" in text
    assert "no longer accurate" in text and "Do not record" in text


def test_layered_project_instructions_name_the_long_term_file(layered_project):
    for build in (build_triage_memory_instructions, build_execution_memory_instructions):
        text = build(layered_project)
        assert "`.fusion/memory/MEMORY.md`" in text and "`.fusion/memory.md`" not in text


def test_settings_changes_keep_the_extraction_schedule_in_step(project):
    store = ProjectStore(project)
    schedules = project / ".fusion/memdesk/automations.json"
    store.update_settings({"insightExtractionEnabled": True, "insightExtractionSchedule": "15 4 * * *"})
    data = json.loads(schedules.read_text())
    text = json.dumps(data)
    assert "15 4 * * *" in text and "Memory Insight Extraction" in text
    store.update_settings({"insightExtractionEnabled": False})
    assert "Memory Insight Extraction" not in schedules.read_text()
