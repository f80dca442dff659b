"""Migrate removes the legacy ``.fusion/memory.md`` through the write pipeline (issue 19, item 1): ``pipeline.remove``.

The removal passes the stages every write does: the screen sees it (as a replace by nothing), a screen that
refuses it leaves the legacy file byte for byte, the file's text is kept in history ("before migrate") with
who removed it, and only the name goes (a link inside the project: the link, never its target).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.project.migrate import apply_migration, plan_migration
from core.project.model import Project
from core.storage import pipeline
from core.storage.history import versions as history

LEGACY = ".fusion/memory.md"
LONG = ".fusion/memory/MEMORY.md"
TEXT = "# Project Memory\n\n## Pitfalls\n\n- a legacy pitfall\n"


def test_the_removal_is_screened_and_recorded(layered_project: Path):
    (layered_project / LEGACY).write_text(TEXT, encoding="utf-8")
    project = Project(layered_project)
    seen: list[tuple[str, str, str, str, str]] = []

    def screen(request: pipeline.WriteRequest) -> pipeline.ScreenVerdict:
        seen.append((request.path, request.op, request.text, request.source, request.current or ""))
        return pipeline.PASS_ALL(request)

    project.screen = screen
    project.default_author = "operator:ana"  # as the app sets it
    apply_migration(project, plan_migration(project))  # type: ignore[arg-type]
    assert (LEGACY, "replace", "", "before migrate", TEXT) in seen
    assert not (layered_project / LEGACY).exists()
    assert "- a legacy pitfall" in (layered_project / LONG).read_text(encoding="utf-8")
    kept = [v for v in history.list_versions(layered_project, LEGACY) if v.source == "before migrate"]
    assert len(kept) == 1 and kept[0].author == "operator:ana"
    found = history.get_version(layered_project, kept[0].id)
    assert found is not None and found[1] == TEXT


def test_a_screen_refusing_the_removal_keeps_the_legacy_file(layered_project: Path):
    legacy = layered_project / LEGACY
    legacy.write_text(TEXT, encoding="utf-8")
    before = legacy.stat()
    project = Project(layered_project)
    project.screen = lambda r: (pipeline.ScreenVerdict("refuse", reason="not now") if r.path == LEGACY
                                else pipeline.PASS_ALL(r))
    with pytest.raises(pipeline.WriteRefused) as info:
        apply_migration(project, plan_migration(project))  # type: ignore[arg-type]
    assert LEGACY in str(info.value) and "not now" in str(info.value) and "\n" not in str(info.value)
    assert legacy.read_text(encoding="utf-8") == TEXT and legacy.stat().st_mtime_ns == before.st_mtime_ns


def test_a_legacy_link_inside_the_project_loses_only_its_name(layered_project: Path):
    notes = layered_project / "notes"
    notes.mkdir()
    (notes / "legacy.md").write_text(TEXT, encoding="utf-8")
    (layered_project / LEGACY).symlink_to(Path("..") / "notes" / "legacy.md")
    project = Project(layered_project)
    apply_migration(project, plan_migration(project))  # type: ignore[arg-type]
    assert not (layered_project / LEGACY).is_symlink() and not (layered_project / LEGACY).exists()
    assert (notes / "legacy.md").read_text(encoding="utf-8") == TEXT


def test_an_agents_line_appended_while_the_removal_is_recorded_is_never_lost(layered_project: Path,
                                                                          monkeypatch: pytest.MonkeyPatch):
    """An agent appends to the legacy file with ``>>`` (no lock) while history records its text (a FULL commit,
    milliseconds): the removal stops (CONFLICT) and the legacy file keeps the agent's line."""
    import subprocess

    legacy = layered_project / LEGACY
    legacy.write_text(TEXT, encoding="utf-8")
    real = history.record_version

    def and_an_agent_appends(*args, **kwargs):
        found = real(*args, **kwargs)
        if "before migrate" not in args:  # the removal's record only
            return found
        subprocess.run(["sh", "-c", f"printf '\\n- an agent line during migrate\\n' >> {LEGACY}"], cwd=layered_project,
                       check=True)
        return found

    monkeypatch.setattr(history, "record_version", and_an_agent_appends)
    project = Project(layered_project)
    with pytest.raises(Exception) as info:
        apply_migration(project, plan_migration(project))  # type: ignore[arg-type]
    assert "changed while it was being removed" in str(info.value)
    assert legacy.read_text(encoding="utf-8") == TEXT + "\n- an agent line during migrate\n"
