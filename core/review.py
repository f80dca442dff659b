"""The operator's review of an extraction: merge the accepted insights, apply or reject the prune.

Each operation writes through ``core.insights`` (atomic, locked, previous version kept in history)
and returns what it changed. A reviewed prune, applied or rejected, is recorded as the last pruning
outcome in ``.fusion/memory-audit-state.json`` and the audit report is rewritten, so the audit shows
it; an apply that did not happen (the memory changed meanwhile, the candidate is invalid) records
nothing, because the review is still open.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core import fileio
from core.insights import (
    MEMORY_INSIGHTS_PATH,
    MemoryAuditReport,
    MemoryAuditState,
    MemoryInsight,
    PruneOutcome,
    apply_memory_pruning,
    generate_memory_audit,
    merge_insights_detailed,
    read_insights_memory,
    read_memory_audit_state,
    read_working_memory,
    render_memory_audit_markdown,
    write_insights_memory,
    write_memory_audit,
    write_memory_audit_state,
)

log = logging.getLogger(__name__)

REJECTED_PREFIX = "Rejected by the operator"


@dataclass(frozen=True)
class AcceptOutcome:
    """What merging accepted insights did: those added, those skipped as already present, and the file."""

    added: tuple[MemoryInsight, ...]
    skipped: tuple[MemoryInsight, ...]
    written: bool

    @property
    def added_count(self) -> int:
        """How many bullets the insights file gained."""
        return len(self.added)


@dataclass(frozen=True)
class ReviewedPrune:
    """A prune decision and how it was recorded: the audit report written, or why it was not."""

    outcome: PruneOutcome
    recorded: bool
    report: MemoryAuditReport | None = None
    audit_error: str | None = None


def accept_insights(root: Path | str, insights: Iterable[MemoryInsight | Mapping[str, Any]]) -> AcceptOutcome:
    """Merge ``insights`` into ``.fusion/memory-insights.md`` under its lock; the file is written only
    when something was added (``source="insights-merge"``).
    """
    with fileio.file_lock(Path(root), MEMORY_INSIGHTS_PATH):
        existing = read_insights_memory(root)
        merged = merge_insights_detailed(existing, list(insights))
        if merged.added:
            write_insights_memory(root, merged.text, source="insights-merge")
    return AcceptOutcome(merged.added, merged.skipped, bool(merged.added))


def apply_reviewed_prune(root: Path | str, candidate: str, expected_hash: str | None) -> ReviewedPrune:
    """Apply a reviewed prune candidate if the memory still hashes to ``expected_hash``; never raises.

    The previous memory is kept in history. When applied, the outcome becomes the audit state's last
    pruning outcome and the audit markdown is rewritten.
    """
    outcome = apply_memory_pruning(root, candidate, expected_hash=expected_hash)
    if not outcome.applied:
        return ReviewedPrune(outcome, recorded=False)
    return _record(root, outcome)


def reject_prune(root: Path | str, reason: str = "") -> ReviewedPrune:
    """Record that the operator rejected the prune candidate; the memory is not touched. Never raises."""
    try:
        size = len(read_working_memory(root))
    except Exception as exc:  # an unreadable memory does not stop the rejection from being recorded
        log.warning("reading the working memory for the rejected prune failed: %s", exc)
        size = 0
    text = f"{REJECTED_PREFIX}: {reason.strip()}" if reason.strip() else REJECTED_PREFIX
    return _record(root, PruneOutcome(False, text, 0, size, size))


def _record(root: Path | str, outcome: PruneOutcome) -> ReviewedPrune:
    try:
        saved = MemoryAuditState.from_json(read_memory_audit_state(root) or {})
        state = MemoryAuditState(saved.extraction, outcome, "").to_json()
        del state["updatedAt"]  # stamped by the writer
        write_memory_audit_state(root, state)
        report = generate_memory_audit(root, saved.extraction, outcome)
        write_memory_audit(root, render_memory_audit_markdown(report))
    except Exception as exc:  # the prune decision stands; say that the audit could not be updated
        log.warning("recording the prune outcome in the audit failed: %s", exc)
        return ReviewedPrune(outcome, recorded=False, audit_error=str(exc))
    return ReviewedPrune(outcome, recorded=True, report=report)
