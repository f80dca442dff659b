"""The memory audit: checks over the memory files and the last run, its markdown, and its state file.

A port of Fusion's ``generateMemoryAudit`` / ``renderMemoryAuditMarkdown`` (same check ids, names,
details, health rules and markdown). Fixes over Fusion (memdesk design, section 3): the
``pruning-applied`` check passes when no prune was needed (the AI offered no candidate), so a run is
not called unhealthy for that, nor while a prune candidate waits for the operator's review
(details "Prune awaiting review"); only a rejected, stale or failed prune candidate fails it. Files
are read whole and sizes are character counts.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.insights._text import (
    JS_WHITESPACE,
    format_time_ago,
    iso_timestamp,
    js_trim,
    parse_timestamp,
    to_utc,
)
from core.insights.files import document_path, read_memory_audit, read_project_file, write_generated_file
from core.insights.model import (
    CATEGORY_SECTIONS,
    MEMORY_AUDIT_PATH,
    MEMORY_AUDIT_STATE_PATH,
    MEMORY_INSIGHTS_PATH,
    MEMORY_WORKING_PATH,
    InsightsMemoryStatus,
    MemoryAuditCheck,
    MemoryAuditReport,
    MemoryAuditState,
    MemoryExtractionMetadata,
    PruneOutcome,
    WorkingMemoryStatus,
)
from core.insights.prune import REQUIRED_MEMORY_SECTIONS
from core.storage import fileio

__all__ = [
    "PRUNE_AWAITING_REVIEW_REASON",
    "generate_memory_audit",
    "read_memory_audit",
    "read_memory_audit_state",
    "record_audit",
    "render_memory_audit_markdown",
    "write_memory_audit",
    "write_memory_audit_state",
]

log = logging.getLogger(__name__)

# Fusion's /^##\s+.+$/gm and /## Last Updated:\s*(.+)$/m with JavaScript's \s, "." and "^".
_JS_WS = "[" + re.escape(JS_WHITESPACE) + "]"
_SECTION_RE = re.compile("(?:(?<=[\n\r\u2028\u2029])|\\A)##" + _JS_WS + "+[^\n\r\u2028\u2029]+")
_LAST_UPDATED_RE = re.compile("## Last Updated:" + _JS_WS + "*([^\n\r\u2028\u2029]+)")
_WEEK_MS = 7 * 24 * 60 * 60 * 1000
NEVER_RAN = "No extraction runs recorded"
EXTRACTION_OFF = "Insight extraction is off for this project; no run is expected"
_CRITICAL_CHECKS = ("working-memory-exists", "insights-memory-exists", "recent-extraction")
_HEALTH_EMOJI = {"healthy": "✅", "warning": "⚠️", "issues": "❌"}
#: How ``core.automation.extraction`` records a prune stored for review (followed by `` (proposal <id>)``).
PRUNE_AWAITING_REVIEW_REASON = "Prune candidate awaiting review"


def _count_sections(content: str) -> int:
    return sum(1 for _ in _SECTION_RE.finditer(content))


def _count_in_section(content: str, header: str) -> int:
    index = content.find(header)
    if index == -1:
        return 0
    after = index + len(header)
    end = content.find("\n## ", after)
    body = content[after:] if end == -1 else content[after:end]
    return sum(1 for line in body.split("\n") if js_trim(line).startswith("- "))


def _exists(root: Path | str, relpath: str) -> bool:
    try:
        return read_project_file(root, relpath) is not None
    except Exception:  # unreadable: exists; the read below reports why
        return True


def _check(checks: list[MemoryAuditCheck], check_id: str, name: str, passed: bool, details: str) -> None:
    checks.append(MemoryAuditCheck(check_id, name, passed, details))


def _working_memory_checks(root: Path | str, checks: list[MemoryAuditCheck]) -> WorkingMemoryStatus:
    exists = _exists(root, MEMORY_WORKING_PATH)
    name = "Working memory file exists"
    content, size, sections = "", 0, 0
    if exists:
        try:
            content = read_project_file(root, MEMORY_WORKING_PATH) or ""
            size, sections = len(content), _count_sections(content)
            _check(checks, "working-memory-exists", name, True,
                   f"File exists with {size} characters and {sections} sections")
        except Exception as exc:  # an unreadable file is a failed check, never an exception
            _check(checks, "working-memory-exists", name, False, f"File exists but could not be read: {exc}")
    else:
        _check(checks, "working-memory-exists", name, False, f"File {document_path(root, MEMORY_WORKING_PATH)} does not exist")
    if exists:
        _check(checks, "working-memory-content", "Working memory has meaningful content",
               size > 0 and sections >= 2,
               f"Has {size} characters with {sections} sections" if size > 0 else "Working memory is empty")
    if content:
        found = [s for s in REQUIRED_MEMORY_SECTIONS if f"## {s}" in content]
        missing = [s for s in REQUIRED_MEMORY_SECTIONS if s not in found]
        _check(checks, "working-memory-sections", "Working memory has required sections", len(found) >= 2,
               f"Found sections: {', '.join(found)}" if len(found) >= 2 else f"Missing sections: {', '.join(missing)}")
    return WorkingMemoryStatus(exists, size, sections)


def _insights_memory_checks(root: Path | str, checks: list[MemoryAuditCheck]) -> InsightsMemoryStatus:
    exists = _exists(root, MEMORY_INSIGHTS_PATH)
    name = "Insights memory file exists"
    counts = dict.fromkeys(CATEGORY_SECTIONS, 0)
    size, last_updated = 0, None
    if exists:
        try:
            content = read_project_file(root, MEMORY_INSIGHTS_PATH) or ""
            size = len(content)
            for category, header in CATEGORY_SECTIONS.items():
                counts[category] = _count_in_section(content, header)
            match = _LAST_UPDATED_RE.search(content)
            if match:
                last_updated = js_trim(match.group(1))
            _check(checks, "insights-memory-exists", name, True, f"File exists with {size} characters")
        except Exception as exc:  # an unreadable file is a failed check, never an exception
            _check(checks, "insights-memory-exists", name, False, f"File exists but could not be read: {exc}")
    else:
        _check(checks, "insights-memory-exists", name, False, f"File {document_path(root, MEMORY_INSIGHTS_PATH)} does not exist yet")
    total = sum(counts.values())
    if exists:
        details = (
            f"Contains {total} insights across categories: patterns={counts['pattern']}, "
            f"principles={counts['principle']}, conventions={counts['convention']}, "
            f"pitfalls={counts['pitfall']}, context={counts['context']}"
            if total > 0
            else "No insights extracted yet"
        )
        _check(checks, "insights-memory-content", "Insights memory has content", total > 0, details)
    return InsightsMemoryStatus(exists, size, total, counts, last_updated)


def _extraction_checks(
    extraction: MemoryExtractionMetadata | None, now: datetime, checks: list[MemoryAuditCheck], enabled: bool = True
) -> None:
    if extraction is None:
        # Fix: Fusion called every project that never ran an extraction unhealthy ("✗ Issues"), even
        # with extraction off. Off: nothing is expected, the check passes. On but never run: a warning.
        if not enabled:
            _check(checks, "recent-extraction", "Recent extraction activity", True, EXTRACTION_OFF)
        else:
            _check(checks, "recent-extraction", "Recent extraction activity", False, NEVER_RAN)
        return
    run_at = parse_timestamp(extraction.run_at)
    recent = run_at is not None and (now - run_at).total_seconds() * 1000 < _WEEK_MS
    # Fusion printed "NaN days ago" for an unreadable time; say so plainly instead.
    ago = format_time_ago(run_at, now) if run_at is not None else "at an unknown time"
    _check(checks, "recent-extraction", "Recent extraction activity", extraction.success and recent,
           f"Last successful extraction {ago} ({extraction.insight_count} insights, "
           f"{extraction.duplicate_count} duplicates skipped)"
           if extraction.success
           else f"Last extraction failed: {extraction.error or 'Unknown error'}")
    summary = extraction.summary
    _check(checks, "extraction-summary", "Extraction produces meaningful summaries",
           extraction.success and len(summary) > 10,
           f'Summary: "{summary[:100]}{"..." if len(summary) > 100 else ""}"'
           if extraction.success
           else "No meaningful summary available")


def _health(checks: list[MemoryAuditCheck]) -> str:
    failed = [c for c in checks if not c.passed]
    if len(failed) >= 3:
        return "issues"
    if failed:  # an extraction that never ran is no failure of one: a warning, not "issues"
        return "issues" if any(c.id in _CRITICAL_CHECKS and c.details != NEVER_RAN for c in failed) else "warning"
    return "healthy"


def generate_memory_audit(
    root: Path | str,
    last_extraction: MemoryExtractionMetadata | Mapping[str, Any] | None = None,
    pruning_outcome: PruneOutcome | Mapping[str, Any] | None = None,
    now: datetime | None = None,
    *,
    use_saved_state: bool = True,
    extraction_enabled: bool | None = None,
) -> MemoryAuditReport:
    """Audit the memory files and the last run (Fusion's checks and health); unreadable files fail checks.

    A record not given is taken from ``.fusion/memory-audit-state.json`` unless ``use_saved_state``
    is False (as later Fusion versions do), so a plain audit still reports the last run.
    """
    if use_saved_state and (last_extraction is None or pruning_outcome is None):
        saved = MemoryAuditState.from_json(read_memory_audit_state(root) or {})
        last_extraction = last_extraction if last_extraction is not None else saved.extraction
        pruning_outcome = pruning_outcome if pruning_outcome is not None else saved.pruning
    if isinstance(last_extraction, Mapping):
        last_extraction = MemoryExtractionMetadata.from_json(last_extraction)
    if isinstance(pruning_outcome, Mapping):
        pruning_outcome = PruneOutcome.from_json(pruning_outcome)
    moment = to_utc(now) if now is not None else datetime.now(UTC)
    checks: list[MemoryAuditCheck] = []
    working = _working_memory_checks(root, checks)
    insights = _insights_memory_checks(root, checks)
    if extraction_enabled is None and last_extraction is None:
        from core.insights.files import extraction_enabled as read_enabled

        extraction_enabled = read_enabled(root)
    _extraction_checks(last_extraction, moment, checks, extraction_enabled is not False)
    if pruning_outcome is not None:
        # Fix: "no prune needed" passes; Fusion failed it and so flagged healthy runs. A prune that
        # waits for review has not failed either.
        awaiting = not pruning_outcome.applied and pruning_outcome.reason.startswith(PRUNE_AWAITING_REVIEW_REASON)
        passed = pruning_outcome.applied or pruning_outcome.not_needed or awaiting
        if awaiting:
            details = "Prune awaiting review" + pruning_outcome.reason.removeprefix(PRUNE_AWAITING_REVIEW_REASON)
        elif pruning_outcome.applied:
            delta = pruning_outcome.size_delta
            details = (f"Pruning applied: {pruning_outcome.original_size} → {pruning_outcome.new_size} chars "
                       f"({'+' if delta >= 0 else ''}{delta} chars)")
        else:
            details = f"Pruning skipped: {pruning_outcome.reason}"
        _check(checks, "pruning-applied", "Memory pruning outcome", passed, details)
    extraction = last_extraction or MemoryExtractionMetadata("", False, 0, 0, 0, "No extraction runs recorded")
    pruning = pruning_outcome or PruneOutcome(False, "No pruning run recorded", 0, working.size, working.size)
    return MemoryAuditReport(
        iso_timestamp(moment), working, insights, extraction, pruning, tuple(checks), _health(checks)
    )


def render_memory_audit_markdown(report: MemoryAuditReport) -> str:
    """Render an audit report as Fusion's markdown (``.fusion/memory-audit.md``)."""
    wm, im, ex, pr = report.working_memory, report.insights_memory, report.extraction, report.pruning
    lines = [
        "# Memory Audit Report",
        "",
        f"**Generated:** {report.generated_at}",
        f"**Health:** {_HEALTH_EMOJI.get(report.health, '')} {report.health}",
        "",
        "## Working Memory",
        f"- **Exists:** {'✓' if wm.exists else '✗'}",
        f"- **Size:** {wm.size:,} characters",
        f"- **Sections:** {wm.section_count}",
        "",
        "## Insights Memory",
        f"- **Exists:** {'✓' if im.exists else '✗'}",
        f"- **Size:** {im.size:,} characters",
        f"- **Total Insights:** {im.insight_count}",
        "- **By Category:**",
    ]
    lines += [f"  - {category}: {count}" for category, count in im.categories.items()]
    if im.last_updated:
        lines.append(f"- **Last Updated:** {im.last_updated}")
    lines += ["", "## Last Extraction"]
    if ex.run_at:
        lines += [
            f"- **Run At:** {ex.run_at}",
            f"- **Success:** {'✓' if ex.success else '✗'}",
            f"- **Insights Extracted:** {ex.insight_count}",
            f"- **Duplicates Skipped:** {ex.duplicate_count}",
            f"- **Skipped:** {ex.skipped_count}",
            f"- **Summary:** {ex.summary}",
        ]
        if ex.error:
            lines.append(f"- **Error:** {ex.error}")
    else:
        lines.append("- No extraction runs recorded")
    lines += ["", "## Memory Pruning", f"- **Applied:** {'✓ Yes' if pr.applied else '✗ No'}",
              f"- **Reason:** {pr.reason}"]
    if pr.applied:
        lines.append(f"- **Size Change:** {pr.original_size} → {pr.new_size} characters")
        lines.append(f"- **Delta:** {'+' if pr.size_delta >= 0 else ''}{pr.size_delta} characters")
    lines += ["", "## Audit Checks"]
    for check in report.checks:
        lines += [f"### {'✓' if check.passed else '✗'} {check.name}", f"**{check.details}**", ""]
    return "\n".join(lines)


def write_memory_audit(root: Path | str, markdown: str) -> fileio.ReplaceResult:
    """Write the audit report to ``.fusion/memory-audit.md`` (creating ``.fusion/``)."""
    return write_generated_file(root, MEMORY_AUDIT_PATH, markdown, source="audit")


def read_memory_audit_state(root: Path | str) -> dict[str, Any] | None:
    """Return the state file's JSON object (``MemoryAuditState.from_json`` types it), or ``None``.

    ``None`` when the file is absent or unreadable (logged); never raises.
    """
    try:
        text = read_project_file(root, MEMORY_AUDIT_STATE_PATH)
        if text is None:
            return None
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"expected a JSON object, found {type(data).__name__}")
        return data
    except Exception as exc:  # a broken state file only loses the last-run summary
        log.warning("ignoring %s: %s", MEMORY_AUDIT_STATE_PATH, exc)
        return None


def write_memory_audit_state(
    root: Path | str, state: MemoryAuditState | dict[str, Any]
) -> fileio.ReplaceResult:
    """Write ``{"extraction", "pruning", "updatedAt"}`` (camelCase, indent 2) to the audit state file."""
    data = state.to_json() if isinstance(state, MemoryAuditState) else dict(state)
    data.setdefault("updatedAt", iso_timestamp())
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    return write_generated_file(root, MEMORY_AUDIT_STATE_PATH, text, source="audit")


def record_audit(root: Path | str, *, extraction: MemoryExtractionMetadata | None = None,
                 pruning: PruneOutcome | None = None, now: datetime | None = None) -> None:
    """Write the audit state and markdown, replacing the given records and keeping the others; never raises.

    Only the audit files are written: the insights and the working memory are left as they are.
    """
    try:
        raw = read_memory_audit_state(root)
        previous = MemoryAuditState.from_json(raw) if raw else None
        extraction = extraction or (previous.extraction if previous else None)
        pruning = pruning or (previous.pruning if previous else None)
        report = generate_memory_audit(root, extraction, pruning, now=now)
        write_memory_audit_state(root, MemoryAuditState(extraction, pruning, report.generated_at))
        write_memory_audit(root, render_memory_audit_markdown(report))
    except Exception as exc:  # the audit is a record; failing to write it must not undo the operation
        log.warning("could not write the memory audit: %s", exc)
