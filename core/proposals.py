"""Proposals waiting for review: the insights and the prune one extraction run offered.

Each proposal is a JSON file ``.fusion/memdesk/proposals/<id>.json`` written through
``core.fileio.replace_text``. The operator accepts or rejects each insight (accepted ones are merged
into ``.fusion/memory-insights.md``) and applies or rejects the prune. A prune made from a memory
that has changed since the run started is *stale*: it is never applied, because writing it would
lose what was added meanwhile; a new run is needed. Every review step that touches memory records
its outcome in the audit (``.fusion/memory-audit-state.json`` and ``.fusion/memory-audit.md``).
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core import fileio
from core.errors import MemoryBackendError
from core.insights import (
    MEMORY_INSIGHTS_PATH,
    MemoryAuditState,
    MemoryExtractionMetadata,
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
from core.insights._text import iso_timestamp, to_utc

__all__ = [
    "PROPOSALS_DIR",
    "STALE_MESSAGE",
    "InsightReview",
    "Proposal",
    "ProposalError",
    "ProposedInsight",
    "PruneReview",
    "accept_insights",
    "apply_prune",
    "is_stale",
    "list_proposals",
    "load_proposal",
    "record_audit",
    "reject_insights",
    "reject_prune",
    "save_new_proposal",
]

log = logging.getLogger(__name__)

PROPOSALS_DIR = f"{fileio.MEMDESK_DIR}/proposals"
#: pending: awaiting review; applied / rejected: reviewed; stale: the memory changed since the run
#: started; invalid: the candidate drops required sections; none: the reply offered no prune.
PRUNE_STATUSES = ("pending", "applied", "rejected", "stale", "invalid", "none")
STALE_MESSAGE = ("the working memory changed after this extraction started, so applying its prune would "
                 "lose what was added; run a new extraction")
_ID_RE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z-]{0,63}$")


class ProposalError(Exception):
    """A proposal that is missing, unreadable, or cannot take the requested review step."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@dataclass(frozen=True)
class ProposedInsight:
    """One proposed insight: its number in the proposal (from 1) and its status pending|accepted|rejected."""

    number: int
    insight: MemoryInsight
    status: str = "pending"

    def to_json(self) -> dict[str, Any]:
        """``{"number", "status", ...insight}`` in camelCase."""
        return {"number": self.number, "status": self.status, **self.insight.to_json()}


@dataclass(frozen=True)
class Proposal:
    """What one run proposed, and how far its review has come."""

    id: str
    created_at: str
    provider: str
    origin: str
    summary: str
    insights: tuple[ProposedInsight, ...]
    pruned_memory: str | None
    memory_hash_at_start: str
    prune_status: str
    prune_message: str
    duplicate_count: int = 0

    @property
    def pending_insights(self) -> tuple[ProposedInsight, ...]:
        """The insights still waiting for a decision."""
        return tuple(i for i in self.insights if i.status == "pending")

    @property
    def is_pending(self) -> bool:
        """True while an insight or the prune waits for review (a stale prune needs no decision)."""
        return bool(self.pending_insights) or self.prune_status == "pending"

    def to_json(self) -> dict[str, Any]:
        """The file's JSON (camelCase)."""
        return {
            "id": self.id, "createdAt": self.created_at, "provider": self.provider, "origin": self.origin,
            "summary": self.summary, "insights": [i.to_json() for i in self.insights],
            "duplicateCount": self.duplicate_count, "prunedMemory": self.pruned_memory,
            "memoryHashAtStart": self.memory_hash_at_start, "pruneStatus": self.prune_status,
            "pruneMessage": self.prune_message,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Proposal:
        """Read the file's JSON back; a missing required key raises ``KeyError``."""
        items = tuple(ProposedInsight(int(i["number"]), MemoryInsight.from_json(i), str(i.get("status", "pending")))
                      for i in data.get("insights", []))
        pruned = data.get("prunedMemory")
        status = str(data.get("pruneStatus", "none"))
        if status not in PRUNE_STATUSES:
            raise ValueError(f"unknown pruneStatus {status!r}")
        return cls(str(data["id"]), str(data["createdAt"]), str(data.get("provider", "")),
                   str(data.get("origin", "manual")), str(data.get("summary", "")), items,
                   pruned if isinstance(pruned, str) else None, str(data["memoryHashAtStart"]), status,
                   str(data.get("pruneMessage", "")), int(data.get("duplicateCount", 0)))


@dataclass(frozen=True)
class InsightReview:
    """The outcome of accepting or rejecting insights: the updated proposal and what was merged."""

    proposal: Proposal
    added: int
    already_present: int
    message: str


@dataclass(frozen=True)
class PruneReview:
    """The outcome of applying or rejecting a prune: the updated proposal, whether memory changed, why."""

    proposal: Proposal
    applied: bool
    message: str
    outcome: PruneOutcome | None


def proposal_relpath(proposal_id: str) -> str:
    """The proposal file's path relative to the project root."""
    return f"{PROPOSALS_DIR}/{proposal_id}.json"


def new_proposal_id(now: datetime | None = None) -> str:
    """A sortable, unique id: ``YYYYMMDDTHHMMSS-xxxxxx`` (UTC)."""
    moment = to_utc(now or datetime.now(UTC))
    return f"{moment:%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"


def record_audit(root: Path | str, *, extraction: MemoryExtractionMetadata | None = None,
                 pruning: PruneOutcome | None = None, now: datetime | None = None) -> None:
    """Write the audit state and markdown, replacing the given records and keeping the others; never raises.

    Only the audit files are written: the insights and the working memory are left as they are.
    """
    try:
        raw = read_memory_audit_state(root)  # a MemoryAuditState, or its JSON object in newer core.insights
        previous = MemoryAuditState.from_json(raw) if isinstance(raw, dict) else raw
        extraction = extraction or (previous.extraction if previous else None)
        pruning = pruning or (previous.pruning if previous else None)
        report = generate_memory_audit(root, extraction, pruning, now=now)
        write_memory_audit_state(root, MemoryAuditState(extraction, pruning, report.generated_at))
        write_memory_audit(root, render_memory_audit_markdown(report))
    except Exception as exc:  # the audit is a record; failing to write it must not undo the review step
        log.warning("could not write the memory audit: %s", exc)


def _read(root: Path | str, proposal_id: str) -> tuple[Proposal, str]:
    if not _ID_RE.match(proposal_id or ""):
        raise ProposalError(f"{proposal_id!r} is not a proposal id", "INVALID_ID")
    text = fileio.read_text(fileio.resolve_in_root(root, proposal_relpath(proposal_id)))
    if text is None:
        raise ProposalError(f"no proposal {proposal_id!r} (see `memdesk proposals list`)", "NOT_FOUND")
    try:
        data = json.loads(text)
        return Proposal.from_json(data), text
    except (ValueError, KeyError, TypeError) as exc:
        raise ProposalError(f"proposal {proposal_id} is unreadable: {exc}", "CORRUPT") from exc


def _write(root: Path | str, proposal: Proposal, loaded_text: str | None) -> Proposal:
    text = json.dumps(proposal.to_json(), indent=2, ensure_ascii=False) + "\n"
    expected = fileio.content_hash(loaded_text or "")
    fileio.replace_text(root, proposal_relpath(proposal.id), text, expected_hash=expected, source="proposal")
    return proposal


def _resolve_id(root: Path | str, proposal_id: str) -> str:
    """Accept a unique prefix of an id, as the CLI prints short ids."""
    if not _ID_RE.match(proposal_id or ""):
        raise ProposalError(f"{proposal_id!r} is not a proposal id", "INVALID_ID")
    folder = Path(root) / PROPOSALS_DIR
    if (folder / f"{proposal_id}.json").exists() or not folder.is_dir():
        return proposal_id
    matches = sorted(p.stem for p in folder.glob("*.json") if p.stem.startswith(proposal_id))
    if len(matches) > 1:
        raise ProposalError(f"{proposal_id!r} matches {len(matches)} proposals; give more of the id", "AMBIGUOUS")
    return matches[0] if matches else proposal_id


def save_new_proposal(root: Path | str, *, provider: str, summary: str, insights: Iterable[MemoryInsight],
                      pruned_memory: str | None, memory_hash_at_start: str, prune_status: str, prune_message: str,
                      duplicate_count: int = 0, origin: str = "manual", now: datetime | None = None) -> Proposal:
    """Store a new proposal whose insights are all pending, and return it."""
    items = tuple(ProposedInsight(n, insight, "pending") for n, insight in enumerate(insights, start=1))
    proposal = Proposal(new_proposal_id(now), iso_timestamp(now), provider, origin, summary, items, pruned_memory,
                        memory_hash_at_start, prune_status, prune_message, duplicate_count)
    return _write(root, proposal, None)


def list_proposals(root: Path | str, *, pending_only: bool = True) -> list[Proposal]:
    """Return the stored proposals, oldest first; ``pending_only`` keeps those with something to review.

    An unreadable proposal file is skipped and logged.
    """
    folder = Path(root) / PROPOSALS_DIR
    out: list[Proposal] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        try:
            proposal = _read(root, path.stem)[0]
        except (ProposalError, MemoryBackendError) as exc:
            log.warning("skipping %s: %s", path.name, exc)
            continue
        if not pending_only or proposal.is_pending:
            out.append(proposal)
    return sorted(out, key=lambda p: (p.created_at, p.id))


def load_proposal(root: Path | str, proposal_id: str) -> Proposal:
    """Load one proposal (a unique id prefix is enough); raise :class:`ProposalError` when missing."""
    return _read(root, _resolve_id(root, proposal_id))[0]


def is_stale(root: Path | str, proposal: Proposal) -> bool:
    """True when the working memory is no longer the one the proposal's prune was made from."""
    return fileio.content_hash(read_working_memory(root)) != proposal.memory_hash_at_start


def _pick(proposal: Proposal, numbers: list[int] | None) -> set[int]:
    known = {item.number for item in proposal.insights}
    if numbers is None:
        return {item.number for item in proposal.insights if item.status == "pending"}
    wrong = sorted(set(numbers) - known)
    if wrong:
        raise ProposalError(f"proposal {proposal.id} has no insight {', '.join(map(str, wrong))} "
                            f"(it has 1–{len(known)})", "INVALID_ID")
    return set(numbers)


def _update(root: Path | str, proposal_id: str, change: Any) -> Any:
    """Load, change and save a proposal under its file lock; ``change`` returns (proposal, result)."""
    pid = _resolve_id(root, proposal_id)
    with fileio.file_lock(root, proposal_relpath(pid)):
        proposal, text = _read(root, pid)
        updated, result = change(proposal)
        if updated != proposal:
            _write(root, updated, text)
        return result


def accept_insights(root: Path | str, proposal_id: str, numbers: list[int] | None = None, *,
                    now: datetime | None = None) -> InsightReview:
    """Merge the chosen insights (default: every pending one) into the insights file and mark them accepted."""
    def change(proposal: Proposal) -> tuple[Proposal, InsightReview]:
        chosen = _pick(proposal, numbers)
        picked = [item.insight for item in proposal.insights if item.number in chosen and item.status != "accepted"]
        with fileio.file_lock(root, MEMORY_INSIGHTS_PATH):  # an agent writing meanwhile loses nothing
            merged = merge_insights_detailed(read_insights_memory(root), picked, today=now)
            if merged.added:
                write_insights_memory(root, merged.text)
        items = tuple(replace(i, status="accepted") if i.number in chosen else i for i in proposal.insights)
        updated = replace(proposal, insights=items)
        if merged.added:
            record_audit(root, now=now)
        message = (f"Merged {len(merged.added)} insight{'' if len(merged.added) == 1 else 's'} into "
                   f".fusion/memory-insights.md" + (f"; {len(merged.skipped)} already there" if merged.skipped else ""))
        return updated, InsightReview(updated, len(merged.added), len(merged.skipped), message)

    return _update(root, proposal_id, change)


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
        return updated, InsightReview(updated, 0, 0, f"Rejected {len(chosen)} insight{'' if len(chosen) == 1 else 's'}")

    return _update(root, proposal_id, change)


def _refuse(proposal: Proposal) -> str | None:
    if proposal.pruned_memory is None or proposal.prune_status == "none":
        return f"proposal {proposal.id} has no prune to apply"
    if proposal.prune_status == "applied":
        return f"the prune of proposal {proposal.id} is already applied"
    if proposal.prune_status == "rejected":
        return f"the prune of proposal {proposal.id} was rejected"
    if proposal.prune_status == "invalid":
        return f"the prune of proposal {proposal.id} cannot be applied: {proposal.prune_message}"
    return None



def apply_prune(root: Path | str, proposal_id: str, *, now: datetime | None = None) -> PruneReview:
    """Apply the proposal's prune if the memory is still the one it was made from; else mark it stale.

    The old memory is kept in history; the outcome is recorded in the audit state.
    """
    def change(proposal: Proposal) -> tuple[Proposal, PruneReview]:
        refusal = _refuse(proposal)
        if refusal:
            return proposal, PruneReview(proposal, False, refusal, None)
        if proposal.prune_status == "stale" or is_stale(root, proposal):
            updated = replace(proposal, prune_status="stale", prune_message=STALE_MESSAGE)
            size = len(read_working_memory(root))
            outcome = PruneOutcome(False, f"Prune not applied: {STALE_MESSAGE}", 0, size, size)
            record_audit(root, pruning=outcome, now=now)
            return updated, PruneReview(updated, False, outcome.reason, outcome)
        outcome = apply_memory_pruning(root, proposal.pruned_memory, expected_hash=proposal.memory_hash_at_start)
        if outcome.applied:
            updated = replace(proposal, prune_status="applied", prune_message=outcome.reason)
            message = f"Pruned: {outcome.original_size:,} → {outcome.new_size:,} characters ({outcome.size_delta:+,})"
        elif "(CONFLICT)" in outcome.reason:  # the memory changed between our check and the write
            updated = replace(proposal, prune_status="stale", prune_message=STALE_MESSAGE)
            message = f"Prune not applied: {STALE_MESSAGE}"
        else:
            updated = proposal
            message = f"Prune not applied: {outcome.reason}"
        record_audit(root, pruning=outcome, now=now)
        return updated, PruneReview(updated, outcome.applied, message, outcome)

    return _update(root, proposal_id, change)


def reject_prune(root: Path | str, proposal_id: str, *, now: datetime | None = None) -> PruneReview:
    """Reject the proposal's prune: the memory stays as it is, and the audit says so."""
    def change(proposal: Proposal) -> tuple[Proposal, PruneReview]:
        if proposal.prune_status not in ("pending", "stale"):
            refusal = _refuse(proposal) or f"the prune of proposal {proposal.id} is {proposal.prune_status}"
            return proposal, PruneReview(proposal, False, refusal, None)
        updated = replace(proposal, prune_status="rejected", prune_message="Rejected by the operator")
        size = len(read_working_memory(root))
        outcome = PruneOutcome(False, "Prune candidate rejected by the operator", 0, size, size)
        record_audit(root, pruning=outcome, now=now)
        return updated, PruneReview(updated, False, "Prune rejected; the memory is unchanged", outcome)

    return _update(root, proposal_id, change)
