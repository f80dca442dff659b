"""Reviewing a stored proposal: accept or reject each insight, apply or reject the prune.

Accepted insights are merged into ``.fusion/memory-insights.md``. A prune made from a memory that
has changed since the run started is *stale*: it is never applied, because writing it would lose
what was added meanwhile; a new run is needed. Every step that touches memory records its outcome
in the audit (``.fusion/memory-audit-state.json`` and ``.fusion/memory-audit.md``).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path

from core.insights import (
    MEMORY_INSIGHTS_PATH,
    PruneOutcome,
    apply_memory_pruning,
    document_path,
    merge_insights_detailed,
    read_insights_memory,
    read_working_memory,
    write_insights_memory,
)
from core.proposals.model import STALE_MESSAGE, InsightReview, Proposal, ProposalError, PruneReview
from core.proposals.store import is_stale, record_audit, update_proposal
from core.storage import fileio

__all__ = ["REJECTED_PRUNE_REASON", "accept_insights", "apply_prune", "reject_insights", "reject_prune"]

REJECTED_PRUNE_REASON = "Prune candidate rejected by the operator"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _pick(proposal: Proposal, numbers: list[int] | None) -> set[int]:
    known = {item.number for item in proposal.insights}
    if numbers is None:
        return {item.number for item in proposal.insights if item.status == "pending"}
    wrong = sorted(set(numbers) - known)
    if wrong:
        raise ProposalError(f"proposal {proposal.id} has no insight {', '.join(map(str, wrong))} "
                            f"(it has 1–{len(known)})", "INVALID_ID")
    return set(numbers)


def accept_insights(root: Path | str, proposal_id: str, numbers: list[int] | None = None, *,
                    now: datetime | None = None) -> InsightReview:
    """Merge the chosen insights (default: every pending one) into the insights file and mark them accepted."""
    def change(proposal: Proposal) -> tuple[Proposal, InsightReview]:
        chosen = _pick(proposal, numbers)
        picked = [item.insight for item in proposal.insights if item.number in chosen and item.status != "accepted"]
        insights_path = document_path(root, MEMORY_INSIGHTS_PATH)
        with fileio.file_lock(root, insights_path):  # an agent writing meanwhile loses nothing
            merged = merge_insights_detailed(read_insights_memory(root), picked, today=now)
            if merged.added:
                write_insights_memory(root, merged.text)
        items = tuple(replace(i, status="accepted") if i.number in chosen else i for i in proposal.insights)
        updated = replace(proposal, insights=items)
        if merged.added:
            record_audit(root, now=now)
        message = (f"Merged {_plural(len(merged.added), 'insight')} into {insights_path}"
                   + (f"; {len(merged.skipped)} already there" if merged.skipped else ""))
        return updated, InsightReview(updated, len(merged.added), len(merged.skipped), message)

    return update_proposal(root, proposal_id, change)


def reject_insights(root: Path | str, proposal_id: str, numbers: list[int] | None = None) -> InsightReview:
    """Mark the chosen insights (default: every pending one) rejected; nothing else changes."""
    def change(proposal: Proposal) -> tuple[Proposal, InsightReview]:
        chosen = _pick(proposal, numbers)
        accepted = sorted(i.number for i in proposal.insights if i.number in chosen and i.status == "accepted")
        if accepted:
            raise ProposalError(f"insight {', '.join(map(str, accepted))} of proposal {proposal.id} is already "
                                "merged; edit .fusion/memory-insights.md to remove it", "ALREADY_APPLIED")
        items = tuple(replace(i, status="rejected") if i.number in chosen else i for i in proposal.insights)
        updated = replace(proposal, insights=items)
        return updated, InsightReview(updated, 0, 0, f"Rejected {_plural(len(chosen), 'insight')}")

    return update_proposal(root, proposal_id, change)


def prune_refusal(proposal: Proposal) -> str | None:
    """Why the proposal's prune cannot be applied whatever the memory is now, or ``None``."""
    if not proposal.has_prune:
        return f"proposal {proposal.id} has no prune to apply"
    if proposal.prune_status == "applied":
        return f"the prune of proposal {proposal.id} is already applied"
    if proposal.prune_status == "rejected":
        return f"the prune of proposal {proposal.id} was rejected"
    if proposal.prune_status == "invalid":
        return f"the prune of proposal {proposal.id} cannot be applied: {proposal.prune_message}"
    return None


def apply_prune(root: Path | str, proposal_id: str, *, candidate: str | None = None,
                now: datetime | None = None) -> PruneReview:
    """Apply the proposal's prune if the memory is still the one it was made from; else mark it stale.

    ``candidate`` (the operator's selection of the prune's changes) is written instead of the whole
    prune; it is validated again like any candidate. The old memory is kept in history; the outcome
    is recorded in the audit state.
    """
    def change(proposal: Proposal) -> tuple[Proposal, PruneReview]:
        refusal = prune_refusal(proposal)
        if refusal:
            return proposal, PruneReview(proposal, False, refusal, None)
        if proposal.prune_status == "stale" or is_stale(root, proposal):
            updated = replace(proposal, prune_status="stale", prune_message=STALE_MESSAGE)
            size = len(read_working_memory(root))
            outcome = PruneOutcome(False, f"Prune not applied: {STALE_MESSAGE}", 0, size, size)
            record_audit(root, pruning=outcome, now=now)
            return updated, PruneReview(updated, False, outcome.reason, outcome)
        text = proposal.pruned_memory if candidate is None else candidate
        outcome = apply_memory_pruning(root, text, expected_hash=proposal.memory_hash_at_start)
        if outcome.applied:
            partly = candidate is not None and candidate != proposal.pruned_memory
            updated = replace(proposal, prune_status="applied", prune_message=outcome.reason + (
                " (the changes the operator accepted)" if partly else ""))
            message = f"Pruned: {outcome.original_size:,} → {outcome.new_size:,} characters ({outcome.size_delta:+,})"
        elif "(CONFLICT)" in outcome.reason:  # the memory changed between our check and the write
            updated = replace(proposal, prune_status="stale", prune_message=STALE_MESSAGE)
            message = f"Prune not applied: {STALE_MESSAGE}"
        else:
            updated = proposal
            message = f"Prune not applied: {outcome.reason}"
        record_audit(root, pruning=outcome, now=now)
        return updated, PruneReview(updated, outcome.applied, message, outcome)

    return update_proposal(root, proposal_id, change)


def reject_prune(root: Path | str, proposal_id: str, *, reason: str = "",
                 now: datetime | None = None) -> PruneReview:
    """Reject the proposal's prune (with the operator's optional ``reason``); the memory stays as it is,
    and the audit says so."""
    def change(proposal: Proposal) -> tuple[Proposal, PruneReview]:
        if proposal.prune_status not in ("pending", "stale"):
            refusal = prune_refusal(proposal) or f"the prune of proposal {proposal.id} is {proposal.prune_status}"
            return proposal, PruneReview(proposal, False, refusal, None)
        why = reason.strip()
        updated = replace(proposal, prune_status="rejected",
                          prune_message="Rejected by the operator" + (f": {why}" if why else ""))
        size = len(read_working_memory(root))
        outcome = PruneOutcome(False, REJECTED_PRUNE_REASON + (f": {why}" if why else ""), 0, size, size)
        record_audit(root, pruning=outcome, now=now)
        return updated, PruneReview(updated, False, "Prune rejected; the memory is unchanged", outcome)

    return update_proposal(root, proposal_id, change)
