"""core.review: merging accepted insights, applying and rejecting a reviewed prune."""

from __future__ import annotations

import json
from pathlib import Path

from core import fileio, history
from core.insights import (
    MEMORY_AUDIT_PATH,
    MEMORY_AUDIT_STATE_PATH,
    MEMORY_INSIGHTS_PATH,
    MEMORY_WORKING_PATH,
    MemoryInsight,
    parse_insight_extraction_response,
    parse_insights_markdown,
)
from core.review import accept_insights, apply_reviewed_prune, reject_prune

REPLY = ".fusion/extraction-reply.json"


def bullets(root: Path) -> int:
    return sum(len(s.bullets) for s in parse_insights_markdown((root / MEMORY_INSIGHTS_PATH).read_text()))


def reply(root: Path):
    return parse_insight_extraction_response((root / REPLY).read_text())


def test_accept_insights_adds_new_and_skips_present(sample_project: Path) -> None:
    result = reply(sample_project)
    before = bullets(sample_project)
    outcome = accept_insights(sample_project, result.insights)
    assert outcome.added_count == 5
    assert len(outcome.skipped) == 1 and "database clock" in outcome.skipped[0].content
    assert outcome.written
    assert bullets(sample_project) == before + 5
    versions = history.list_versions(sample_project, MEMORY_INSIGHTS_PATH)
    assert versions and versions[0].source == "insights-merge"


def test_accept_nothing_new_leaves_the_file_untouched(sample_project: Path) -> None:
    path = sample_project / MEMORY_INSIGHTS_PATH
    before = path.read_bytes()
    present = MemoryInsight("pattern", "Elect a single scheduler leader with a Postgres advisory lock rather than "
                                       "coordinating in application code")
    outcome = accept_insights(sample_project, [present])
    assert (outcome.added_count, outcome.written) == (0, False)
    assert path.read_bytes() == before


def test_accept_creates_the_insights_file_when_absent(project: Path) -> None:
    outcome = accept_insights(project, [MemoryInsight("pitfall", "Never trust the clock", "TP-1")])
    assert outcome.added_count == 1
    text = (project / MEMORY_INSIGHTS_PATH).read_text()
    assert "- Never trust the clock (source: TP-1)" in text
    assert text.startswith("# Memory Insights")


def test_apply_reviewed_prune_writes_keeps_history_and_records_the_audit(sample_project: Path) -> None:
    memory = sample_project / MEMORY_WORKING_PATH
    old = memory.read_text()
    candidate = reply(sample_project).pruned_memory
    reviewed = apply_reviewed_prune(sample_project, candidate, fileio.content_hash(old))
    assert reviewed.outcome.applied and reviewed.recorded
    new = memory.read_text()
    assert new.endswith("\n") and not new.endswith("\n\n")
    assert new.strip() == candidate.strip()
    assert reviewed.outcome.new_size == len(new)
    versions = history.list_versions(sample_project, MEMORY_WORKING_PATH)
    assert versions[0].source == "prune"
    assert history.get_version(sample_project, versions[0].id)[1] == old
    state = json.loads((sample_project / MEMORY_AUDIT_STATE_PATH).read_text())
    assert state["pruning"]["applied"] is True
    assert state["pruning"]["newSize"] == len(new)
    assert "Pruning applied" in (sample_project / MEMORY_AUDIT_PATH).read_text()


def test_apply_refuses_when_the_memory_changed_since_review(sample_project: Path) -> None:
    memory = sample_project / MEMORY_WORKING_PATH
    reviewed_hash = fileio.content_hash(memory.read_text())
    memory.write_text(memory.read_text() + "\n\n<!-- 2026-11-29 -->\nappended by an agent\n")
    changed = memory.read_bytes()
    reviewed = apply_reviewed_prune(sample_project, reply(sample_project).pruned_memory, reviewed_hash)
    assert not reviewed.outcome.applied and not reviewed.recorded
    assert "CONFLICT" in reviewed.outcome.reason
    assert memory.read_bytes() == changed
    assert not (sample_project / MEMORY_AUDIT_STATE_PATH).exists()


def test_apply_invalid_candidate_changes_nothing(sample_project: Path) -> None:
    memory = sample_project / MEMORY_WORKING_PATH
    before = memory.read_bytes()
    reviewed = apply_reviewed_prune(sample_project, "# Project Memory\n\n## Context\n", None)
    assert not reviewed.outcome.applied
    assert "Missing required sections" in reviewed.outcome.reason
    assert memory.read_bytes() == before


def test_reject_records_the_outcome_and_keeps_memory(sample_project: Path) -> None:
    memory = sample_project / MEMORY_WORKING_PATH
    before = memory.read_bytes()
    reviewed = reject_prune(sample_project, "drops the TP-388 notes we still need")
    assert memory.read_bytes() == before
    assert reviewed.recorded and not reviewed.outcome.applied
    state = json.loads((sample_project / MEMORY_AUDIT_STATE_PATH).read_text())
    assert state["pruning"]["reason"] == "Rejected by the operator: drops the TP-388 notes we still need"
    assert state["pruning"]["originalSize"] == len(before.decode())
    check = next(c for c in reviewed.report.checks if c.id == "pruning-applied")
    assert not check.passed
    assert "Rejected by the operator" in (sample_project / MEMORY_AUDIT_PATH).read_text()


def test_reject_keeps_the_recorded_extraction(sample_project: Path) -> None:
    state_path = sample_project / MEMORY_AUDIT_STATE_PATH
    extraction = {"runAt": "2026-11-28T02:00:00.000Z", "success": True, "insightCount": 3, "duplicateCount": 1,
                  "skippedCount": 0, "summary": "Three new insights from the week"}
    state_path.write_text(json.dumps({"extraction": extraction, "updatedAt": "2026-11-28T02:00:01.000Z"}))
    reject_prune(sample_project)
    state = json.loads(state_path.read_text())
    assert state["extraction"] == extraction
    assert state["pruning"]["reason"] == "Rejected by the operator"
    assert state["updatedAt"] != "2026-11-28T02:00:01.000Z"
