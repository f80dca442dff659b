"""The extraction prompt, the parser of the AI's reply, and when an extraction is due (Fusion's rules).

The prompt is Fusion's ``buildInsightExtractionPrompt`` text, byte for byte, with one addition: a
``## Working Memory Pruning`` block (Fusion's own pruning guidelines, which it only gave to the
scheduled automation) so the reply may carry a ``prunedMemory`` candidate.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from core.insights._text import iso_timestamp, js_trim, parse_timestamp, scrub_surrogates, to_utc
from core.insights.merge import default_insights_template, merge_insights, parse_insights_markdown
from core.insights.model import (
    DEFAULT_MIN_INTERVAL_MS,
    INSIGHT_CATEGORIES,
    MIN_INSIGHT_GROWTH_CHARS,
    InsightExtractionResult,
    InsightParseError,
    MemoryInsight,
    PruneReason,
)
from core.settings.model import ProjectSettings, raw_setting

# merge_insights, default_insights_template and parse_insights_markdown live in merge.py (kept
# small); they are re-exported here, their place in Fusion's module layout.
__all__ = [
    "PRUNE_GUIDELINES",
    "PRUNE_REASONS_GUIDE",
    "build_insight_extraction_prompt",
    "default_insights_template",
    "merge_insights",
    "parse_insight_extraction_response",
    "parse_insights_markdown",
    "should_trigger_extraction",
]

_PROMPT_HEAD = """You are a memory analysis agent. Your task is to extract valuable insights from accumulated working memory.

## Working Memory (accumulated observations and learnings)
{working_memory}
{existing_section}
## Your Task
Analyze the working memory and extract insights that should be preserved for the long-term memory.
Focus on:
1. **Patterns**: Recurring themes or approaches that work well
2. **Principles**: Key decisions and their rationale
3. **Conventions**: Project-specific standards or practices
4. **Pitfalls**: Known issues to avoid
5. **Context**: Important background information

"""

PRUNE_GUIDELINES = """After extracting insights, also produce a PRUNED version of working memory containing ONLY durable items:

**MUST PRESERVE (durable items):**
- Architecture: Project structure, key abstractions, major components
- Conventions: Coding standards, naming patterns, established practices
- Pitfalls: Known issues to avoid, anti-patterns to watch for
- Context: Important background that informs decision-making
- Any section header (## <name>) should stay if it contains durable content

**SHOULD PRUNE (transient items):**
- One-time observations from completed tasks
- Task-specific implementation notes
- Outdated or superseded entries
- Verbose explanations that can be condensed
- Entries that are now obvious/common knowledge

**CRITICAL REQUIREMENTS:**
- You MUST preserve at least 2 of these 3 core sections: Architecture, Conventions, Pitfalls
- If working memory doesn't have enough durable content to justify pruning, omit `prunedMemory` entirely (do not force a prune)
- The `prunedMemory` field should be a complete, valid markdown file that can replace `.fusion/memory.md`
"""

# memdesk's own addition to the reply: an optional reason per dropped line, shown beside the line
# in the prune review. A reply without it parses as before.
PRUNE_REASONS_GUIDE = """
**REASONS (optional):** with `prunedMemory`, you may add `"pruneReasons": [{"line": "<a line you removed, \
exactly as it was>", "reason": "<why it can go, a few words>"}]` to the JSON object, one entry per removed line.
"""

_PRUNE_SECTION = "## Working Memory Pruning\n" + PRUNE_GUIDELINES + PRUNE_REASONS_GUIDE + "\n"

_PROMPT_TAIL = """## Output Format
Return ONLY a JSON object with this exact structure (no markdown fences, no extra text):
{
  "summary": "Brief summary of what was extracted",
  "insights": [
    {
      "category": "pattern",
      "content": "The insight text",
      "source": "Optional reference to what triggered this insight"
    }
  ],
  "prunedMemory": "The complete pruned markdown for .fusion/memory.md, or null when pruning is not justified"
}

Category must be one of: "pattern", "principle", "convention", "pitfall", "context".
Only include insights not already present in the existing insights.
If no new insights are found, return: {"summary": "No new insights found", "insights": []}"""

_PARSE_ERROR_PREFIX = "Failed to parse insight extraction response as JSON: "


def build_insight_extraction_prompt(working_memory: str, existing_insights: str | None) -> str:
    """Build the AI prompt: Fusion's extraction prompt plus its pruning guidelines."""
    existing_section = (
        f"\n## Existing Insights (already captured — do not duplicate)\n{existing_insights}\n"
        if existing_insights
        else ""
    )
    head = _PROMPT_HEAD.format(working_memory=working_memory, existing_section=existing_section)
    return head + _PRUNE_SECTION + _PROMPT_TAIL


def _strip_fence(text: str) -> str | None:
    # Same match as Fusion's /```(?:json)?\s*\n?([\s\S]*?)\n?\s*```/ without the regex, whose
    # lazy body before \s* backtracks catastrophically on a long unclosed fence (minutes for 5 KB).
    start = text.find("```")
    if start == -1:
        return None
    body = start + 3
    if text.startswith("json", body):
        body += 4
    while body < len(text) and text[body].isspace():
        body += 1
    end = text.find("```", body)
    if end == -1:
        return None
    return text[body:end]


def _outer_object(text: str) -> str:
    first = text.find("{")
    if first != -1:
        last = text.rfind("}")
        if last > first:
            return text[first : last + 1]
    return text


def _json_candidates(text: str) -> list[str]:
    """Fusion's reading first (fenced body, then its outer braces), then the whole reply's braces.

    The fallback fixes a Fusion bug: a ```json reply whose prunedMemory holds a code fence of its
    own was cut at that inner fence and rejected.
    """
    fenced = _strip_fence(text)
    first = _outer_object(js_trim(fenced) if fenced is not None else text)
    whole = _outer_object(text)
    return [first] if whole == first else [first, whole]


def _reject_constant(name: str) -> Any:
    # JSON.parse knows no NaN/Infinity; neither do we.
    raise ValueError(f"invalid JSON constant {name}")


def _parse_error(response: str) -> InsightParseError:
    return InsightParseError(_PARSE_ERROR_PREFIX + response[:200])


def _category(value: Any) -> str:
    return value if isinstance(value, str) and value in INSIGHT_CATEGORIES else "context"


def parse_insight_extraction_response(response: str, *, now: datetime | None = None) -> InsightExtractionResult:
    """Parse the AI's reply (raw JSON, fenced, or after prose); raise :class:`InsightParseError` if unreadable.

    Insights without non-blank string content are dropped, unknown categories become ``context``,
    and a blank ``prunedMemory`` counts as none. The optional ``pruneReasons`` (memdesk's addition:
    ``[{"line": "<removed line>", "reason": "..."}]``) is kept with a prune; malformed entries are skipped.
    """
    if not isinstance(response, str):
        raise InsightParseError(_PARSE_ERROR_PREFIX + repr(response)[:200])
    parsed = None
    for candidate in _json_candidates(js_trim(response)):
        try:
            parsed = json.loads(candidate, parse_constant=_reject_constant)
        except (ValueError, RecursionError):
            continue
        if isinstance(parsed, dict):
            break
    if parsed is None:
        raise _parse_error(response)
    if not isinstance(parsed, dict):
        raise _parse_error(response)

    stamp = iso_timestamp(now)
    summary = scrub_surrogates(parsed["summary"]) if isinstance(parsed.get("summary"), str) else ""
    insights: list[MemoryInsight] = []
    items = parsed.get("insights")
    if isinstance(items, list):
        for item in items:
            if not isinstance(item, Mapping):
                continue
            content = item.get("content")
            if not isinstance(content, str) or not js_trim(content):
                continue
            source = item.get("source")
            source = js_trim(source) if isinstance(source, str) else None
            insights.append(
                MemoryInsight(
                    category=_category(item.get("category")),
                    content=scrub_surrogates(js_trim(content)),
                    source=scrub_surrogates(source) if source else None,
                    extracted_at=stamp,
                )
            )
    pruned = parsed.get("prunedMemory")
    pruned_memory = scrub_surrogates(js_trim(pruned)) if isinstance(pruned, str) and js_trim(pruned) else None
    reasons = _prune_reasons(parsed.get("pruneReasons")) if pruned_memory is not None else ()
    return InsightExtractionResult(tuple(insights), summary, stamp, pruned_memory, reasons)


def _prune_reasons(value: Any) -> tuple[PruneReason, ...]:
    if not isinstance(value, list):
        return ()
    found = (PruneReason.from_json(item) for item in value)
    return tuple(PruneReason(scrub_surrogates(r.line), scrub_surrogates(r.reason)) for r in found if r is not None)


def should_trigger_extraction(
    last_run: datetime | str | None,
    settings: ProjectSettings | Mapping[str, Any] | None,
    working_memory_size: int,
    last_memory_size: int | None,
    now: datetime | None = None,
) -> bool:
    """Fusion's rule: content exists, and (never run, or min interval elapsed and growth ≥ 1000 chars)."""
    if working_memory_size == 0:
        return False
    if last_run is None or last_run == "":
        return working_memory_size > 0
    min_interval = raw_setting(settings, "insightExtractionMinIntervalMs", "insight_extraction_min_interval_ms")
    if min_interval is None:
        min_interval = DEFAULT_MIN_INTERVAL_MS
    last = parse_timestamp(last_run)
    if last is None:
        # An unreadable timestamp makes Fusion's elapsed time NaN, which never blocks a run.
        elapsed_ms = float("nan")
    else:
        elapsed_ms = (to_utc(now or datetime.now(UTC)) - last).total_seconds() * 1000
    if elapsed_ms < min_interval:
        return False
    if last_memory_size is not None and working_memory_size - last_memory_size < MIN_INSIGHT_GROWTH_CHARS:
        return False
    return True
