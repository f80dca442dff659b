"""What a stored proposal holds: its insights (each pending, accepted or rejected) and its prune.

Plain frozen dataclasses with their camelCase JSON; reading and writing them is
:mod:`core.proposals.store`, reviewing them :mod:`core.proposals.review`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.insights import MemoryInsight, PruneOutcome, PruneReason

__all__ = [
    "PRUNE_STATUSES",
    "STALE_MESSAGE",
    "InsightReview",
    "Proposal",
    "ProposalError",
    "ProposedInsight",
    "PruneReview",
]

#: pending: awaiting review; applied / rejected: reviewed; stale: the memory changed since the run
#: started; invalid: the candidate drops required sections; none: the reply offered no prune.
PRUNE_STATUSES = ("pending", "applied", "rejected", "stale", "invalid", "none")
STALE_MESSAGE = ("the working memory changed after this extraction started, so applying its prune would "
                 "lose what was added; run a new extraction")


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
    #: The proposer's reason per dropped line (optional in a reply; empty when it gave none).
    prune_reasons: tuple[PruneReason, ...] = ()

    @property
    def pending_insights(self) -> tuple[ProposedInsight, ...]:
        """The insights still waiting for a decision."""
        return tuple(i for i in self.insights if i.status == "pending")

    @property
    def is_pending(self) -> bool:
        """True while an insight or the prune waits for review (a stale prune needs no decision)."""
        return bool(self.pending_insights) or self.prune_status == "pending"

    @property
    def has_prune(self) -> bool:
        """True when the reply offered a prune candidate (whatever its status)."""
        return self.pruned_memory is not None and self.prune_status != "none"

    def to_json(self) -> dict[str, Any]:
        """The file's JSON (camelCase)."""
        return {
            "id": self.id, "createdAt": self.created_at, "provider": self.provider, "origin": self.origin,
            "summary": self.summary, "insights": [i.to_json() for i in self.insights],
            "duplicateCount": self.duplicate_count, "prunedMemory": self.pruned_memory,
            "memoryHashAtStart": self.memory_hash_at_start, "pruneStatus": self.prune_status,
            "pruneMessage": self.prune_message,
            **({"pruneReasons": [r.to_json() for r in self.prune_reasons]} if self.prune_reasons else {}),
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
        raw_reasons = data.get("pruneReasons")
        reasons = tuple(r for r in map(PruneReason.from_json, raw_reasons if isinstance(raw_reasons, list) else [])
                        if r is not None)
        return cls(str(data["id"]), str(data["createdAt"]), str(data.get("provider", "")),
                   str(data.get("origin", "manual")), str(data.get("summary", "")), items,
                   pruned if isinstance(pruned, str) else None, str(data["memoryHashAtStart"]), status,
                   str(data.get("pruneMessage", "")), int(data.get("duplicateCount", 0)), reasons)


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
