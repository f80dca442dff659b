"""Property tests: the reply parser, the merge and the prune validation hold for any input.

The merge property draws insight text from any printable character except ``#``: an insight whose
text holds ``## Patterns``, ``\\n## `` or ``## Last Updated:`` rewrites the file's own structure
(Fusion's merge looks those up by plain search), so it may land in another section on a second
merge. Newlines, dashes, ``(source: …)`` and any other white space are allowed.
"""

from __future__ import annotations

import re
import string

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from core.insights import (
    INSIGHT_CATEGORIES,
    InsightParseError,
    MemoryInsight,
    default_insights_template,
    merge_insights,
    merge_insights_detailed,
    parse_insight_extraction_response,
    validate_prune_candidate,
)
from core.insights._text import BulletIndex
from core.insights.extraction import _strip_fence

FUSION_FENCE = re.compile(r"```(?:json)?\s*\n?([\s\S]*?)\n?\s*```")
NO_HASH = st.characters(blacklist_categories=("Cs",), blacklist_characters="#")
insight_text = st.text(NO_HASH, max_size=40)
insights = st.lists(
    st.builds(
        MemoryInsight,
        category=st.sampled_from((*INSIGHT_CATEGORIES, "unknown")),
        content=insight_text,
        source=st.none() | insight_text,
        extracted_at=st.just("2024-06-15T00:00:00.000Z"),
    ),
    max_size=12,
)
existing_text = st.one_of(
    st.just(""),
    st.just(default_insights_template("2024-01-01")),
    st.text(NO_HASH, max_size=200),
    st.lists(st.sampled_from(["- a", "- A  b", "  - b (source: x)", "text", "", "<!-- c -->", "-", "- a\nb"]))
    .map("\n".join),
)
json_alphabet = st.sampled_from(list('{}[]":,` \n\tjson0123456789abcnulltrue\\') + ["```", "```json", "prunedMemory"])


@given(st.text())
@settings(max_examples=300, deadline=None)
def test_parse_raises_only_parse_errors(text: str) -> None:
    try:
        result = parse_insight_extraction_response(text)
    except InsightParseError as exc:
        assert str(exc).startswith("Failed to parse insight extraction response as JSON: ")
    else:
        assert all(i.category in INSIGHT_CATEGORIES and i.content.strip() for i in result.insights)


@given(st.lists(json_alphabet, max_size=60).map("".join))
@settings(max_examples=300, deadline=None)
def test_parse_raises_only_parse_errors_on_json_like_text(text: str) -> None:
    try:
        parse_insight_extraction_response(text)
    except InsightParseError:
        pass


@given(st.lists(st.sampled_from(["```", "json", " ", "\n", "x", "{", "}", "`"]), max_size=20).map("".join))
@example("```json```")
@example("````")
@example("```json \n {} \n ``` trailing ```")
@settings(deadline=None)
def test_fence_strip_matches_fusions_regex(text: str) -> None:
    match = FUSION_FENCE.search(text)
    ours = _strip_fence(text)
    assert (ours is None) == (match is None)
    if match is not None:
        assert ours.strip() == match.group(1).strip()


@given(existing_text, insights)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_merge_never_raises_and_is_idempotent(existing: str, batch: list[MemoryInsight]) -> None:
    once = merge_insights(existing, batch, today="2024-06-15")
    assert merge_insights(once, batch, today="2099-12-31") == once
    if not merge_insights_detailed(existing, batch, today="2024-06-15").added:
        assert once == (existing or default_insights_template("2024-06-15"))


@given(existing_text, insights)
@settings(max_examples=200, deadline=None)
def test_every_merged_insight_is_then_a_duplicate(existing: str, batch: list[MemoryInsight]) -> None:
    once = merge_insights(existing, batch, today="2024-06-15")
    index = BulletIndex(once)
    assert all(index.contains(i.content) for i in batch if i.content.split())


def reference_contains(text: str, content: str) -> bool:
    """The dedupe rule written as one regex: a reference for BulletIndex."""
    tokens = content.casefold().split()
    if not tokens:
        return False
    body = r"\s+".join(re.escape(t) for t in tokens)
    pattern = r"^[^\S\n]*-\s+" + body + r"(?=[^\S\n]*(?:\n|\Z)|[^\S\n]+\(source: )"
    return re.search(pattern, text.casefold(), re.M) is not None


pieces = st.sampled_from(["-", " ", "\n", "\t", "a", "b", "B", "(source: ", ")", "x", "- ", "\r"])


@given(st.lists(pieces, max_size=30).map("".join), st.lists(pieces, min_size=1, max_size=8).map("".join))
@settings(max_examples=300, deadline=None)
def test_bullet_index_matches_the_reference_rule(text: str, content: str) -> None:
    assert BulletIndex(text).contains(content) == reference_contains(text, content)


any_object = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.binary(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=10,
)


@given(any_object)
@settings(deadline=None)
def test_validate_prune_candidate_never_raises(candidate: object) -> None:
    result = validate_prune_candidate(candidate)
    assert result.valid == (len(result.found_sections) >= 2)
    assert result.size >= 0


@given(st.text(string.printable + "é\u00a0\u2028", max_size=300))
@settings(deadline=None)
def test_validate_prune_candidate_on_text(candidate: str) -> None:
    result = validate_prune_candidate(candidate)
    assert result.valid is (result.has_required_sections and bool(candidate.strip()))
