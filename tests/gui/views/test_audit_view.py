"""AuditView: health, checks with their details, file sizes, the last extraction and prune."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from PySide6.QtCore import Qt

from core.insights import (
    MEMORY_AUDIT_PATH,
    MEMORY_AUDIT_STATE_PATH,
    MEMORY_WORKING_PATH,
    PruneOutcome,
    read_working_memory,
)
from core.proposals import record_audit
from gui.session import ProjectSession
from gui.views.audit_view import AuditView

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
EXTRACTION = {"runAt": "2026-11-29T02:00:00.000Z", "success": True, "insightCount": 5, "duplicateCount": 1,
              "skippedCount": 0, "summary": "Five new insights about leases and the claim path"}


def make_view(qtbot, root: Path) -> AuditView:
    view = AuditView(ProjectSession(root), clock=lambda: NOW)
    qtbot.addWidget(view)
    view.resize(1280, 800)
    view.show()
    return view


def write_state(root: Path, **state) -> None:
    (root / MEMORY_AUDIT_STATE_PATH).write_text(json.dumps({**state, "updatedAt": "2026-11-29T02:00:01.000Z"}))


def test_sample_without_runs_reports_issues_with_every_check(qtbot, sample_project: Path) -> None:
    view = make_view(qtbot, sample_project)
    on = view.session.settings.insight_extraction_enabled
    assert ("Warning" if on else "Healthy") in view.health.text()  # never ran: no "Issues" (issue 22)
    rows = view.check_rows()
    names = [name for _ok, name, _details in rows]
    assert "Working memory file exists" in names and "Recent extraction activity" in names
    failed = {name: details for ok, name, details in rows if not ok}
    if on:
        assert failed["Recent extraction activity"] == "No extraction runs recorded"
    memory = (sample_project / MEMORY_WORKING_PATH).read_text()
    assert f"{len(memory):,} characters" in view.working_box.text()
    assert "21 (Patterns 4 · Principles 4 · Conventions 4 · Pitfalls 5 · Context 4)" in view.insights_box.text()
    assert "2026-11-20" in view.insights_box.text()
    assert "No extraction runs recorded" in view.extraction_box.text()
    assert "No prune recorded" in view.pruning_box.text()


def test_recent_successful_run_is_healthy_and_shown(qtbot, sample_project: Path) -> None:
    write_state(sample_project, extraction=EXTRACTION,
                pruning={"applied": True, "reason": "Prune candidate validated and applied", "sizeDelta": -1290,
                         "originalSize": 10624, "newSize": 9334})
    view = make_view(qtbot, sample_project)
    assert "Healthy" in view.health.text()
    assert all(ok for ok, _name, _details in view.check_rows())
    text = view.extraction_box.text()
    assert "2026-11-29T02:00:00.000Z" in text and "5 insights · 1 duplicates skipped" in text
    assert "Five new insights" in text
    assert "10,624 → 9,334 characters (-1,290)" in view.pruning_box.text()


def test_failed_extraction_shows_its_error(qtbot, sample_project: Path) -> None:
    write_state(sample_project, extraction={**EXTRACTION, "success": False, "error": "model timed out"})
    view = make_view(qtbot, sample_project)
    assert "model timed out" in view.extraction_box.text()
    assert any(not ok and "failed: model timed out" in details for ok, _n, details in view.check_rows())


def test_refreshes_when_the_session_says_the_audit_changed(qtbot, sample_project: Path) -> None:
    write_state(sample_project, extraction=EXTRACTION)
    view = make_view(qtbot, sample_project)
    assert "Healthy" in view.health.text()
    size = len(read_working_memory(sample_project))  # the operator rejected a prune: the memory is unchanged
    record_audit(sample_project, pruning=PruneOutcome(False, "Rejected by the operator: too aggressive", 0, size, size))
    view.session.auditChanged.emit()
    assert "Rejected by the operator: too aggressive" in view.pruning_box.text()
    assert "Warning" in view.health.text()


def test_refresh_button_and_save_report(qtbot, sample_project: Path) -> None:
    view = make_view(qtbot, sample_project)
    write_state(sample_project, extraction=EXTRACTION)
    qtbot.mouseClick(view.refresh_button, Qt.MouseButton.LeftButton)
    assert "Healthy" in view.health.text()
    qtbot.mouseClick(view.save_button, Qt.MouseButton.LeftButton)
    report = (sample_project / MEMORY_AUDIT_PATH).read_text()
    assert report.startswith("# Memory Audit Report") and "healthy" in report


def test_empty_project(qtbot, project: Path) -> None:
    view = make_view(qtbot, project)
    assert view.check_rows()
    assert "Issues" in view.health.text()


def test_screenshot(qtbot, sample_project: Path, screenshot) -> None:
    write_state(sample_project, extraction=EXTRACTION,
                pruning={"applied": True, "reason": "Prune candidate validated and applied", "sizeDelta": -1290,
                         "originalSize": 10624, "newSize": 9334})
    view = make_view(qtbot, sample_project)
    screenshot(view, "audit")


def test_a_layered_project_names_its_own_paths_and_never_ran_is_no_issue(qtbot, layered_project: Path) -> None:
    view = make_view(qtbot, layered_project)
    assert ".fusion/memory/MEMORY.md" in view.working_box.text()
    assert ".fusion/memory/memory-insights.md" in view.insights_box.text()
    assert ".fusion/memory.md" not in view.working_box.text() + view.insights_box.text()
    assert "Issues" not in view.health.text()
    assert view.save_report()
    assert view.status.text() == f"Saved {view.session.project.audit_path}."
