"""What the operator reads about a proposal or an extraction run: one-line titles, labels, outcomes.

Pure functions over core data (no widgets), shared by the insights view, the prune view and the
extraction dialog so that each says the same thing the same way.
"""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime

from core.automation.extraction import ExtractionRun
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
    """``1 insight``, ``2 insights``, ``1,200 insights``."""
    return f"{count:,} {word}{'' if count == 1 else 's'}"


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


# -- a proposal's text on screen -------------------------------------------------------------------
_CODE_RE = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_BOLD_RE = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_STAR_RE = re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])")
_UNDERSCORE_RE = re.compile(r"(?<![\w_])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![\w_])")
_LINK_RE = re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)")


def _emphasis(escaped: str) -> str:
    text = _LINK_RE.sub(r"<u>\1</u>", escaped)
    text = _BOLD_RE.sub(r"<b>\2</b>", text)
    text = _STAR_RE.sub(r"<i>\1</i>", text)
    return _UNDERSCORE_RE.sub(r"<i>\1</i>", text)


def inline_html(markdown: str) -> str:
    """Markdown's inline code, emphasis and links as HTML; everything else escaped (no raw HTML gets through).

    Line breaks inside the text become spaces, as markdown joins a paragraph's lines.
    """
    text = " ".join(markdown.replace("\x00", "").split("\n"))
    codes: list[str] = []

    def park(match: re.Match[str]) -> str:
        # Code spans wait as placeholders so that emphasis around them (**`x`**) still applies.
        code = match.group(2)
        codes.append(f"<code>{html.escape(code.strip() or code, quote=False)}</code>")
        return f"\x00{len(codes) - 1}\x00"

    parked = _CODE_RE.sub(park, text)
    rendered = _emphasis(html.escape(parked, quote=False))
    return re.sub(r"\x00(\d+)\x00", lambda m: codes[int(m.group(1))], rendered)


# -- where a proposal came from --------------------------------------------------------------------
_MARKUP_RE = re.compile(r"[`*_]|\(source:[^)]*\)")
_WORD_RE = re.compile(r"\w{3,}")
_TOKEN_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*-\d+|#\d+")  # TP-31, GH-12, #88
_SECTION_RE = re.compile(r"§\s*(.+?)\s*$")


def _normal(text: str) -> str:
    return " ".join(_MARKUP_RE.sub("", text).lower().split())


def find_source_lines(memory: str, proposals: list[tuple[str, str | None]]) -> list[int | None]:
    """The 1-based line of ``memory`` each ``(content, source)`` came from, or ``None`` when not found.

    Tried in order: a line holding the content's first words; a ticket-like token of the source
    (``TP-31``); the line sharing most of the content's words (at least 60 %); the heading named
    after ``§`` in the source (``memory.md § Pitfalls``).
    """
    lines = memory.split("\n")
    normal = [_normal(line) for line in lines]
    words = [set(_WORD_RE.findall(line)) for line in normal]
    return [_find_one(lines, normal, words, content, source) for content, source in proposals]


def _find_one(lines: list[str], normal: list[str], words: list[set[str]], content: str,
              source: str | None) -> int | None:
    target = _normal(content)
    for probe in (target[:60], target.split(": ", 1)[0][:60]):
        if len(probe) >= 8:
            hit = next((i for i, line in enumerate(normal) if probe in line), None)
            if hit is not None:
                return hit + 1
    for token in _TOKEN_RE.findall(source or ""):
        pattern = re.compile(rf"(?<![\w-]){re.escape(token)}(?![\w])", re.IGNORECASE)
        hit = next((i for i, line in enumerate(lines) if pattern.search(line)), None)
        if hit is not None:
            return hit + 1
    wanted = set(_WORD_RE.findall(target))
    if len(wanted) >= 3:
        score, best = max(((len(wanted & found), i) for i, found in enumerate(words)), default=(0, -1),
                          key=lambda pair: (pair[0], -pair[1]))
        if score >= 0.6 * len(wanted):
            return best + 1
    section = _SECTION_RE.search(source or "")
    if section:
        heading = f"## {section.group(1).strip().lower()}"
        hit = next((i for i, line in enumerate(lines) if line.strip().lower() == heading), None)
        if hit is not None:
            return hit + 1
    return None
