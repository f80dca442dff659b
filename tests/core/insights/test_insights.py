"""core.insights: files, template, merge, reply parsing, trigger rule, markdown reading, prompt."""

from __future__ import annotations

import json
import time
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from core.errors import MemoryBackendError
from core.insights import (
    CATEGORY_SECTIONS,
    DEFAULT_INSIGHT_SCHEDULE,
    DEFAULT_MIN_INTERVAL_MS,
    INSIGHT_CATEGORIES,
    MEMORY_INSIGHTS_PATH,
    MEMORY_WORKING_PATH,
    MIN_INSIGHT_GROWTH_CHARS,
    InsightBullet,
    InsightParseError,
    MemoryInsight,
    build_insight_extraction_prompt,
    count_duplicate_insights,
    default_insights_template,
    is_duplicate_insight,
    merge_insights,
    merge_insights_detailed,
    parse_insight_extraction_response,
    parse_insights_markdown,
    read_insights_memory,
    read_working_memory,
    should_trigger_extraction,
    write_insights_memory,
    write_working_memory,
)
from core.settings import ProjectSettings

TODAY = "2024-06-15"
TEMPLATE = (
    "# Memory Insights\n\n## Patterns\n<!-- Recurring themes that work well -->\n\n"
    "## Principles\n<!-- Key principles to follow -->\n\n## Conventions\n<!-- Project-specific standards -->\n\n"
    "## Pitfalls\n<!-- Known issues to avoid -->\n\n## Context\n<!-- Important background information -->\n\n"
    "## Last Updated: YYYY-MM-DD\n"
)


def ins(category: str, content: str, source: str | None = None) -> MemoryInsight:
    return MemoryInsight(category, content, source, "2024-06-15T00:00:00.000Z")


# ── seed 000 §4.3 invariants 6–9 and the file helpers ──────────────────────────────────────────


def test_constants_are_the_legacy_paths() -> None:
    assert MEMORY_WORKING_PATH == ".fusion/memory.md"
    assert MEMORY_INSIGHTS_PATH == ".fusion/memory-insights.md"
    assert MIN_INSIGHT_GROWTH_CHARS == 1000
    assert INSIGHT_CATEGORIES == ("pattern", "principle", "convention", "pitfall", "context")
    assert CATEGORY_SECTIONS["pitfall"] == "## Pitfalls"


def test_invariant6_insights_none_when_absent(tmp_path: Path) -> None:
    assert read_insights_memory(tmp_path) is None
    (tmp_path / ".fusion").mkdir()
    assert read_insights_memory(tmp_path) is None


def test_invariant7_write_insights_creates_folder_and_file(tmp_path: Path) -> None:
    write_insights_memory(tmp_path, "# Memory Insights\n")
    assert (tmp_path / ".fusion" / "memory-insights.md").read_bytes() == b"# Memory Insights\n"
    assert read_insights_memory(tmp_path) == "# Memory Insights\n"


def test_invariant7_empty_insights_file_reads_as_empty_string(tmp_path: Path) -> None:
    write_insights_memory(tmp_path, "")
    assert read_insights_memory(tmp_path) == ""


def test_invariant8_insight_defaults() -> None:
    settings = ProjectSettings()
    assert settings.insight_extraction_enabled is False
    assert settings.insight_extraction_schedule == DEFAULT_INSIGHT_SCHEDULE == "0 2 * * *"
    assert settings.insight_extraction_min_interval_ms == DEFAULT_MIN_INTERVAL_MS == 86_400_000


def test_invariant9_working_memory_empty_string_when_absent(tmp_path: Path) -> None:
    assert read_working_memory(tmp_path) == ""


def test_working_memory_round_trip_keeps_bytes(tmp_path: Path) -> None:
    text = "# Project Memory\r\n\r\n## Architecture\r\n- é\n"
    write_working_memory(tmp_path, text)
    assert read_working_memory(tmp_path) == text
    assert (tmp_path / MEMORY_WORKING_PATH).read_bytes() == text.encode("utf-8")


def test_non_utf8_insights_raise_read_failed(tmp_path: Path) -> None:
    (tmp_path / ".fusion").mkdir()
    (tmp_path / MEMORY_INSIGHTS_PATH).write_bytes(b"# Insights\n\xff\xfe\n")
    with pytest.raises(MemoryBackendError) as err:
        read_insights_memory(tmp_path)
    assert err.value.code == "READ_FAILED"


# ── template ─────────────────────────────────────────────────────────────────────────────────


def test_template_is_byte_exact() -> None:
    assert default_insights_template("2024-06-15") == TEMPLATE.replace("YYYY-MM-DD", "2024-06-15")
    assert default_insights_template(date(2024, 1, 2)).endswith("## Last Updated: 2024-01-02\n")


def test_template_date_is_utc() -> None:
    east = datetime(2024, 3, 1, 23, 30, tzinfo=UTC).astimezone(timezone(timedelta(hours=5)))
    assert east.day == 2  # the local day differs from the UTC day
    assert default_insights_template(east).endswith("## Last Updated: 2024-03-01\n")
    today = datetime.now(UTC).date().isoformat()
    assert default_insights_template().endswith(f"## Last Updated: {today}\n")


# ── merge ────────────────────────────────────────────────────────────────────────────────────

EXISTING = """# Memory Insights

## Patterns
<!-- Recurring themes that work well -->
- Use locks carefully (source: FN-1)

## Pitfalls
<!-- Known issues to avoid -->
- Never   rewrite a non-UTF-8 file

## Last Updated: 2024-01-01
"""

EXPECTED = """# Memory Insights

## Patterns
<!-- Recurring themes that work well -->
- Use locks carefully (source: FN-1)

- use locks (source: review)
- Atomic writes via rename
## Pitfalls
<!-- Known issues to avoid -->
- Never   rewrite a non-UTF-8 file


## Context
- Fusion runs on Node 22
## Last Updated: 2024-06-15
"""


def test_merge_byte_exact_realistic_case() -> None:
    new = [
        ins("pattern", "use locks", "review"),
        ins("pitfall", "never rewrite a NON-UTF-8\tfile"),
        ins("context", "Fusion runs on Node 22"),
        ins("pattern", "Atomic writes via rename"),
        ins("pattern", "USE   LOCKS", "another run"),
    ]
    assert merge_insights(EXISTING, new, today=TODAY) == EXPECTED


def test_merge_into_nothing_starts_from_template() -> None:
    merged = merge_insights("", [ins("principle", "Prefer plain files", "FN-7")], today=TODAY)
    assert merged == TEMPLATE.replace("YYYY-MM-DD", TODAY).replace(
        "<!-- Key principles to follow -->\n", "<!-- Key principles to follow -->\n\n- Prefer plain files (source: FN-7)"
    )
    assert merge_insights(None, [ins("principle", "Prefer plain files", "FN-7")], today=TODAY) == merged


def test_merge_fixes_substring_bug() -> None:
    existing = default_insights_template("2024-01-01").replace(
        "<!-- Recurring themes that work well -->\n", "<!-- Recurring themes that work well -->\n- use locks carefully\n"
    )
    merged = merge_insights(existing, [ins("pattern", "use locks")], today=TODAY)
    assert "- use locks\n" in merged
    assert "- use locks carefully\n" in merged
    assert not is_duplicate_insight(existing, "use locks")
    assert not is_duplicate_insight(existing, "locks")


def test_merge_dedupe_ignores_case_white_space_section_and_source() -> None:
    existing = (
        "# Memory Insights\n\n## Context\n- Keep   Writes ATOMIC (source: FN-9)\n"
        "  - nested: check the hash\n\n## Last Updated: 2024-01-01\n"
    )
    batch = [
        ins("pattern", "keep writes atomic"),
        ins("pitfall", "Nested:   CHECK the hash"),
        ins("convention", "keep\twrites\natomic", "elsewhere"),
    ]
    result = merge_insights_detailed(existing, batch, today=TODAY)
    assert result.added == ()
    assert len(result.skipped) == 3
    assert result.text == existing  # nothing added: Last Updated untouched
    assert count_duplicate_insights(existing, batch) == 3


def test_merge_dedupes_within_the_batch() -> None:
    batch = [ins("pattern", "One rule"), ins("principle", "one   RULE"), ins("pattern", "Two", "x"),
             ins("pattern", "Two (source: x)")]
    result = merge_insights_detailed("", batch, today=TODAY)
    assert [i.content for i in result.added] == ["One rule", "Two"]
    assert result.text.count("One rule") == 1
    assert "one   RULE" not in result.text


def test_merge_nothing_new_returns_existing_unchanged() -> None:
    assert merge_insights(EXPECTED, [], today="2030-01-01") == EXPECTED
    assert merge_insights(EXPECTED, [ins("context", "fusion RUNS on node 22")], today="2030-01-01") == EXPECTED
    assert merge_insights("", [], today=TODAY) == default_insights_template(TODAY)


def test_merge_bumps_last_updated_only_when_added() -> None:
    merged = merge_insights(EXISTING, [ins("pitfall", "Big files are refused")], today=TODAY)
    assert "## Last Updated: 2024-06-15\n" in merged
    assert merged.count("## Last Updated:") == 1


def test_merge_is_idempotent_on_realistic_case() -> None:
    new = [ins("pattern", "use locks", "review"), ins("context", "Fusion runs on Node 22"),
           ins("pitfall", "multi\nline insight\n- with a dash", "src\nspanning")]
    once = merge_insights(EXISTING, new, today=TODAY)
    assert merge_insights(once, new, today="2099-01-01") == once


def test_merge_without_sections_or_last_updated_appends() -> None:
    merged = merge_insights("free text\n", [ins("pitfall", "x"), ins("pitfall", "y", "s")], today=TODAY)
    assert merged == "free text\n\n## Pitfalls\n- x\n- y (source: s)\n"


def test_merge_unknown_category_goes_to_context_and_dicts_are_accepted() -> None:
    merged = merge_insights("", [{"category": "bogus", "content": "from a dict", "source": "d"}], today=TODAY)
    assert "<!-- Important background information -->\n\n- from a dict (source: d)\n## Last Updated" in merged


def test_merge_skips_blank_content() -> None:
    assert merge_insights(EXISTING, [ins("pattern", "   \n")], today=TODAY) == EXISTING


# ── parse the AI reply ───────────────────────────────────────────────────────────────────────

REPLY = {
    "summary": "Two insights",
    "insights": [
        {"category": "pattern", "content": "  Atomic writes  ", "source": "  FN-1 "},
        {"category": "nonsense", "content": "goes to context"},
        {"category": "pitfall", "content": "   "},
        {"category": "pitfall", "content": 42},
        "not an object",
        {"category": "convention", "content": "blank source", "source": "  "},
    ],
    "prunedMemory": "  ## Architecture\n\n## Pitfalls\n\n",
}


def test_parse_raw_json() -> None:
    now = datetime(2024, 6, 15, 2, 0, 0, 123456, tzinfo=UTC)
    result = parse_insight_extraction_response(json.dumps(REPLY), now=now)
    assert result.summary == "Two insights"
    assert [(i.category, i.content, i.source) for i in result.insights] == [
        ("pattern", "Atomic writes", "FN-1"),
        ("context", "goes to context", None),
        ("convention", "blank source", None),
    ]
    assert result.pruned_memory == "## Architecture\n\n## Pitfalls"
    assert result.extracted_at == "2024-06-15T02:00:00.123Z"
    assert result.insights[0].extracted_at == result.extracted_at
    assert result.to_json()["prunedMemory"] == result.pruned_memory


def test_parse_fenced_json_with_leading_prose() -> None:
    text = "Here is what I found:\n\n```json\n" + json.dumps(REPLY, indent=2) + "\n```\nHope it helps {sic}."
    assert len(parse_insight_extraction_response(text).insights) == 3


def test_parse_plain_fence_and_prose_without_fence() -> None:
    assert parse_insight_extraction_response("```\n{\"summary\": \"s\"}\n```").summary == "s"
    reply = 'Sure! {"summary": "x", "insights": [{"category": "pitfall", "content": "y"}]} done'
    assert parse_insight_extraction_response(reply).insights[0].content == "y"


@pytest.mark.parametrize("pruned", ["", "   \n\t", None, 5, ["## Architecture"]])
def test_parse_blank_or_non_string_pruned_memory_is_none(pruned: object) -> None:
    result = parse_insight_extraction_response(json.dumps({"summary": "s", "insights": [], "prunedMemory": pruned}))
    assert result.pruned_memory is None
    assert "prunedMemory" not in result.to_json()


def test_parse_missing_fields_default() -> None:
    result = parse_insight_extraction_response('{"insights": "nope", "summary": 3}')
    assert result.summary == ""
    assert result.insights == ()


@pytest.mark.parametrize("text", ["not json at all", "{broken", "[1, 2]", "null", '"string"', "{\"a\": NaN}", ""])
def test_parse_invalid_raises_insight_parse_error(text: str) -> None:
    with pytest.raises(InsightParseError) as err:
        parse_insight_extraction_response(text)
    assert str(err.value) == "Failed to parse insight extraction response as JSON: " + text[:200]
    assert isinstance(err.value, ValueError)


def test_parse_error_message_keeps_first_200_chars() -> None:
    text = "x" * 500
    with pytest.raises(InsightParseError) as err:
        parse_insight_extraction_response(text)
    assert str(err.value).endswith(": " + "x" * 200)


def test_parse_deep_nesting_is_a_parse_error() -> None:
    with pytest.raises(InsightParseError):
        parse_insight_extraction_response("{" + '"a":[' * 100_000 + "]" * 100_000 + "}")


def test_parse_lone_surrogates_become_replacement_characters() -> None:
    result = parse_insight_extraction_response('{"summary": "s", "insights": [{"content": "bad \\ud800 char"}]}')
    assert result.insights[0].content == "bad \ufffd char"


@pytest.mark.parametrize(
    "text",
    [
        "```" + " " * 200_000,  # unclosed fence followed by white space: quadratic with Fusion's regex
        "```json\n" + "\n" * 200_000 + "x",
        "```" * 70_000,
        "{" * 200_000,
        "prose " * 35_000 + json.dumps({"summary": "s", "insights": [{"content": "c" * 100_000}]}),
    ],
)
def test_parse_200kb_reply_is_fast(text: str) -> None:
    started = time.perf_counter()
    try:
        parse_insight_extraction_response(text)
    except InsightParseError:
        pass
    # Fusion's fence regex needed over 5 minutes on 5 KB of the first case; the bound allows a loaded machine.
    assert time.perf_counter() - started < 3.0


# ── trigger rule ─────────────────────────────────────────────────────────────────────────────

NOW = datetime(2024, 6, 15, 12, 0, tzinfo=UTC)


def test_trigger_needs_content() -> None:
    assert should_trigger_extraction(None, None, 0, None, now=NOW) is False
    assert should_trigger_extraction(NOW - timedelta(days=9), None, 0, 0, now=NOW) is False


def test_trigger_first_run_with_content() -> None:
    assert should_trigger_extraction(None, {}, 1, None, now=NOW) is True


def test_trigger_respects_min_interval() -> None:
    last = NOW - timedelta(hours=23)
    assert should_trigger_extraction(last, None, 5000, 0, now=NOW) is False
    assert should_trigger_extraction(NOW - timedelta(hours=24), None, 5000, 0, now=NOW) is True
    fast = {"insightExtractionMinIntervalMs": 60_000}
    assert should_trigger_extraction(NOW - timedelta(minutes=2), fast, 5000, 0, now=NOW) is True
    model = ProjectSettings(insight_extraction_min_interval_ms=3_600_000)
    assert should_trigger_extraction(NOW - timedelta(minutes=30), model, 5000, 0, now=NOW) is False
    assert should_trigger_extraction("2024-06-13T12:00:00.000Z", {"insight_extraction_min_interval_ms": 0},
                                     5000, 0, now=NOW) is True


def test_trigger_growth_threshold() -> None:
    last = NOW - timedelta(days=2)
    assert should_trigger_extraction(last, None, 1999, 1000, now=NOW) is False
    assert should_trigger_extraction(last, None, 2000, 1000, now=NOW) is True
    assert should_trigger_extraction(last, None, 10, None, now=NOW) is True


# ── reading the insights file for the viewer ─────────────────────────────────────────────────


def test_parse_insights_markdown_sections_sources_and_multiline() -> None:
    text = (
        "# Memory Insights\n\n## Patterns\n<!-- Recurring themes\nthat work well -->\n"
        "- Atomic writes (source: FN-1)\n- A bullet that\n  runs on\n  - with a nested point\n"
        "continues here\n\n- after a blank (source: a (b))\n## Principles\n<!-- none -->\n\n"
        "## Pitfalls\n- use locks carefully\n### sub heading\n- after sub\n## Last Updated: 2024-01-01\n"
    )
    sections = parse_insights_markdown(text)
    assert [s.heading for s in sections] == ["## Patterns", "## Principles", "## Pitfalls"]
    assert [s.category for s in sections] == ["pattern", "principle", "pitfall"]
    heading, bullets = sections[0]
    assert heading == "## Patterns"
    assert bullets == (
        InsightBullet("Atomic writes", "FN-1", 6),
        InsightBullet("A bullet that\n  runs on\n  - with a nested point\ncontinues here", None, 7),
        InsightBullet("after a blank", "a (b)", 12),
    )
    assert sections[1].bullets == ()
    assert [b.content for b in sections[2].bullets] == ["use locks carefully", "after sub"]


def test_parse_insights_markdown_round_trips_a_merge() -> None:
    merged = merge_insights(EXISTING, [ins("pattern", "use locks", "review")], today=TODAY)
    sections = {s.heading: s.bullets for s in parse_insights_markdown(merged)}
    assert [(b.content, b.source) for b in sections["## Patterns"]] == [
        ("Use locks carefully", "FN-1"), ("use locks", "review")
    ]
    assert parse_insights_markdown(None) == []
    assert parse_insights_markdown("- orphan\n")[0].heading == ""


# ── prompt ───────────────────────────────────────────────────────────────────────────────────

FUSION_HEAD = """You are a memory analysis agent. Your task is to extract valuable insights from accumulated working memory.

## Working Memory (accumulated observations and learnings)
WM-CONTENT
{existing}
## Your Task
Analyze the working memory and extract insights that should be preserved for the long-term memory.
Focus on:
1. **Patterns**: Recurring themes or approaches that work well
2. **Principles**: Key decisions and their rationale
3. **Conventions**: Project-specific standards or practices
4. **Pitfalls**: Known issues to avoid
5. **Context**: Important background information

"""

FUSION_TAIL = """
Category must be one of: "pattern", "principle", "convention", "pitfall", "context".
Only include insights not already present in the existing insights.
If no new insights are found, return: {"summary": "No new insights found", "insights": []}"""


def test_prompt_keeps_fusion_text_and_adds_pruning() -> None:
    prompt = build_insight_extraction_prompt("WM-CONTENT", None)
    assert prompt.startswith(FUSION_HEAD.format(existing=""))
    assert prompt.endswith(FUSION_TAIL)
    pruning = prompt.index("## Working Memory Pruning\n")
    assert pruning < prompt.index("## Output Format\nReturn ONLY a JSON object")
    assert "You MUST preserve at least 2 of these 3 core sections: Architecture, Conventions, Pitfalls" in prompt
    assert "can replace `.fusion/memory.md`" in prompt
    assert "omit `prunedMemory` entirely" in prompt
    assert '  ],\n  "prunedMemory": ' in prompt
    assert ".fusion/memory/MEMORY.md" not in prompt


def test_prompt_existing_section() -> None:
    prompt = build_insight_extraction_prompt("WM-CONTENT", "EXISTING")
    section = "\n## Existing Insights (already captured — do not duplicate)\nEXISTING\n"
    assert prompt.startswith(FUSION_HEAD.format(existing=section))
    assert build_insight_extraction_prompt("WM-CONTENT", "") == build_insight_extraction_prompt("WM-CONTENT", None)


def test_parse_fenced_reply_whose_pruned_memory_holds_a_code_fence():
    import json as _json

    from core.insights import parse_insight_extraction_response as _parse

    memory = "# Project Memory\n\n## Architecture\n\n```ts\nconst x = 1;\n```\n\n## Pitfalls\n\n- p\n"
    reply = "Result:\n```json\n" + _json.dumps({"summary": "s", "insights": [], "prunedMemory": memory}) + "\n```\n"
    assert _parse(reply).pruned_memory == memory.strip()
