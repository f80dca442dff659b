"""What the operator reads about a proposal or an extraction run: one-line titles, labels, outcomes.

Pure functions over core data (no widgets), shared by the insights view, the prune view and the
extraction dialog so that each says the same thing the same way.
"""

from __future__ import annotations

from datetime import UTC, datetime

from core.extraction import ExtractionRun
from core.proposals import Proposal

PRUNE_STATE = {
    "pending": "prune ready for review",
    "stale": "prune stale (the memory changed while the model answered)",
    "invalid": "prune cannot be applied (it drops required sections)",
    "none": "no prune proposed",
    "applied": "prune applied",
    "rejected": "prune rejected",
}
PRUNE_SHORT = {"pending": "prune to review", "stale": "prune stale", "invalid": "prune invalid",
               "none": "no prune", "applied": "prune applied", "rejected": "prune rejected"}
STALE_BANNER = "The memory changed since this extraction ran — run a new extraction to prune."

# What to check after a failed run, by ProviderError kind (or run_extraction's own kinds).
FAILURE_HINTS = {
    "auth": "Check that the environment variable named in Model providers… holds a valid API key.",
    "server": "The endpoint failed on its side; try again later.",
    "timeout": "The model did not answer in time; raise the provider's timeout in Model providers…, or try again.",
    "network": "Check the provider's base URL and that the endpoint is reachable.",
    "bad_reply": "The model did not answer with the extraction JSON; try again or use another model.",
    "empty_reply": "The model sent nothing back; try again or use another model.",
    "config": "Fix the provider in Model providers….",
    "empty_memory": "Write something in the memory first.",
}


def plural(count: int, word: str) -> str:
    """``1 insight``, ``2 insights``."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def format_when(timestamp: str) -> str:
    """``2026-12-01T09:30:00.000Z`` → ``1 Dec 2026, 09:30 UTC`` (the text itself when unreadable)."""
    try:
        moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00")).astimezone(UTC)
    except ValueError:
        return timestamp
    return f"{moment.day} {moment:%b %Y, %H:%M} UTC"


def proposal_label(proposal: Proposal) -> str:
    """A picker entry: ``1 Dec 2026, 09:30 UTC · test-llm · 5 insights, prune to review``."""
    pending = len(proposal.pending_insights)
    insights = plural(pending, "insight") if pending else "insights reviewed"
    return f"{format_when(proposal.created_at)} · {proposal.provider} · {insights}, {PRUNE_SHORT[proposal.prune_status]}"


def proposal_origin(proposal: Proposal) -> str:
    """``test-llm, 1 Dec 2026, 09:30 UTC`` (an import says so)."""
    return f"{proposal.provider}, {format_when(proposal.created_at)}"


def proposal_facts(proposal: Proposal) -> str:
    """What the proposal holds: its insights (and those left out as already known) and its prune."""
    text = plural(len(proposal.insights), "new insight")
    if proposal.duplicate_count:
        text += f" ({proposal.duplicate_count} already in the file, left out)"
    return f"{text} · {PRUNE_STATE[proposal.prune_status]}"


def run_outcome(run: ExtractionRun, proposal: Proposal | None) -> str:
    """The status-bar line for a finished run."""
    if run.status == "cancelled":
        return "Extraction cancelled; nothing was stored"
    if not run.ok:
        return f"Extraction failed: {run.message}"
    if proposal is None:
        return "Extraction done: nothing new to review"
    known = f" ({proposal.duplicate_count} already known)" if proposal.duplicate_count else ""
    return (f"Extraction done: {plural(len(proposal.insights), 'insight')} proposed{known}, "
            f"{PRUNE_STATE[proposal.prune_status]}")


def failure_hint(run: ExtractionRun) -> str:
    """What the operator can do about a failed run (``""`` when there is nothing to suggest)."""
    return FAILURE_HINTS.get(run.error_kind or "", "")
