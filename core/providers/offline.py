"""The offline provider: a rule-based extractor that needs no model and sends nothing anywhere.

It reads the working memory directly and answers in the extraction JSON format:

* insights are the top-level bullets of the standard sections — ``## Architecture`` gives
  ``principle`` (a bullet that says never/always/must/should/only…) or ``pattern``,
  ``## Conventions`` gives ``convention``, ``## Pitfalls`` ``pitfall``, ``## Context`` ``context``;
  bullets already in the insights file and transient bullets are left out;
* ``prunedMemory`` is the memory minus appended dated entries (``<!-- YYYY-MM-DD -->``) older than
  N days and obviously transient bullets ("TODO for this session", "waiting on review", …), offered
  only when that removes something and the result keeps the required sections; else ``null``;
  ``pruneReasons`` says for each removed line why ("dated entry older than 30 days", "transient");
  entries marked ``[superseded DATE]`` (the memory firewall's marker) are offered for removal too
  ("superseded on DATE") and never become insights;
* the summary says that the extraction is rule-based.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from core.firewall.supersede import superseded_on
from core.insights import is_duplicate_insight, validate_prune_candidate
from core.providers.base import (
    CancelCheck,
    ProgressCallback,
    ProviderError,
    ProviderRequest,
    never_cancelled,
    no_progress,
)

__all__ = ["SECTION_CATEGORIES", "OfflineProvider", "rule_based_reply"]

SECTION_CATEGORIES: dict[str, str] = {
    "Architecture": "pattern",
    "Conventions": "convention",
    "Pitfalls": "pitfall",
    "Context": "context",
}
_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
_DATED_RE = re.compile(r"^<!--\s*(\d{4}-\d{2}-\d{2})\s*-->\s*$")
_BULLET_RE = re.compile(r"^[-*+]\s+(.*)$")
_NESTED_BULLET_RE = re.compile(r"^\s+[-*+]\s+(.*)$")
_PRINCIPLE_RE = re.compile(r"(?i)\b(never|always|must|should|only|don't|do not|intentional(?:ly)?)\b")
_TRANSIENT_RE = re.compile(
    r"(?i)(\btodo for this session\b|\bfor this session\b|\bin this session\b|\bcurrently mid-way\b"
    r"|\bmid-way through\b|\bwaiting (?:on|for) review\b|\bre-?ran and it passed\b|\bprobably nothing\b"
    r"|\bnothing merged yet\b|\bnot finished\b|\bon my run\b|^wip\b)"
)


@dataclass
class _Block:
    """A run of lines: a top-level bullet with its continuation, or a dated entry."""

    start: int
    end: int  # exclusive
    section: str | None
    kind: str  # "bullet" | "dated"
    text: str
    day: date | None = None
    nested: list[str] = field(default_factory=list)


def _scan(lines: list[str]) -> list[_Block]:
    blocks: list[_Block] = []
    section: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        heading = _HEADING_RE.match(line)
        dated = _DATED_RE.match(line)
        bullet = _BULLET_RE.match(line)
        if heading:
            section = heading.group(2) if len(heading.group(1)) == 2 else section
            i += 1
        elif dated:
            j = i + 1
            while j < len(lines) and not _DATED_RE.match(lines[j]) and not _HEADING_RE.match(lines[j]):
                j += 1
            try:
                day = date.fromisoformat(dated.group(1))
            except ValueError:
                day = None
            body = " ".join(" ".join(lines[i + 1 : j]).split())
            blocks.append(_Block(i, j, section, "dated", body, day))
            i = j
        elif bullet:
            j = i + 1
            parts, nested = [bullet.group(1).strip()], []
            while j < len(lines) and lines[j].strip() and lines[j][:1].isspace():
                sub = _NESTED_BULLET_RE.match(lines[j])
                if sub:
                    nested.append(sub.group(1).strip())
                elif nested:
                    nested[-1] += " " + lines[j].strip()
                else:
                    parts.append(lines[j].strip())
                j += 1
            blocks.append(_Block(i, j, section, "bullet", " ".join(" ".join(parts).split()), nested=nested))
            i = j
        else:
            i += 1
    return blocks


def _is_transient(block: _Block) -> bool:
    return bool(_TRANSIENT_RE.search(block.text))


def _insights(blocks: list[_Block], existing: str | None) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for block in blocks:
        category = SECTION_CATEGORIES.get(block.section or "")
        if block.kind != "bullet" or category is None or _is_transient(block) or superseded_on(block.text):
            continue
        content = block.text
        if block.nested:
            content = f"{content.rstrip(':')}: " + "; ".join(block.nested) if content else "; ".join(block.nested)
        if not content or is_duplicate_insight(existing, content):
            continue
        if category == "pattern" and _PRINCIPLE_RE.search(content):
            category = "principle"
        out.append({"category": category, "content": content, "source": f"memory.md § {block.section}"})
    return out


def _without(lines: list[str], removed: set[int]) -> str:
    kept: list[str] = []
    for idx, line in enumerate(lines):
        if idx in removed:
            continue
        # Drop a blank line that only follows another blank because a block between them went away.
        if not line.strip() and idx - 1 in removed and (not kept or not kept[-1].strip()):
            continue
        kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept) + "\n"


@dataclass(frozen=True)
class _Prune:
    candidate: str | None
    old_entries: int = 0
    transient: int = 0
    reasons: tuple[dict[str, str], ...] = ()


_WORD_RE = re.compile(r"[a-z][a-z0-9_]*")


def _words(text: str) -> set[str]:
    return set(_WORD_RE.findall(text.casefold())) - {"superseded"}


def _successor(block: _Block, kept: list[_Block]) -> _Block | None:
    """The kept block sharing the most words (at least 30%) with the superseded ``block``; a later one on a tie."""
    words, best, best_score = _words(block.text), None, 0.3
    for other in kept:
        theirs = _words(other.text)
        score = len(words & theirs) / len(words | theirs) if words | theirs else 0.0
        if score > best_score or (score == best_score and best is not None and other.start > block.start):
            best, best_score = other, score
    return best


def _prune(lines: list[str], blocks: list[_Block], cutoff: date, days: int) -> _Prune:
    removed: set[int] = set()
    reasons: list[dict[str, str]] = []
    old_entries = transient = 0
    kept = [b for b in blocks if not superseded_on(b.text) and not _is_transient(b)
            and not (b.kind == "dated" and b.day is not None and b.day < cutoff)]
    for block in blocks:
        superseded = superseded_on(block.text)
        if superseded:  # the memory firewall's marker (docs/firewall.md): agents still load it, so offer to drop it
            transient += 1
            successor = _successor(block, kept)
            by = f' by "{successor.text[:80]}"' if successor is not None else ""
            reason = f"superseded on {superseded}{by}"
        elif block.kind == "dated" and block.day is not None and block.day < cutoff:
            old_entries += 1
            reason = f"dated entry older than {days} days"
        elif _is_transient(block):
            transient += 1
            reason = "transient"
        else:
            continue
        removed.update(range(block.start, block.end))
        reasons.extend({"line": lines[i], "reason": reason} for i in range(block.start, block.end) if lines[i].strip())
    if not removed:
        return _Prune(None)
    candidate = _without(lines, removed)
    if not validate_prune_candidate(candidate).valid:
        return _Prune(None)
    return _Prune(candidate, old_entries, transient, tuple(reasons))


def rule_based_reply(working_memory: str, existing_insights: str | None, *, now: datetime | None = None,
                     prune_after_days: int = 30) -> dict[str, object]:
    """Distil ``working_memory`` by rules; return the extraction reply as a dict (``summary``, ``insights``,
    ``prunedMemory`` and, with a prune, ``pruneReasons``)."""
    lines = working_memory.splitlines()
    blocks = _scan(lines)
    insights = _insights(blocks, existing_insights)
    moment = now or datetime.now(UTC)
    today = (moment.astimezone(UTC) if moment.tzinfo else moment).date()
    prune = _prune(lines, blocks, today - timedelta(days=prune_after_days), prune_after_days)
    pruned, old_entries, transient = prune.candidate, prune.old_entries, prune.transient
    sections = sorted({i["source"].split("§ ", 1)[1] for i in insights})
    summary = (f"Offline rule-based extraction (no model): {len(insights)} insight"
               f"{'' if len(insights) == 1 else 's'} from the bullets of {', '.join(sections) or 'no section'}; ")
    if pruned is not None:
        summary += (f"prune proposed: drops {old_entries} dated entr{'y' if old_entries == 1 else 'ies'} older than "
                    f"{prune_after_days} days and {transient} transient item{'' if transient == 1 else 's'}.")
    else:
        summary += f"no prune proposed (no dated entry older than {prune_after_days} days, no transient item)."
    reply: dict[str, object] = {"summary": summary, "insights": insights, "prunedMemory": pruned}
    if prune.reasons:
        reply["pruneReasons"] = list(prune.reasons)
    return reply


class OfflineProvider:
    """The rule-based extractor as a provider (name ``offline`` by default)."""

    def __init__(self, name: str = "offline", prune_after_days: int = 30) -> None:
        self.name = name
        self.prune_after_days = prune_after_days

    def complete(self, request: ProviderRequest, *, cancel: CancelCheck = never_cancelled,
                 progress: ProgressCallback = no_progress) -> str:
        """Return the rule-based reply as extraction JSON."""
        if cancel():
            raise ProviderError(f"{self.name}: cancelled", "cancelled", self.name)
        progress(0, "Distilling bullets by section (rule-based)")
        reply = rule_based_reply(request.working_memory, request.existing_insights, now=request.now,
                                 prune_after_days=self.prune_after_days)
        progress(100, "Done")
        return json.dumps(reply, ensure_ascii=False, indent=2)
