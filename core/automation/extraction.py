"""One insight-extraction run: build the prompt, ask the provider, parse, and store a proposal for review.

:func:`run_extraction` never merges insights and never prunes: what the model offers waits in a
proposal (:mod:`core.proposals`) until the operator accepts it. It never raises either; every
failure (a provider error, an empty or unreadable reply, a cancel) comes back as a failed or
cancelled :class:`ExtractionRun` with an operator-facing message. The audit state and markdown are
written after every run, failed and cancelled ones included, and nothing else on disk changes
then. Made to run on a worker thread: ``cancel`` is polled, ``progress(percent, message)`` reported.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from core.insights import (
    PRUNE_AWAITING_REVIEW_REASON,
    PRUNE_NOT_OFFERED_REASON,
    InsightExtractionResult,
    InsightParseError,
    MemoryExtractionMetadata,
    PruneOutcome,
    build_insight_extraction_prompt,
    count_duplicate_insights,
    is_duplicate_insight,
    parse_insight_extraction_response,
    read_insights_memory,
    read_working_memory,
    validate_prune_candidate,
)
from core.insights._text import iso_timestamp, js_trim, to_utc
from core.proposals import STALE_MESSAGE, ProposalError, record_audit, save_new_proposal
from core.providers import CancelCheck, ProgressCallback, Provider, ProviderError, ProviderRequest
from core.storage import fileio

__all__ = ["ExtractionRun", "run_extraction"]

#: The longest a run's failure message grows (a reply quoted in it is cut to fit on one line).
MESSAGE_LIMIT = 400


def _one_line(message: str) -> str:
    """``message`` on one line: a multi-line reply quoted in it would print as many lines of "error"."""
    flat = " ".join(message.split())
    return flat if len(flat) <= MESSAGE_LIMIT else flat[: MESSAGE_LIMIT - 1] + "…"


def _reason(exc: BaseException, verb: str) -> str:
    """An OS error as one line naming its file and what to do; any other error as its text."""
    if isinstance(exc, OSError) and exc.filename is not None:
        from core.storage.safepath import os_reason

        return os_reason(exc.filename, exc, verb)
    return str(exc) or type(exc).__name__

log = logging.getLogger(__name__)

RunStatus = Literal["ok", "failed", "cancelled"]


@dataclass(frozen=True)
class ExtractionRun:
    """What one run did. ``status`` is ok, failed or cancelled; ``message`` says it for the operator.

    ``error_kind`` is a :class:`~core.providers.ProviderError` kind (or ``empty_memory``,
    ``empty_reply``, ``bad_reply``, ``internal``) when the run did not succeed. ``prune_status`` is
    the proposal's (pending, stale, invalid or none) and ``prune_message`` says why.
    """

    status: RunStatus
    message: str
    result: InsightExtractionResult | None
    memory_hash_at_start: str
    proposal_id: str | None
    provider: str
    run_at: str
    error_kind: str | None = None
    prune_status: str | None = None
    prune_message: str = ""

    @property
    def ok(self) -> bool:
        """True when the run produced a reply that parsed."""
        return self.status == "ok"


def _prune_review(root: Path | str, pruned: str | None, start_hash: str) -> tuple[str, str, PruneOutcome]:
    size = len(read_working_memory(root))
    if pruned is None:
        return ("none", "No prune proposed: the reply has no prunedMemory",
                PruneOutcome(False, PRUNE_NOT_OFFERED_REASON, 0, size, size))
    validation = validate_prune_candidate(pruned)
    if not validation.valid:
        message = f"The proposed prune cannot be applied: {validation.reason}"
        return "invalid", message, PruneOutcome(False, validation.reason, 0, size, size)
    if fileio.content_hash(read_working_memory(root)) != start_hash:
        return "stale", f"The proposed prune is stale: {STALE_MESSAGE}", PruneOutcome(False, STALE_MESSAGE, 0, size, size)
    return ("pending", "Prune proposed; review it before it is applied",
            PruneOutcome(False, PRUNE_AWAITING_REVIEW_REASON, 0, size, size))


def _finish_failed(root: Path | str, run: ExtractionRun, now: datetime | None) -> ExtractionRun:
    """Record a run that produced nothing in the audit; the insights and the memory stay untouched."""
    try:
        size = len(read_working_memory(root))
    except Exception:  # the size is only informative here
        size = 0
    verb = "cancelled" if run.status == "cancelled" else "failed"
    extraction = MemoryExtractionMetadata(run.run_at, False, 0, 0, 0, f"Extraction {verb}: {run.message}", run.message)
    pruning = PruneOutcome(False, f"No prune: the extraction {verb}", 0, size, size)
    record_audit(root, extraction=extraction, pruning=pruning, now=now)
    return run


def run_extraction(
    root: Path | str,
    provider: Provider,
    *,
    cancel: CancelCheck = lambda: False,
    progress: ProgressCallback = lambda pct, msg: None,
    now: datetime | None = None,
    origin: str = "manual",
) -> ExtractionRun:
    """Run one extraction with ``provider`` and store what it proposes for review; never raises."""
    moment = to_utc(now) if now is not None else datetime.now(UTC)
    run_at = iso_timestamp(moment)
    name = getattr(provider, "name", type(provider).__name__)

    def failed(message: str, kind: str, start_hash: str = "", status: RunStatus = "failed") -> ExtractionRun:
        run = ExtractionRun(status, _one_line(message), None, start_hash, None, name, run_at, kind)
        return _finish_failed(root, run, now)

    progress(0, "Reading the memory")
    try:
        memory = read_working_memory(root)
        existing = read_insights_memory(root)
    except Exception as exc:
        return failed(f"cannot read the memory: {_reason(exc, 'read')}", "internal")
    start_hash = fileio.content_hash(memory)
    if not js_trim(memory):
        return failed("the working memory (.fusion/memory.md) is empty or missing; nothing to extract",
                      "empty_memory", start_hash)

    prompt = build_insight_extraction_prompt(memory, existing)
    request = ProviderRequest(prompt, memory, existing, Path(root), moment)

    def sub_progress(pct: int, msg: str) -> None:
        progress(5 + int(max(0, min(100, pct)) * 0.85), msg)

    progress(5, f"Asking {name}")
    try:
        reply = provider.complete(request, cancel=cancel, progress=sub_progress)
    except ProviderError as exc:
        status: RunStatus = "cancelled" if exc.kind == "cancelled" else "failed"
        message = "cancelled by the operator" if status == "cancelled" else exc.message
        return failed(message, exc.kind, start_hash, status)
    except Exception as exc:  # a provider bug must not take the app down
        # The run's message carries the error to whoever reports it (the CLI's one line, the app's
        # dialog): logged at ERROR too, a terminal showed it twice, the second time with a traceback.
        log.debug("provider %s failed", name, exc_info=True)
        return failed(f"{name}: unexpected error: {exc or type(exc).__name__}", "internal", start_hash)
    if cancel():
        return failed("cancelled by the operator", "cancelled", start_hash, "cancelled")

    progress(92, "Reading the reply")
    if not js_trim(reply or ""):
        return failed(f"{name} returned an empty reply", "empty_reply", start_hash)
    try:
        result = parse_insight_extraction_response(reply, now=moment)
    except InsightParseError as exc:
        return failed(f"{name}'s reply is not the extraction JSON: {exc}", "bad_reply", start_hash)

    try:
        new = [i for i in result.insights if not is_duplicate_insight(existing, i.content)]
        duplicates = count_duplicate_insights(existing, result.insights)
        prune_status, prune_message, pruning = _prune_review(root, result.pruned_memory, start_hash)
        proposal_id = None
        if new or prune_status in ("pending", "stale", "invalid"):
            proposal = save_new_proposal(
                root, provider=name, summary=result.summary, insights=new, pruned_memory=result.pruned_memory,
                memory_hash_at_start=start_hash, prune_status=prune_status, prune_message=prune_message,
                duplicate_count=duplicates, origin=origin, now=moment, prune_reasons=result.prune_reasons)
            proposal_id = proposal.id
            pruning = PruneOutcome(pruning.applied, f"{pruning.reason} (proposal {proposal.id})",
                                   pruning.size_delta, pruning.original_size, pruning.new_size) \
                if prune_status == "pending" else pruning
    except Exception as exc:
        log.debug("storing the proposal failed", exc_info=True)  # reported once, in the run's message
        return failed(f"the reply could not be stored for review: {_reason(exc, 'write')}", "internal", start_hash)

    extraction = MemoryExtractionMetadata(run_at, True, len(new), duplicates, duplicates,
                                          result.summary or "No summary", None)
    record_audit(root, extraction=extraction, pruning=pruning, now=now)
    count = f"{len(new)} new insight{'' if len(new) == 1 else 's'}"
    if duplicates:
        count += f" ({duplicates} already known)"
    review = f"; proposal {proposal_id} waits for review" if proposal_id else "; nothing to review"
    progress(100, "Done")
    return ExtractionRun("ok", f"{count}. {prune_message}{review}", result, start_hash, proposal_id, name,
                         run_at, None, prune_status, prune_message)


class _SavedReply:
    """A "provider" that answers with a reply saved earlier, so an import is stored as a run's reply is."""

    def __init__(self, name: str, text: str) -> None:
        self.name, self.text = name, text

    def complete(self, request: Any, *, cancel: Any = None, progress: Any = None) -> str:
        """Return the saved reply."""
        return self.text


def store_imported_reply(root: Path | str, text: str, source_name: str, *,
                         now: datetime | None = None) -> ExtractionRun:
    """Store a saved AI extraction reply as a proposal for review, exactly as a run stores a model's reply.

    The reply goes through :func:`core.automation.extraction.run_extraction` (insights already in the file left
    out, prune validated and checked against the memory, audit written), so an imported reply and
    a live one are reviewed the same way. Text that is not an extraction reply raises
    :class:`ProposalError` (``BAD_REPLY``) and nothing at all is written.
    """
    try:
        parse_insight_extraction_response(text)
    except InsightParseError as exc:
        raise ProposalError(f"{source_name} is not an extraction reply: {exc}", "BAD_REPLY") from exc
    return run_extraction(root, _SavedReply(f"{source_name} (imported)", text), now=now, origin="import")
