"""What a stored proposal holds: its insights (each pending, accepted or rejected) and its prune.

Plain frozen dataclasses with their camelCase JSON; reading and writing them is
:mod:`core.proposals.store`, reviewing them :mod:`core.proposals.review`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from core.insights import MemoryInsight, PruneOutcome, PruneReason

__all__ = [
    "PROPOSAL_ID_RE",
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
    def from_json(cls, data: Any) -> Proposal:
        """Read the file's JSON back, checking every field's type; anything wrong raises ``ValueError``
        naming the field (a proposal file is project state, so untrusted)."""
        if not isinstance(data, dict):
            raise ValueError(f"it holds a JSON {_json_kind(data)}, not a proposal object")
        pid = _text(data, "id", required=True)
        if not PROPOSAL_ID_RE.match(pid):
            raise ValueError(f"its id {pid[:80]!r} is not a proposal id")
        insights = data.get("insights", [])
        if not isinstance(insights, list):
            raise ValueError('"insights" is not a list')
        items = tuple(_proposed_insight(i, n) for n, i in enumerate(insights, start=1))
        pruned = data.get("prunedMemory")
        if pruned is not None and not isinstance(pruned, str):
            raise ValueError('"prunedMemory" is neither text nor null')
        status = _text(data, "pruneStatus", "none")
        if status not in PRUNE_STATUSES:
            raise ValueError(f"unknown pruneStatus {status[:40]!r}")
        digest = _text(data, "memoryHashAtStart", required=True)
        if not _HASH_RE.match(digest):
            raise ValueError('"memoryHashAtStart" is not a SHA-256 hex digest')
        duplicates = data.get("duplicateCount", 0)
        if isinstance(duplicates, bool) or not isinstance(duplicates, int) or not 0 <= duplicates <= _MAX_NUMBER:
            raise ValueError('"duplicateCount" is not a count')
        raw_reasons = data.get("pruneReasons")
        if raw_reasons is not None and not isinstance(raw_reasons, list):
            raise ValueError('"pruneReasons" is not a list')
        reasons = tuple(r for r in map(PruneReason.from_json, raw_reasons or []) if r is not None)
        return cls(pid, _text(data, "createdAt", required=True), _text(data, "provider"),
                   _text(data, "origin", "manual"), _text(data, "summary"), items, pruned, digest, status,
                   _text(data, "pruneMessage"), duplicates, reasons)


PROPOSAL_ID_RE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z-]{0,63}$")
_HASH_RE = re.compile(r"^[0-9a-f]{64}$")
_INSIGHT_STATUSES = ("pending", "accepted", "rejected")
_MAX_NUMBER = 1_000_000


def _json_kind(value: Any) -> str:
    return {list: "list", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number" if isinstance(value, int | float) else type(value).__name__)


def _text(data: dict[str, Any], key: str, default: str = "", *, required: bool = False) -> str:
    if key not in data:
        if required:
            raise ValueError(f'"{key}" is missing')
        return default
    value = data[key]
    if not isinstance(value, str):
        raise ValueError(f'"{key}" is not text')
    return value


def _proposed_insight(item: Any, position: int) -> ProposedInsight:
    if not isinstance(item, dict):
        raise ValueError(f"insight {position} is not an object")
    number = item.get("number")
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= _MAX_NUMBER:
        raise ValueError(f"insight {position} has no valid number")
    status = item.get("status", "pending")
    if status not in _INSIGHT_STATUSES:
        raise ValueError(f"insight {number} has an unknown status")
    for key in ("category", "content", "source"):
        if item.get(key) is not None and not isinstance(item[key], str):
            raise ValueError(f'insight {number}: "{key}" is not text')
    return ProposedInsight(number, MemoryInsight.from_json(item), status)


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
