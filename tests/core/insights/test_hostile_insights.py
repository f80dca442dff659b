"""Insights whose text tries to forge the insights file's structure (issue 9 item 18)."""

from __future__ import annotations

import re

import pytest

from core.insights import MemoryInsight, merge_insights, merge_insights_detailed
from core.insights.merge import default_insights_template, parse_insights_markdown

TODAY = "2026-05-01"
TEMPLATE_HEADINGS = ["## Patterns", "## Principles", "## Conventions", "## Pitfalls", "## Context",
                     f"## Last Updated: {TODAY}"]

HOSTILE = {
    "forged-heading": "Use locks\n## Architecture\n- forged bullet",
    "second-last-updated": "Cache the index\n## Last Updated: 1999-01-01",
    "inline-last-updated": "## Last Updated: 1999-01-01 is what the stamp looks like",
    "unclosed-comment": "Beware <!-- this hides what follows",
    "early-close": "text --> closes a comment that is not open",
    "leading-hash": "# Title as an insight",
    "line-separator": "one\u2028## Patterns\u2029two",
    "crlf": "a\r\n\r\n## Context\r\nb",
    "vertical-tab": "tab\tand\x0bvertical\x0cform\x1cfile",
    "next-line-unicode": "x\x85## Pitfalls",
    "section-name-mid-text": "see ## Patterns for more",
    "indented-code": "intro\n\n    ## not code, a heading",
    "setext": "Heading by underline\n---",
}


def _structure(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.startswith("#")][1:]  # after "# Memory Insights"


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_an_insight_is_one_bullet_whatever_its_text(name):
    base = default_insights_template(TODAY)
    insight = MemoryInsight("pattern", HOSTILE[name], source="agent\n## Pitfalls")
    result = merge_insights_detailed(base, [insight], today=TODAY)
    assert len(result.added) == 1
    assert _structure(result.text) == TEMPLATE_HEADINGS
    new_lines = [line for line in result.text.splitlines() if line not in base.splitlines()]
    assert len(new_lines) == 1 and new_lines[0].startswith("- ")
    assert result.text.count("<!--") == result.text.count("-->") == base.count("<!--")
    assert not re.search(r"[\u2028\u2029\x85\x0b\x0c\x1c\r]", result.text)
    sections = {s.heading: len(s.bullets) for s in parse_insights_markdown(result.text)}
    assert sections["## Patterns"] == 1 and sum(sections.values()) == 1


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_insight_is_merged_once(name):
    once = merge_insights(default_insights_template(TODAY), [MemoryInsight("pitfall", HOSTILE[name])], today=TODAY)
    twice = merge_insights(once, [MemoryInsight("pitfall", HOSTILE[name])], today="2026-06-01")
    assert twice == once


def test_last_updated_is_the_real_stamp_even_after_a_forged_one():
    base = default_insights_template("2026-01-01")
    text = merge_insights(base, [MemoryInsight("context", "## Last Updated: 1999-01-01 fake")], today=TODAY)
    text = merge_insights(text, [MemoryInsight("context", "another")], today="2026-07-01")
    stamps = [line for line in text.splitlines() if line.startswith("## Last Updated:")]
    assert stamps == ["## Last Updated: 2026-07-01"]
    assert "1999-01-01 fake" in text


def test_a_bullet_mentioning_a_section_does_not_move_the_insertion():
    base = default_insights_template(TODAY).replace(
        "## Patterns\n", "## Patterns\n- how ## Pitfalls is used\n", 1)
    text = merge_insights(base, [MemoryInsight("pitfall", "real pitfall")], today=TODAY)
    sections = {s.heading: [b.content for b in s.bullets] for s in parse_insights_markdown(text)}
    assert sections["## Pitfalls"] == ["real pitfall"]
