"""Merging insights into ``.fusion/memory-insights.md``, its template, and reading it back for display.

The insertion is Fusion's ``mergeInsights`` byte for byte. Two fixes (memdesk design, section 3):

* Fusion skipped an insight whenever its lowercase text was a *substring* anywhere in the file, so
  "use locks" was lost next to "use locks carefully". Here an insight is a duplicate only when a
  ``- `` bullet anywhere in the file has the same content (source suffix aside) ignoring case and
  runs of white space; duplicates within one batch are dropped too.
* Fusion bumped ``## Last Updated`` even when every insight was a duplicate; here it changes only
  when something was added, so merging the same insights twice gives the same file.
* Fusion wrote an insight's text as it came, so newlines in it could forge a heading or a second
  ``## Last Updated`` and an unclosed ``<!--`` could hide the next section; here an insight is always
  one bullet (:func:`one_line`) and sections and the stamp are found only as whole lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, NamedTuple

from core.insights._text import (
    BulletIndex,
    blank_comments,
    bullet_keys,
    normalize_content,
    one_line,
    render_bullet,
    split_source,
    utc_day,
)
from core.insights.model import CATEGORY_SECTIONS, MemoryInsight

__all__ = [
    "InsightBullet",
    "InsightSection",
    "MergeResult",
    "count_duplicate_insights",
    "default_insights_template",
    "is_duplicate_insight",
    "merge_insights",
    "merge_insights_detailed",
    "one_line",
    "parse_insights_markdown",
]

Day = date | datetime | str | None

# JavaScript's /## Last Updated:.*$/m ("." stops at any JS line terminator), anchored to a line start so
# an insight that mentions the stamp cannot take its place.
_LAST_UPDATED_RE = re.compile("^## Last Updated:[^\n\r\u2028\u2029]*", re.MULTILINE)
_SECTION_TO_CATEGORY = {header: category for category, header in CATEGORY_SECTIONS.items()}


def default_insights_template(today: Day = None) -> str:
    """Return Fusion's empty insights file, dated ``today`` (UTC; default now)."""
    return (
        "# Memory Insights\n\n"
        "## Patterns\n<!-- Recurring themes that work well -->\n\n"
        "## Principles\n<!-- Key principles to follow -->\n\n"
        "## Conventions\n<!-- Project-specific standards -->\n\n"
        "## Pitfalls\n<!-- Known issues to avoid -->\n\n"
        "## Context\n<!-- Important background information -->\n\n"
        f"## Last Updated: {utc_day(today)}\n"
    )


def _coerce(item: Any) -> MemoryInsight | None:
    if isinstance(item, MemoryInsight):
        insight = item
    elif isinstance(item, Mapping):
        insight = MemoryInsight.from_json(item)
    else:
        return None
    if not isinstance(insight.content, str):
        return None
    category = insight.category if insight.category in CATEGORY_SECTIONS else "context"
    source = one_line(insight.source) if isinstance(insight.source, str) else None
    # Fix over Fusion: an insight is always one bullet, whatever its text holds (issue 9).
    return MemoryInsight(category, one_line(insight.content), source or None, insight.extracted_at)


def _find_heading(text: str, header: str) -> int:
    """Where the line ``header`` starts in ``text`` (-1 when absent); text elsewhere on a line is no heading."""
    match = re.search(rf"^{re.escape(header)}[ \t]*$", text, re.MULTILINE)
    return match.start() if match else -1


def is_duplicate_insight(existing: str | None, content: str) -> bool:
    """True when a ``- `` bullet in ``existing`` has ``content`` (ignoring case, white space, source)."""
    return existing is not None and bool(existing) and BulletIndex(existing).contains(content)


def count_duplicate_insights(existing: str | None, insights: Iterable[MemoryInsight | Mapping[str, Any]]) -> int:
    """Count the insights already present as bullets in ``existing``."""
    if not existing:
        return 0
    index = BulletIndex(existing)
    count = 0
    for item in insights:
        insight = _coerce(item)
        if insight is not None and index.contains(insight.content):
            count += 1
    return count


@dataclass(frozen=True)
class MergeResult:
    """A merged insights file, with the insights added and those skipped as duplicates or blank."""

    text: str
    added: tuple[MemoryInsight, ...]
    skipped: tuple[MemoryInsight, ...]


def merge_insights_detailed(
    existing: str | None, new_insights: Iterable[MemoryInsight | Mapping[str, Any]], today: Day = None
) -> MergeResult:
    """Merge like :func:`merge_insights` and also say which insights were added and which skipped."""
    base = existing or default_insights_template(today)
    index = BulletIndex(base)
    seen: set[str] = set()
    by_category: dict[str, list[MemoryInsight]] = {}
    added: list[MemoryInsight] = []
    skipped: list[MemoryInsight] = []
    for item in new_insights:
        insight = _coerce(item)
        if insight is None:
            continue
        key = normalize_content(insight.content)
        if not key or key in seen or index.contains(insight.content):
            skipped.append(insight)
            continue
        seen |= bullet_keys(render_bullet(insight.content, insight.source)[2:])
        by_category.setdefault(insight.category, []).append(insight)
        added.append(insight)
    if not added:
        return MergeResult(base, (), tuple(skipped))

    result = base
    for category, insights in by_category.items():
        header = CATEGORY_SECTIONS[category]
        lines = "\n".join(render_bullet(i.content, i.source) for i in insights)
        position = _find_heading(result, header)
        if position != -1:
            next_section = result.find("\n## ", position + len(header))
            at = next_section if next_section != -1 else len(result)
            result = result[:at] + "\n" + lines + result[at:]
        else:
            section = f"\n{header}\n{lines}\n"
            stamp_line = _LAST_UPDATED_RE.search(result)
            last_updated = stamp_line.start() if stamp_line else -1
            if last_updated != -1:
                result = result[:last_updated] + section + result[last_updated:]
            else:
                result += section
    stamp = f"## Last Updated: {utc_day(today)}"
    result = _LAST_UPDATED_RE.sub(lambda _m: stamp, result, count=1)
    return MergeResult(result, tuple(added), tuple(skipped))


def merge_insights(
    existing: str | None, new_insights: Iterable[MemoryInsight | Mapping[str, Any]], today: Day = None
) -> str:
    """Append new insights to their category sections; return ``existing`` untouched when none is new.

    An empty ``existing`` starts from :func:`default_insights_template`. Merging the same insights
    again changes nothing.
    """
    return merge_insights_detailed(existing, new_insights, today).text


@dataclass(frozen=True)
class InsightBullet:
    """One bullet of the insights file: its content, its source (if any) and its 1-based line."""

    content: str
    source: str | None
    line: int


class InsightSection(NamedTuple):
    """A ``## `` section of the insights file and its bullets, in file order."""

    heading: str
    bullets: tuple[InsightBullet, ...]

    @property
    def category(self) -> str | None:
        """The insight category this section holds, or ``None`` for another section."""
        return _SECTION_TO_CATEGORY.get(self.heading.strip())


def parse_insights_markdown(text: str | None) -> list[InsightSection]:
    """Read the insights file for display: ``## `` sections with their bullets, comments hidden.

    A bullet runs on over following lines that are indented or do not start with ``- `` or ``#``
    (a blank line ends it); its trailing `` (source: …)`` becomes the source. ``## Last Updated``
    is not a section. Bullets before the first section are listed under the heading ``""``.
    """
    if not text:
        return []
    sections: list[tuple[str, list[InsightBullet]]] = [("", [])]
    current: list[str] | None = None
    start_line = 0

    def _finish() -> None:
        nonlocal current
        if current is not None:
            content, source = split_source("\n".join(current))
            if content.strip():
                sections[-1][1].append(InsightBullet(content.strip(), source, start_line))
        current = None

    for number, raw in enumerate(blank_comments(text).split("\n"), start=1):
        line = raw.rstrip()
        if not line.strip():
            _finish()
        elif line.startswith("#"):
            _finish()
            if line.startswith("## "):
                sections.append((line.strip(), []))
        elif line.startswith("- ") or (current is None and line.lstrip().startswith("- ")):
            _finish()
            current, start_line = [line.lstrip()[2:]], number
        elif current is not None:
            current.append(line)
    _finish()
    out = [
        InsightSection(heading, tuple(bullets))
        for heading, bullets in sections
        if not heading.startswith("## Last Updated")
    ]
    if not out[0].bullets:
        out.pop(0)
    return out

