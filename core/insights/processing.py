"""Processing one extraction run: parse the reply, merge the insights, prune, then audit.

Ports Fusion's ``processInsightExtractionRun`` and ``processAndAuditInsightExtraction`` with these
fixes (memdesk design, section 3):

* duplicates are insights whose normalized text matches an existing bullet, not substrings;
* the insights file is written only when the merge added something: an identical file is not
  rewritten, and no file is created for a run that added nothing (so it stays ``None``);
* a failed step or an unreadable reply is a failed extraction carrying the error; the insights file
  is left untouched and no prune is applied;
* "no prune offered" is reported as not needed, not as a failure;
* ``process_and_audit_insight_extraction`` never raises; the state file and the audit markdown are
  always attempted and a failure to write them is logged.
"""

from __future__ import annotations

import logging
from datetime import datetime
from pathlib import Path

from core.insights._text import iso_timestamp, js_trim
from core.insights.audit import (
    generate_memory_audit,
    render_memory_audit_markdown,
    write_memory_audit,
    write_memory_audit_state,
)
from core.insights.extraction import parse_insight_extraction_response
from core.insights.files import read_insights_memory, read_working_memory, write_insights_memory
from core.insights.merge import count_duplicate_insights, merge_insights_detailed
from core.insights.model import (
    CATEGORY_SECTIONS,
    InsightExtractionResult,
    InsightParseError,
    InsightsMemoryStatus,
    MemoryAuditCheck,
    MemoryAuditReport,
    MemoryAuditState,
    MemoryExtractionMetadata,
    ProcessRunInput,
    ProcessRunResult,
    PruneOutcome,
    WorkingMemoryStatus,
)
from core.insights.prune import apply_memory_pruning
from core.storage.fileio import content_hash

__all__ = ["process_and_audit_insight_extraction", "process_insight_extraction_run"]

log = logging.getLogger(__name__)


def process_insight_extraction_run(
    root: Path | str, run_input: ProcessRunInput, *, now: datetime | None = None
) -> ProcessRunResult:
    """Parse the run's reply, merge its new insights and apply its prune candidate.

    Raises only when a file cannot be read or written (for instance a non-UTF-8 insights file);
    :func:`process_and_audit_insight_extraction` turns that into a failed run.
    """
    existing = read_insights_memory(root)
    error: str | None = None
    success = run_input.step_success
    if run_input.step_success and js_trim(run_input.raw_response):
        try:
            parsed = parse_insight_extraction_response(run_input.raw_response, now=now)
        except InsightParseError as exc:
            success, error = False, str(exc)
            parsed = InsightExtractionResult((), f"Parse error: {exc}", run_input.run_at)
    else:
        error = run_input.error
        parsed = InsightExtractionResult((), run_input.error or "Step did not produce output", run_input.run_at)

    duplicate_count = count_duplicate_insights(existing, parsed.insights)
    merged = merge_insights_detailed(existing or "", parsed.insights, today=now)
    written = False
    if merged.added:
        # Refuse (CONFLICT) rather than overwrite insights accepted elsewhere since the read above.
        write_insights_memory(root, merged.text, expected_hash=content_hash(existing or ""))
        written = True
    # A failed or unreadable run offers no prune candidate, so nothing is pruned.
    prune = apply_memory_pruning(root, parsed.pruned_memory if success else None)
    return ProcessRunResult(parsed, len(merged.added), duplicate_count, prune, success, error, written)


def _failed_run(root: Path | str, run_input: ProcessRunInput, exc: BaseException) -> tuple[
    MemoryExtractionMetadata, PruneOutcome
]:
    message = str(exc) or type(exc).__name__
    extraction = MemoryExtractionMetadata(run_input.run_at, False, 0, 0, 0, f"Processing failed: {message}", message)
    try:
        size = len(read_working_memory(root))
    except Exception:  # the size is only informative here
        size = 0
    prune = PruneOutcome(False, f"Processing failed before pruning: {message}", 0, size, size)
    return extraction, prune


def _fallback_report(extraction: MemoryExtractionMetadata, prune: PruneOutcome, exc: Exception,
                     now: datetime | None) -> MemoryAuditReport:
    check = MemoryAuditCheck("audit-generated", "Audit report generated", False, f"Audit failed: {exc}")
    return MemoryAuditReport(
        iso_timestamp(now),
        WorkingMemoryStatus(False, 0, 0),
        InsightsMemoryStatus(False, 0, 0, dict.fromkeys(CATEGORY_SECTIONS, 0)),
        extraction,
        prune,
        (check,),
        "issues",
    )


def process_and_audit_insight_extraction(
    root: Path | str, run_input: ProcessRunInput, *, now: datetime | None = None
) -> MemoryAuditReport:
    """Process a run, audit the result, and save the state and the audit markdown; never raises."""
    try:
        result = process_insight_extraction_run(root, run_input, now=now)
        extraction = MemoryExtractionMetadata(
            run_at=run_input.run_at,
            success=result.success,
            insight_count=result.new_insight_count,
            duplicate_count=result.duplicate_count,
            skipped_count=len(result.extraction.insights) - result.new_insight_count,
            summary=result.extraction.summary,
            error=result.error if result.error is not None else run_input.error,
        )
        prune = result.prune_outcome
    except Exception as exc:  # any failure becomes a failed run in the audit
        log.warning("insight extraction run failed: %s", exc)
        extraction, prune = _failed_run(root, run_input, exc)

    try:
        report = generate_memory_audit(root, extraction, prune, now=now)
    except Exception as exc:  # generate_memory_audit reads defensively; this is the last resort
        log.warning("memory audit failed: %s", exc)
        report = _fallback_report(extraction, prune, exc, now)

    try:
        write_memory_audit_state(root, MemoryAuditState(extraction, prune, report.generated_at))
    except Exception as exc:  # best effort: the report is still returned
        log.warning("could not write the memory audit state: %s", exc)
    try:
        write_memory_audit(root, render_memory_audit_markdown(report))
    except Exception as exc:  # best effort: the report is still returned
        log.warning("could not write the memory audit report: %s", exc)
    return report
