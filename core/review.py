"""Deprecated: the review path now lives in :mod:`core.proposals` (accept_insights, apply_prune, reject_prune).

Only :func:`reject_prune` remains, for callers that record a rejection without a stored proposal
(``tests/gui/test_audit_view.py``); it writes the audit through :func:`core.proposals.record_audit`.
Delete this module once nothing imports it.
"""

from __future__ import annotations

from pathlib import Path

from core.insights import PruneOutcome, read_working_memory
from core.proposals import record_audit

__all__ = ["REJECTED_PREFIX", "reject_prune"]

REJECTED_PREFIX = "Rejected by the operator"


def reject_prune(root: Path | str, reason: str = "") -> PruneOutcome:
    """Record in the audit that the operator rejected a prune; the memory is not touched. Never raises."""
    try:
        size = len(read_working_memory(root))
    except Exception:  # an unreadable memory does not stop the rejection from being recorded
        size = 0
    text = f"{REJECTED_PREFIX}: {reason.strip()}" if reason.strip() else REJECTED_PREFIX
    outcome = PruneOutcome(False, text, 0, size, size)
    record_audit(root, pruning=outcome)
    return outcome
