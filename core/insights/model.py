"""Plain data of the insights subsystem: paths, constants and the records Fusion exchanges as JSON.

Every record is a frozen dataclass with snake_case fields; ``to_json()`` gives Fusion's camelCase
dict (keys Fusion leaves ``undefined`` are omitted) and ``from_json()`` reads one back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core.insights._text import iso_timestamp
from core.settings.model import DEFAULT_INSIGHT_SCHEDULE, DEFAULT_MIN_INTERVAL_MS

__all__ = [
    "CATEGORY_SECTIONS",
    "DEFAULT_INSIGHT_SCHEDULE",
    "DEFAULT_MIN_INTERVAL_MS",
    "INSIGHT_CATEGORIES",
    "INSIGHT_EXTRACTION_SCHEDULE_NAME",
    "MEMORY_AUDIT_PATH",
    "MEMORY_AUDIT_STATE_PATH",
    "MEMORY_INSIGHTS_PATH",
    "MEMORY_WORKING_PATH",
    "MIN_INSIGHT_GROWTH_CHARS",
    "PRUNE_NOT_OFFERED_REASON",
    "InsightExtractionResult",
    "InsightParseError",
    "InsightsMemoryStatus",
    "MemoryAuditCheck",
    "MemoryAuditReport",
    "MemoryAuditState",
    "MemoryExtractionMetadata",
    "MemoryInsight",
    "ProcessRunInput",
    "ProcessRunResult",
    "PruneOutcome",
    "PruneReason",
    "PruneValidationResult",
    "WorkingMemoryStatus",
]

MEMORY_WORKING_PATH = ".fusion/memory.md"
MEMORY_INSIGHTS_PATH = ".fusion/memory-insights.md"
MEMORY_AUDIT_PATH = ".fusion/memory-audit.md"
MEMORY_AUDIT_STATE_PATH = ".fusion/memory-audit-state.json"
MIN_INSIGHT_GROWTH_CHARS = 1000
INSIGHT_EXTRACTION_SCHEDULE_NAME = "Memory Insight Extraction"
INSIGHT_CATEGORIES: tuple[str, ...] = ("pattern", "principle", "convention", "pitfall", "context")
CATEGORY_SECTIONS: dict[str, str] = {
    "pattern": "## Patterns",
    "principle": "## Principles",
    "convention": "## Conventions",
    "pitfall": "## Pitfalls",
    "context": "## Context",
}
# The reason of a prune outcome when the AI offered no candidate: pruning was not needed, not failed.
PRUNE_NOT_OFFERED_REASON = "No prune candidate offered"


class InsightParseError(ValueError):
    """The AI's extraction reply could not be read as a JSON object."""


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass(frozen=True)
class MemoryInsight:
    """One insight distilled from working memory."""

    category: str
    content: str
    source: str | None = None
    extracted_at: str = field(default_factory=iso_timestamp)

    def to_json(self) -> dict[str, Any]:
        """Fusion's JSON shape (``source`` omitted when absent)."""
        out: dict[str, Any] = {"category": self.category, "content": self.content}
        if self.source is not None:
            out["source"] = self.source
        out["extractedAt"] = self.extracted_at
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MemoryInsight:
        """Build from a camelCase or snake_case mapping."""
        extracted = data.get("extractedAt", data.get("extracted_at"))
        return cls(
            category=str(data.get("category", "context")),
            content=str(data.get("content", "")),
            source=_opt_str(data.get("source")),
            extracted_at=extracted if isinstance(extracted, str) else iso_timestamp(),
        )


@dataclass(frozen=True)
class PruneReason:
    """Why the proposer dropped one line of the working memory (the reply's optional ``pruneReasons``)."""

    line: str
    reason: str

    def to_json(self) -> dict[str, str]:
        """``{"line", "reason"}``."""
        return {"line": self.line, "reason": self.reason}

    @classmethod
    def from_json(cls, data: Any) -> PruneReason | None:
        """Read one entry; ``None`` when it is not a mapping with a string ``line`` and a non-blank ``reason``."""
        if not isinstance(data, Mapping):
            return None
        line, reason = data.get("line"), data.get("reason")
        if not isinstance(line, str) or not isinstance(reason, str) or not reason.strip():
            return None
        return cls(line, reason.strip())


@dataclass(frozen=True)
class InsightExtractionResult:
    """What one extraction reply holds: insights, a summary and maybe a pruned working memory (with the
    reasons given for the lines it drops)."""

    insights: tuple[MemoryInsight, ...]
    summary: str
    extracted_at: str
    pruned_memory: str | None = None
    prune_reasons: tuple[PruneReason, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Fusion's JSON shape (``prunedMemory`` omitted when absent)."""
        out: dict[str, Any] = {
            "insights": [i.to_json() for i in self.insights],
            "summary": self.summary,
            "extractedAt": self.extracted_at,
        }
        if self.pruned_memory is not None:
            out["prunedMemory"] = self.pruned_memory
        if self.prune_reasons:
            out["pruneReasons"] = [r.to_json() for r in self.prune_reasons]
        return out


@dataclass(frozen=True)
class PruneValidationResult:
    """Whether a prune candidate is safe to write, and which required sections it keeps."""

    valid: bool
    reason: str
    size: int
    has_required_sections: bool
    found_sections: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Fusion's JSON shape plus ``foundSections``."""
        return {
            "valid": self.valid,
            "reason": self.reason,
            "size": self.size,
            "hasRequiredSections": self.has_required_sections,
            "foundSections": list(self.found_sections),
        }


@dataclass(frozen=True)
class PruneOutcome:
    """What a prune did to working memory; sizes are character counts."""

    applied: bool
    reason: str
    size_delta: int
    original_size: int
    new_size: int

    @property
    def not_needed(self) -> bool:
        """True when nothing was pruned because the AI offered no candidate (not a failure)."""
        return not self.applied and self.reason == PRUNE_NOT_OFFERED_REASON

    def to_json(self) -> dict[str, Any]:
        """Fusion's JSON shape."""
        return {
            "applied": self.applied,
            "reason": self.reason,
            "sizeDelta": self.size_delta,
            "originalSize": self.original_size,
            "newSize": self.new_size,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PruneOutcome:
        """Build from Fusion's camelCase mapping (missing numbers become 0)."""
        return cls(
            applied=data.get("applied") is True,
            reason=str(data.get("reason", "")),
            size_delta=_int(data.get("sizeDelta")),
            original_size=_int(data.get("originalSize")),
            new_size=_int(data.get("newSize")),
        )


@dataclass(frozen=True)
class MemoryAuditCheck:
    """One audit check and its outcome."""

    id: str
    name: str
    passed: bool
    details: str

    def to_json(self) -> dict[str, Any]:
        """Fusion's JSON shape."""
        return {"id": self.id, "name": self.name, "passed": self.passed, "details": self.details}


@dataclass(frozen=True)
class MemoryExtractionMetadata:
    """The record of one extraction run, as the audit and its state file keep it."""

    run_at: str
    success: bool
    insight_count: int
    duplicate_count: int
    skipped_count: int
    summary: str
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Fusion's JSON shape (``error`` omitted when absent)."""
        out: dict[str, Any] = {
            "runAt": self.run_at,
            "success": self.success,
            "insightCount": self.insight_count,
            "duplicateCount": self.duplicate_count,
            "skippedCount": self.skipped_count,
            "summary": self.summary,
        }
        if self.error is not None:
            out["error"] = self.error
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MemoryExtractionMetadata:
        """Build from Fusion's camelCase mapping."""
        return cls(
            run_at=str(data.get("runAt", "")),
            success=data.get("success") is True,
            insight_count=_int(data.get("insightCount")),
            duplicate_count=_int(data.get("duplicateCount")),
            skipped_count=_int(data.get("skippedCount")),
            summary=str(data.get("summary", "")),
            error=_opt_str(data.get("error")),
        )


@dataclass(frozen=True)
class WorkingMemoryStatus:
    """Working-memory facts in an audit report."""

    exists: bool
    size: int
    section_count: int

    def to_json(self) -> dict[str, Any]:
        """Fusion's JSON shape."""
        return {"exists": self.exists, "size": self.size, "sectionCount": self.section_count}


@dataclass(frozen=True)
class InsightsMemoryStatus:
    """Insights-memory facts in an audit report; ``categories`` maps each category to its bullet count."""

    exists: bool
    size: int
    insight_count: int
    categories: dict[str, int]
    last_updated: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Fusion's JSON shape (``lastUpdated`` omitted when absent)."""
        out: dict[str, Any] = {
            "exists": self.exists,
            "size": self.size,
            "insightCount": self.insight_count,
            "categories": dict(self.categories),
        }
        if self.last_updated is not None:
            out["lastUpdated"] = self.last_updated
        return out


@dataclass(frozen=True)
class MemoryAuditReport:
    """A memory audit: file facts, the last extraction and prune, the checks and overall health."""

    generated_at: str
    working_memory: WorkingMemoryStatus
    insights_memory: InsightsMemoryStatus
    extraction: MemoryExtractionMetadata
    pruning: PruneOutcome
    checks: tuple[MemoryAuditCheck, ...]
    health: str

    def to_json(self) -> dict[str, Any]:
        """Fusion's JSON shape."""
        return {
            "generatedAt": self.generated_at,
            "workingMemory": self.working_memory.to_json(),
            "insightsMemory": self.insights_memory.to_json(),
            "extraction": self.extraction.to_json(),
            "pruning": self.pruning.to_json(),
            "checks": [c.to_json() for c in self.checks],
            "health": self.health,
        }


@dataclass(frozen=True)
class MemoryAuditState:
    """The last run's extraction and prune records, kept in ``.fusion/memory-audit-state.json``."""

    extraction: MemoryExtractionMetadata | None
    pruning: PruneOutcome | None
    updated_at: str

    def to_json(self) -> dict[str, Any]:
        """The state file's JSON shape."""
        out: dict[str, Any] = {}
        if self.extraction is not None:
            out["extraction"] = self.extraction.to_json()
        if self.pruning is not None:
            out["pruning"] = self.pruning.to_json()
        out["updatedAt"] = self.updated_at
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MemoryAuditState:
        """Build from the state file's JSON (sections that are not objects are ignored)."""
        extraction = data.get("extraction")
        pruning = data.get("pruning")
        return cls(
            extraction=MemoryExtractionMetadata.from_json(extraction) if isinstance(extraction, Mapping) else None,
            pruning=PruneOutcome.from_json(pruning) if isinstance(pruning, Mapping) else None,
            updated_at=str(data.get("updatedAt", "")),
        )


@dataclass(frozen=True)
class ProcessRunInput:
    """The raw outcome of one AI extraction step, to be processed."""

    raw_response: str
    step_success: bool
    run_at: str
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Fusion's JSON shape (``error`` omitted when absent)."""
        out: dict[str, Any] = {"rawResponse": self.raw_response, "stepSuccess": self.step_success, "runAt": self.run_at}
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass(frozen=True)
class ProcessRunResult:
    """What processing a run did: the parsed reply, what was merged, and the prune outcome.

    ``success`` is False when the step failed or its reply did not parse; ``error`` then says why
    (a failed step may carry no message). ``insights_written`` says whether the insights file was
    written.
    """

    extraction: InsightExtractionResult
    new_insight_count: int
    duplicate_count: int
    prune_outcome: PruneOutcome
    success: bool = True
    error: str | None = None
    insights_written: bool = False

    # Fusion's result is flat (the extraction result spread, plus counts and the prune outcome);
    # these give the same names as attributes.
    @property
    def insights(self) -> tuple[MemoryInsight, ...]:
        """The insights the reply held."""
        return self.extraction.insights

    @property
    def summary(self) -> str:
        """The reply's summary."""
        return self.extraction.summary

    @property
    def extracted_at(self) -> str:
        """When the extraction ran (ISO 8601, UTC)."""
        return self.extraction.extracted_at

    @property
    def pruned_memory(self) -> str | None:
        """The prune candidate the reply offered, if any."""
        return self.extraction.pruned_memory

    def to_json(self) -> dict[str, Any]:
        """Fusion's shape: the extraction result spread, plus the counts and the prune outcome."""
        out = self.extraction.to_json()
        out.update(
            newInsightCount=self.new_insight_count,
            duplicateCount=self.duplicate_count,
            pruneOutcome=self.prune_outcome.to_json(),
        )
        return out
