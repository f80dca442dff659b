"""core.insights audit and run processing: checks, health, markdown, state file, never-raising runs."""

from __future__ import annotations

import json
import logging
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.insights import (
    MEMORY_AUDIT_PATH,
    MEMORY_AUDIT_STATE_PATH,
    MEMORY_INSIGHTS_PATH,
    MEMORY_WORKING_PATH,
    MemoryAuditState,
    MemoryExtractionMetadata,
    ProcessRunInput,
    PruneOutcome,
    generate_memory_audit,
    process_and_audit_insight_extraction,
    process_insight_extraction_run,
    read_insights_memory,
    read_memory_audit,
    read_memory_audit_state,
    render_memory_audit_markdown,
    write_memory_audit_state,
)
from core.insights._text import format_time_ago
from core.storage import fileio
from core.storage.history.versions import list_versions
from tests.conftest import REAL_MEMORY

NOW = datetime(2024, 6, 15, 12, 0, tzinfo=UTC)
RUN_AT = "2024-06-15T11:30:00.000Z"
MEMORY = "# Project Memory\n\n## Architecture\n- a\n\n## Conventions\n- b\n\n## Pitfalls\n- c\n"
REPLY = json.dumps({
    "summary": "Extracted two durable insights",
    "insights": [
        {"category": "pattern", "content": "Atomic writes", "source": "FN-1"},
        {"category": "pitfall", "content": "Never rewrite non-UTF-8 files"},
        {"category": "pattern", "content": "atomic  WRITES"},
    ],
})

GOLDEN = """# Memory Audit Report

**Generated:** 2024-06-15T12:00:00.000Z
**Health:** ✅ healthy

## Working Memory
- **Exists:** ✓
- **Size:** 75 characters
- **Sections:** 3

## Insights Memory
- **Exists:** ✓
- **Size:** 363 characters
- **Total Insights:** 2
- **By Category:**
  - pattern: 1
  - principle: 0
  - convention: 0
  - pitfall: 1
  - context: 0
- **Last Updated:** 2024-06-15

## Last Extraction
- **Run At:** 2024-06-15T11:30:00.000Z
- **Success:** ✓
- **Insights Extracted:** 2
- **Duplicates Skipped:** 0
- **Skipped:** 1
- **Summary:** Extracted two durable insights

## Memory Pruning
- **Applied:** ✗ No
- **Reason:** No prune candidate offered

## Audit Checks
### ✓ Working memory file exists
**File exists with 75 characters and 3 sections**

### ✓ Working memory has meaningful content
**Has 75 characters with 3 sections**

### ✓ Working memory has required sections
**Found sections: Architecture, Conventions, Pitfalls**

### ✓ Insights memory file exists
**File exists with 363 characters**

### ✓ Insights memory has content
**Contains 2 insights across categories: patterns=1, principles=0, conventions=0, pitfalls=1, context=0**

### ✓ Recent extraction activity
**Last successful extraction 30 minutes ago (2 insights, 0 duplicates skipped)**

### ✓ Extraction produces meaningful summaries
**Summary: "Extracted two durable insights"**

### ✓ Memory pruning outcome
**Pruning skipped: No prune candidate offered**
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / ".fusion").mkdir(parents=True)
    (project / MEMORY_WORKING_PATH).write_text(MEMORY, encoding="utf-8")
    return project


def checks_of(report) -> dict[str, tuple[bool, str]]:
    return {c.id: (c.passed, c.details) for c in report.checks}


def run(root: Path, reply: str = REPLY, ok: bool = True, error: str | None = None):
    return process_and_audit_insight_extraction(root, ProcessRunInput(reply, ok, RUN_AT, error), now=NOW)


# ── golden run ───────────────────────────────────────────────────────────────────────────────


def test_golden_run_markdown_and_state(root: Path) -> None:
    report = run(root)
    assert report.health == "healthy"
    assert (root / MEMORY_AUDIT_PATH).read_text(encoding="utf-8") == GOLDEN
    assert render_memory_audit_markdown(report) == GOLDEN
    assert read_memory_audit(root) == GOLDEN
    state_text = (root / MEMORY_AUDIT_STATE_PATH).read_text(encoding="utf-8")
    assert state_text.startswith('{\n  "extraction": {\n    "runAt": "2024-06-15T11:30:00.000Z",')
    state = json.loads(state_text)
    assert state == {
        "extraction": {"runAt": RUN_AT, "success": True, "insightCount": 2, "duplicateCount": 0,
                       "skippedCount": 1, "summary": "Extracted two durable insights"},
        "pruning": {"applied": False, "reason": "No prune candidate offered", "sizeDelta": 0,
                    "originalSize": 75, "newSize": 75},
        "updatedAt": "2024-06-15T12:00:00.000Z",
    }
    assert read_memory_audit_state(root) == state
    assert (root / MEMORY_WORKING_PATH).read_text(encoding="utf-8") == MEMORY


def test_second_identical_run_does_not_rewrite_insights(root: Path) -> None:
    run(root)
    path = root / MEMORY_INSIGHTS_PATH
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    result = process_insight_extraction_run(root, ProcessRunInput(REPLY, True, RUN_AT), now=NOW + timedelta(days=3))
    assert not result.insights_written
    assert (result.new_insight_count, result.duplicate_count) == (0, 3)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    assert list_versions(root, MEMORY_INSIGHTS_PATH) == []
    report = process_and_audit_insight_extraction(root, ProcessRunInput(REPLY, True, RUN_AT), now=NOW)
    assert report.extraction.skipped_count == 3 and report.extraction.duplicate_count == 3


def test_run_adding_nothing_creates_no_insights_file(root: Path) -> None:
    report = run(root, json.dumps({"summary": "No new insights found", "insights": []}))
    assert read_insights_memory(root) is None
    assert checks_of(report)["insights-memory-exists"] == (False, "File .fusion/memory-insights.md does not exist yet")
    assert report.health == "issues"


# ── pruning inside a run ─────────────────────────────────────────────────────────────────────


def test_run_applies_a_valid_prune(root: Path) -> None:
    pruned = "## Architecture\n- a\n\n## Pitfalls\n- c"
    report = run(root, json.dumps({"summary": "Pruned the transient notes", "insights": [], "prunedMemory": pruned}))
    assert (root / MEMORY_WORKING_PATH).read_text(encoding="utf-8") == pruned + "\n"
    assert report.pruning.applied and report.pruning.new_size == len(pruned) + 1
    delta = len(pruned) + 1 - len(MEMORY)
    assert checks_of(report)["pruning-applied"] == (True, f"Pruning applied: 75 → {len(pruned) + 1} chars ({delta} chars)")
    markdown = render_memory_audit_markdown(report)
    assert "- **Applied:** ✓ Yes\n- **Reason:** Prune candidate validated and applied\n" in markdown
    assert f"- **Size Change:** 75 → {len(pruned) + 1} characters\n- **Delta:** {delta} characters\n" in markdown


def test_rejected_prune_fails_its_check_and_warns(root: Path) -> None:
    run(root)  # insights exist so only the prune check can fail
    report = run(root, json.dumps({"summary": "A summary long enough", "insights": [], "prunedMemory": "## Pitfalls"}))
    assert (root / MEMORY_WORKING_PATH).read_text(encoding="utf-8") == MEMORY
    passed, details = checks_of(report)["pruning-applied"]
    assert not passed
    assert details == "Pruning skipped: Missing required sections: only 1 of 3 required sections found (Pitfalls)"
    assert report.health == "warning"
    assert "**Health:** ⚠️ warning" in render_memory_audit_markdown(report)


def test_no_prune_needed_is_healthy(root: Path) -> None:
    report = run(root)
    assert checks_of(report)["pruning-applied"][0] is True
    assert report.health == "healthy"


def test_prune_awaiting_review_passes_and_stays_healthy(root: Path) -> None:
    run(root)  # insights exist, so only the prune check could fail
    extraction = MemoryExtractionMetadata(RUN_AT, True, 2, 0, 0, "Extracted two durable insights")
    waiting = PruneOutcome(False, "Prune candidate awaiting review (proposal 20240615T113000-abc123)", 0, 75, 75)
    report = generate_memory_audit(root, extraction, waiting, now=NOW)
    assert checks_of(report)["pruning-applied"] == (True, "Prune awaiting review (proposal 20240615T113000-abc123)")
    assert report.health == "healthy"
    markdown = render_memory_audit_markdown(report)
    assert "### ✓ Memory pruning outcome\n**Prune awaiting review (proposal 20240615T113000-abc123)**" in markdown
    assert "**Health:** ✅ healthy" in markdown
    stale = PruneOutcome(False, "Prune not applied: the working memory changed", 0, 75, 75)
    assert checks_of(generate_memory_audit(root, extraction, stale, now=NOW))["pruning-applied"][0] is False


# ── failed runs ──────────────────────────────────────────────────────────────────────────────


def test_parse_error_is_a_failed_extraction(root: Path) -> None:
    report = run(root, "I could not do it, sorry")
    assert not report.extraction.success
    assert report.extraction.error.startswith("Failed to parse insight extraction response as JSON: I could not")
    assert report.extraction.summary.startswith("Parse error: Failed to parse")
    assert checks_of(report)["recent-extraction"] == (False, f"Last extraction failed: {report.extraction.error}")
    assert checks_of(report)["extraction-summary"] == (False, "No meaningful summary available")
    assert read_insights_memory(root) is None
    assert (root / MEMORY_WORKING_PATH).read_text(encoding="utf-8") == MEMORY
    assert report.health == "issues"
    assert json.loads((root / MEMORY_AUDIT_STATE_PATH).read_text())["extraction"]["success"] is False


def test_failed_step_does_not_touch_files_even_with_a_prune(root: Path) -> None:
    reply = json.dumps({"summary": "s", "insights": [{"content": "x"}], "prunedMemory": "## Architecture\n## Pitfalls"})
    report = run(root, reply, ok=False, error="model timed out")
    assert report.extraction.summary == "model timed out"
    assert checks_of(report)["recent-extraction"] == (False, "Last extraction failed: model timed out")
    assert "- **Error:** model timed out" in render_memory_audit_markdown(report)
    assert read_insights_memory(root) is None
    assert (root / MEMORY_WORKING_PATH).read_text(encoding="utf-8") == MEMORY


def test_failed_step_without_message(root: Path) -> None:
    report = run(root, "", ok=False)
    assert report.extraction.summary == "Step did not produce output"
    assert checks_of(report)["recent-extraction"] == (False, "Last extraction failed: Unknown error")


@pytest.mark.parametrize("garbage", ["", "{", "```json", "\x00\xff", "[]", '{"insights": {"a": 1}}', "null"])
def test_garbage_never_raises(root: Path, garbage: str) -> None:
    report = run(root, garbage)
    assert (root / MEMORY_AUDIT_PATH).is_file() and (root / MEMORY_AUDIT_STATE_PATH).is_file()
    assert (root / MEMORY_WORKING_PATH).read_text(encoding="utf-8") == MEMORY
    assert report.health in {"warning", "issues"}


def test_non_string_reply_never_raises(root: Path) -> None:
    report = process_and_audit_insight_extraction(root, ProcessRunInput(None, True, RUN_AT), now=NOW)  # type: ignore[arg-type]
    assert not report.extraction.success
    assert report.extraction.summary.startswith("Processing failed: ")


def test_non_utf8_insights_file_is_a_failed_run_and_left_alone(root: Path) -> None:
    bad = b"# Memory Insights\n\n## Patterns\n- caf\xe9\n"
    (root / MEMORY_INSIGHTS_PATH).write_bytes(bad)
    report = run(root)
    assert (root / MEMORY_INSIGHTS_PATH).read_bytes() == bad
    assert not report.extraction.success
    assert report.extraction.summary.startswith("Processing failed: ")
    assert "not valid UTF-8" in report.extraction.error
    assert report.pruning.reason.startswith("Processing failed before pruning: ")
    passed, details = checks_of(report)["insights-memory-exists"]
    assert not passed and details.startswith("File exists but could not be read: ")
    assert json.loads((root / MEMORY_AUDIT_STATE_PATH).read_text())["extraction"]["success"] is False


def test_unwritable_outputs_are_logged_not_raised(root: Path, caplog: pytest.LogCaptureFixture) -> None:
    # Folders where the files should be: every write fails whatever the user's rights.
    for rel in (MEMORY_INSIGHTS_PATH, MEMORY_AUDIT_PATH, MEMORY_AUDIT_STATE_PATH):
        (root / rel).mkdir()
    with caplog.at_level(logging.WARNING):
        report = run(root)
    assert not report.extraction.success
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("audit state" in w for w in warnings) and any("audit report" in w for w in warnings)


def test_read_only_folder_simulated_never_raises(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests may run as root, whom chmod does not stop: fail the rename as a read-only folder would.
    def refuse(src: Path, dst: Path) -> None:
        raise PermissionError(13, "Permission denied", str(dst))

    monkeypatch.setattr(fileio, "_rename", refuse)
    report = run(root, json.dumps({"summary": "Pruned memory and one insight", "insights": [{"content": "x"}],
                                   "prunedMemory": "## Architecture\n## Pitfalls"}))
    assert not report.extraction.success and "Permission denied" in report.extraction.error
    assert read_insights_memory(root) is None
    assert (root / MEMORY_WORKING_PATH).read_text(encoding="utf-8") == MEMORY
    assert not (root / MEMORY_AUDIT_PATH).exists() and not (root / MEMORY_AUDIT_STATE_PATH).exists()


def test_insights_changed_meanwhile_is_not_overwritten(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import core.insights.processing as processing

    real_read = processing.read_insights_memory

    def read_then_someone_writes(project: Path) -> str | None:
        text = real_read(project)
        (project / MEMORY_INSIGHTS_PATH).write_text("# accepted in the GUI meanwhile\n", encoding="utf-8")
        return text

    monkeypatch.setattr(processing, "read_insights_memory", read_then_someone_writes)
    report = run(root)
    assert not report.extraction.success
    assert "changed on disk since it was loaded" in report.extraction.error
    assert (root / MEMORY_INSIGHTS_PATH).read_text(encoding="utf-8") == "# accepted in the GUI meanwhile\n"


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs a non-root POSIX user")
def test_read_only_folder_never_raises(root: Path) -> None:
    os.chmod(root / ".fusion", 0o500)
    try:
        report = run(root)
    finally:
        os.chmod(root / ".fusion", 0o700)
    assert not report.extraction.success


def test_root_that_is_a_file_never_raises(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "file.txt"
    not_a_folder.write_text("x")
    report = run(not_a_folder)
    assert report.health == "issues"


# ── generate_memory_audit ────────────────────────────────────────────────────────────────────


def test_empty_project_has_issues(tmp_path: Path) -> None:
    report = generate_memory_audit(tmp_path, now=NOW, extraction_enabled=True)
    assert [c.id for c in report.checks] == ["working-memory-exists", "insights-memory-exists", "recent-extraction"]
    assert checks_of(report)["working-memory-exists"] == (False, "File .fusion/memory.md does not exist")
    assert checks_of(report)["recent-extraction"] == (False, "No extraction runs recorded")
    assert report.health == "issues"
    assert report.pruning == PruneOutcome(False, "No pruning run recorded", 0, 0, 0)
    markdown = render_memory_audit_markdown(report)
    assert "## Last Extraction\n- No extraction runs recorded\n\n## Memory Pruning\n- **Applied:** ✗ No\n" in markdown
    assert "**Health:** ❌ issues" in markdown


def test_empty_working_memory(tmp_path: Path) -> None:
    (tmp_path / ".fusion").mkdir()
    (tmp_path / MEMORY_WORKING_PATH).write_text("")
    report = generate_memory_audit(tmp_path, now=NOW)
    assert checks_of(report)["working-memory-content"] == (False, "Working memory is empty")
    assert "working-memory-sections" not in checks_of(report)


def test_missing_sections_named(tmp_path: Path) -> None:
    (tmp_path / ".fusion").mkdir()
    (tmp_path / MEMORY_WORKING_PATH).write_text("## Architecture\n\n## Notes\n")
    checks = checks_of(generate_memory_audit(tmp_path, now=NOW))
    assert checks["working-memory-sections"] == (False, "Missing sections: Conventions, Pitfalls")
    assert checks["working-memory-content"] == (True, "Has 26 characters with 2 sections")


def test_unreadable_working_memory(tmp_path: Path) -> None:
    (tmp_path / ".fusion").mkdir()
    (tmp_path / MEMORY_WORKING_PATH).write_bytes(b"## Architecture\n\xff")
    checks = checks_of(generate_memory_audit(tmp_path, now=NOW))
    assert not checks["working-memory-exists"][0]
    assert checks["working-memory-exists"][1].startswith("File exists but could not be read: ")
    assert checks["working-memory-content"] == (False, "Working memory is empty")


@pytest.mark.parametrize(
    ("age", "text", "recent"),
    [
        (timedelta(seconds=30), "just now", True),
        (timedelta(minutes=1), "1 minute ago", True),
        (timedelta(hours=2, minutes=5), "2 hours ago", True),
        (timedelta(days=1, hours=1), "1 day ago", True),
        (timedelta(days=8), "8 days ago", False),
    ],
)
def test_recent_extraction_age(root: Path, age: timedelta, text: str, recent: bool) -> None:
    run_at = (NOW - age).isoformat()
    extraction = MemoryExtractionMetadata(run_at, True, 3, 1, 1, "short")
    report = generate_memory_audit(root, extraction, now=NOW)
    checks = checks_of(report)
    assert checks["recent-extraction"] == (recent, f"Last successful extraction {text} (3 insights, 1 duplicates skipped)")
    assert checks["extraction-summary"] == (False, 'Summary: "short"')
    assert "pruning-applied" not in checks


def test_long_summary_is_cut_at_100(root: Path) -> None:
    extraction = MemoryExtractionMetadata(RUN_AT, True, 0, 0, 0, "s" * 150)
    details = checks_of(generate_memory_audit(root, extraction, now=NOW))["extraction-summary"][1]
    assert details == 'Summary: "' + "s" * 100 + '..."'


def test_health_warning_when_only_non_critical_checks_fail(root: Path) -> None:
    run(root)
    extraction = MemoryExtractionMetadata(RUN_AT, True, 0, 0, 0, "tiny")
    assert generate_memory_audit(root, extraction, now=NOW).health == "warning"


def test_audit_uses_saved_state_unless_told_not_to(root: Path) -> None:
    run(root)
    report = generate_memory_audit(root, now=NOW)
    assert report.extraction.summary == "Extracted two durable insights"
    assert report.health == "healthy"
    bare = generate_memory_audit(root, now=NOW, use_saved_state=False)
    assert bare.extraction.summary == "No extraction runs recorded"


def test_time_ago_wording() -> None:
    assert format_time_ago(NOW, NOW + timedelta(minutes=59)) == "59 minutes ago"
    assert format_time_ago(NOW, NOW + timedelta(hours=1)) == "1 hour ago"
    assert format_time_ago(NOW, NOW - timedelta(days=1)) == "just now"


def test_audit_of_real_memory(real_project: Path) -> None:
    text = REAL_MEMORY.read_text(encoding="utf-8")
    report = generate_memory_audit(real_project, now=NOW)
    assert report.working_memory.size == len(text)
    assert report.working_memory.section_count == 44
    checks = checks_of(report)
    assert checks["working-memory-sections"] == (True, "Found sections: Architecture, Conventions, Pitfalls")
    assert f"- **Size:** {len(text):,} characters" in render_memory_audit_markdown(report)
    assert "," in f"{len(text):,}"


# ── state file ───────────────────────────────────────────────────────────────────────────────


def test_state_round_trip(tmp_path: Path) -> None:
    assert read_memory_audit_state(tmp_path) is None
    state = MemoryAuditState(MemoryExtractionMetadata(RUN_AT, False, 0, 0, 0, "s", "boom"),
                             PruneOutcome(True, "r", -5, 10, 5), "2024-06-15T12:00:00.000Z")
    write_memory_audit_state(tmp_path, state)
    loaded = read_memory_audit_state(tmp_path)
    assert loaded is not None and MemoryAuditState.from_json(loaded) == state
    assert loaded["extraction"]["error"] == "boom"
    write_memory_audit_state(tmp_path, {"pruning": {"applied": False}})
    assert "updatedAt" in (read_memory_audit_state(tmp_path) or {})


@pytest.mark.parametrize("content", [b"{not json", b"[1]", b"\xff\xfe"])
def test_broken_state_reads_as_none(tmp_path: Path, content: bytes) -> None:
    (tmp_path / ".fusion").mkdir()
    (tmp_path / MEMORY_AUDIT_STATE_PATH).write_bytes(content)
    assert read_memory_audit_state(tmp_path) is None
    assert generate_memory_audit(tmp_path, now=NOW).extraction.run_at == ""


def test_never_run_is_a_warning_and_with_extraction_off_passes(tmp_path: Path) -> None:
    """Issue 22: "✗ Issues" on any project that never ran an extraction, even with extraction off."""
    (tmp_path / ".fusion").mkdir()
    (tmp_path / ".fusion" / "memory.md").write_text("# Memory\n\n## Architecture\n- a\n\n## Conventions\n- b\n")
    (tmp_path / ".fusion" / "memory-insights.md").write_text("# Insights\n\n## Patterns\n- one\n")
    on = generate_memory_audit(tmp_path, now=NOW, extraction_enabled=True)
    assert checks_of(on)["recent-extraction"] == (False, "No extraction runs recorded")
    assert on.health == "warning"
    off = generate_memory_audit(tmp_path, now=NOW, extraction_enabled=False)
    assert checks_of(off)["recent-extraction"][0] is True
    assert "off" in checks_of(off)["recent-extraction"][1]
    assert off.health == "healthy"
    (tmp_path / ".fusion" / "config.json").write_text('{"insightExtractionEnabled": false}')
    assert generate_memory_audit(tmp_path, now=NOW).health == "healthy"  # read from the project's settings
