"""Fusion's dreams and compaction formats: prompts, reply parsing and the bytes each run appends or writes.

Read from Fusion (MIT, Runfusion/Fusion), never copied as code; the prompt texts are reproduced byte for
byte because a model provider must receive what Fusion sends:

* dreams: ``packages/core/src/memory-dreams.ts`` at ``f4de01a1531bbcfd1aedddbd8c2598a19a8ee619``
  (``buildDreamProcessingPrompt``, ``extractDreamProcessorResult``, ``processMemoryDreams``,
  ``processAgentMemoryDreams``, ``ensureAgentMemoryFiles``);
* compaction: ``packages/core/src/memory/memory-compaction.ts`` at
  ``34e0e664d2013e8337f8367ab7bf4c18eb2fee00`` (``COMPACT_MEMORY_SYSTEM_PROMPT``,
  ``compactMemoryWithAi``: the reply is the compacted markdown, trimmed; empty is an error).

Fusion appends ``\\n## D\\n\\n<dreams>\\n`` to DREAMS.md, ``\\n## Dream Updates D\\n\\n<updates>\\n`` to
MEMORY.md, and resets the daily note to ``# Daily Memory D\\n\\n<!-- Processed into dreams on <ISO> -->\\n``
(an agent's: ``# Agent Daily Memory D ...``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from core.documents.layout import (  # one copy: core.documents.layout
    AGENT_DAILY_COMMENT,
    AGENT_DREAMS_SCAFFOLD,
    agent_memory_scaffold,
)
from core.insights._text import iso_timestamp, js_trim
from core.storage.fileio import MAX_FILE_SIZE

__all__ = [
    "AGENT_DREAMS_SCAFFOLD",
    "COMPACT_MEMORY_SYSTEM_PROMPT",
    "DEFAULT_AUTO_SUMMARIZE_SCHEDULE",
    "DEFAULT_AUTO_SUMMARIZE_THRESHOLD",
    "DEFAULT_MEMORY_DREAMS_SCHEDULE",
    "DreamReply",
    "ReplyRefused",
    "agent_memory_scaffold",
    "build_dream_prompt",
    "dream_updates_block",
    "dreams_block",
    "is_processed",
    "parse_compaction_reply",
    "parse_dream_reply",
    "processed_marker",
]

DEFAULT_MEMORY_DREAMS_SCHEDULE = "0 4 * * *"
DEFAULT_AUTO_SUMMARIZE_SCHEDULE = "0 3 * * *"
DEFAULT_AUTO_SUMMARIZE_THRESHOLD = 50_000
PROCESSED_RE = re.compile(r"<!-- Processed into dreams on [^\n]*-->")
_PROJECT_INTRO = "You are processing project memory in an OpenClaw-style memory system."

COMPACT_MEMORY_SYSTEM_PROMPT = """You are a memory distillation assistant for a software development project.

Your job is to compress the provided project memory markdown into a shorter version that preserves only the most important information.

## Guidelines
- Preserve only the most important architectural conventions and patterns
- Preserve critical pitfalls and anti-patterns to avoid
- Preserve significant decisions and their rationale
- Remove redundant examples, outdated information, and trivial details
- Maintain the markdown format and structure
- Output ONLY the compacted markdown - no explanations or commentary
- Be aggressive in trimming while keeping essential knowledge

## What to KEEP:
- Key architectural patterns and their rationale
- Important conventions that agents must follow
- Critical pitfalls and how to avoid them
- Major project decisions and their context
- Security-sensitive patterns

## What to REMOVE:
- Verbose examples that can be inferred
- Minor implementation details
- Outdated or superseded information
- Repetitive explanations
- Trivial gotchas that aren't critical

Return only the compacted markdown content."""


class ReplyRefused(ValueError):
    """A model reply that cannot be staged: malformed, huge, or dropping what must stay. Nothing is written."""


def scaffold_lines() -> frozenset[str]:
    """Every line of Fusion's scaffolds (titles aside): text a run may drop without losing memory."""
    from core.documents.layout import DREAMS_SCAFFOLD, LONG_TERM_SCAFFOLD, SEED_SCAFFOLD, daily_scaffold

    texts = (LONG_TERM_SCAFFOLD, DREAMS_SCAFFOLD, SEED_SCAFFOLD, daily_scaffold("0000-00-00"), AGENT_DREAMS_SCAFFOLD,
             agent_memory_scaffold(), AGENT_DAILY_COMMENT)
    return frozenset(line for text in texts for line in text.split("\n") if line.startswith("<!--"))


def build_dream_prompt(day: str, long_term: str, daily: str, previous_dreams: str, *,
                       agent_id: str | None = None, agent_name: str | None = None) -> str:
    """Fusion's ``buildDreamProcessingPrompt`` (with its agent first line when ``agent_id`` is given)."""
    prompt = f"""{_PROJECT_INTRO}

Read today's daily notes and existing long-term memory. Produce:
1. DREAMS: synthesized patterns, open loops, contradictions, and emerging themes.
2. LONG_TERM_UPDATES: only durable conventions, decisions, pitfalls, or constraints worth keeping.

Rules:
- Do not copy task logs or changelog entries.
- Do not invent facts not present in the input.
- Keep output concise and actionable.
- Return exactly these Markdown headings:

## DREAMS

## LONG_TERM_UPDATES

Date: {day}

## Existing Long-Term Memory

{long_term or "(empty)"}

## Previous Dreams

{previous_dreams or "(empty)"}

## Daily Notes

{daily or "(empty)"}
"""
    if agent_id is not None:
        prompt = prompt.replace(_PROJECT_INTRO, f"You are processing private memory for agent {agent_name or agent_id} "
                                                f"({agent_id}) in an OpenClaw-style memory system.", 1)
    return prompt


@dataclass(frozen=True)
class DreamReply:
    """What a dream reply holds: the DREAMS text and the LONG_TERM_UPDATES text (each trimmed, maybe empty)."""

    dreams: str
    long_term_updates: str


_DREAMS_RE = re.compile(r"## DREAMS\s*([\s\S]*?)(?=## LONG_TERM_UPDATES|\Z)", re.IGNORECASE)
_UPDATES_RE = re.compile(r"## LONG_TERM_UPDATES\s*([\s\S]*?)\Z", re.IGNORECASE)


def _check_size(reply: str, limit: int) -> None:
    size = len(reply.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise ReplyRefused(f"the reply is {size:,} bytes, over the {limit:,}-byte limit of a memory document")
    try:
        reply.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate (JSON "\ud800") cannot be written to a UTF-8 file
        raise ReplyRefused(f"the reply is not valid text: a lone surrogate {reply[exc.start]!r} at character "
                           f"{exc.start:,}") from exc


def parse_dream_reply(reply: object, *, limit: int = MAX_FILE_SIZE) -> DreamReply:
    """Fusion's ``extractDreamProcessorResult``, strict: a reply without the ``## DREAMS`` heading is refused
    (Fusion would still reset the daily note and lose it), so is one over ``limit`` bytes."""
    if not isinstance(reply, str):
        raise ReplyRefused(f"the reply is {type(reply).__name__}, not text")
    _check_size(reply, limit)
    dreams = _DREAMS_RE.search(reply)
    if dreams is None:
        raise ReplyRefused("the reply has no '## DREAMS' section (Fusion's dream reply format is "
                           "'## DREAMS' then '## LONG_TERM_UPDATES')")
    updates = _UPDATES_RE.search(reply)
    result = DreamReply(js_trim(dreams.group(1)), js_trim(updates.group(1)) if updates else "")
    if not result.dreams and not result.long_term_updates:
        raise ReplyRefused("the reply's '## DREAMS' and '## LONG_TERM_UPDATES' sections are both empty")
    return result


def parse_compaction_reply(reply: object, original: str, *, limit: int = MAX_FILE_SIZE) -> str:
    """The compacted markdown of a model reply (trimmed, one final newline), or :class:`ReplyRefused`.

    Refused: not text, empty (Fusion's "AI returned empty response"), over ``limit`` bytes, wrapped in
    prose instead of being markdown, or dropping one of the standard ``##`` sections the original had
    (other sections may be merged away; the conservation check shows what their facts became).
    """
    if not isinstance(reply, str):
        raise ReplyRefused(f"the reply is {type(reply).__name__}, not text")
    _check_size(reply, limit)
    text = js_trim(reply)
    fenced = re.fullmatch(r"```(?:markdown|md)?\n([\s\S]*?)\n```", text)
    if fenced:
        text = js_trim(fenced.group(1))
    if not text:
        raise ReplyRefused("the reply is empty (AI returned empty response)")
    if "\x00" in text:
        raise ReplyRefused("the reply holds a NUL character")
    new_sections = set(section_titles(text))
    missing = [title for title in section_titles(original) if title in REQUIRED_SECTIONS and title not in new_sections]
    if missing:
        shown = ", ".join(f"'## {t}'" for t in missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise ReplyRefused(f"the reply drops {len(missing)} section{'s' if len(missing) != 1 else ''} of the document: "
                           f"{shown}")
    if original.startswith("#") and not text.startswith("#"):
        raise ReplyRefused("the reply does not start with the document's title; it looks like prose, not the "
                           "compacted markdown")
    return text + "\n"


#: The scaffolds' sections (both layouts): a compaction keeps each one the document has.
REQUIRED_SECTIONS = frozenset({"Architecture", "Decisions", "Conventions", "Pitfalls", "Context"})
_SECTION_RE = re.compile(r"^##[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)


def section_titles(text: str) -> list[str]:
    """The ``##`` headings of ``text`` outside fenced code, in order, without duplicates."""
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith("```") or stripped.startswith("~~~"):
            mark = stripped[:3]
            fence = None if fence == mark else (fence or mark)
            continue
        if fence is None:
            m = _SECTION_RE.match(line)
            if m and m.group(1) not in out:
                out.append(m.group(1))
    return out


def dreams_block(day: str, dreams: str) -> str:
    """What Fusion appends to DREAMS.md."""
    return f"\n## {day}\n\n{dreams}\n"


def dream_updates_block(day: str, updates: str) -> str:
    """What Fusion appends to MEMORY.md."""
    return f"\n## Dream Updates {day}\n\n{updates}\n"


def processed_marker(day: str, moment: datetime, *, agent: bool = False) -> str:
    """A daily note after dream processing (Fusion's ``writeFile`` of the processed marker)."""
    title = "Agent Daily Memory" if agent else "Daily Memory"
    return f"# {title} {day}\n\n<!-- Processed into dreams on {iso_timestamp(moment)} -->\n"


def is_processed(text: str) -> bool:
    """Whether a daily note already holds Fusion's processed marker."""
    return PROCESSED_RE.search(text) is not None
