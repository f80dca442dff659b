"""The headings of a memory document, found the way the preview renders them (no Qt).

A heading is a top-level heading as CommonMark reads it (:mod:`core.documents.blocks`, the one block scanner:
ATX or setext, never inside code, an HTML comment or another HTML block). The outline, next/previous
section, the long-file preview and the preview's scroll sync all use these, so they agree with the
load budget, search and prune validation on where a section starts.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from core.documents import blocks


@dataclass(frozen=True)
class Heading:
    """A heading line: 0-based line number, level (1-6) and its text."""

    line: int
    level: int
    title: str

    @property
    def label(self) -> str:
        """The heading as written (``## Conventions``)."""
        return f"{'#' * self.level} {self.title}".rstrip()


def find_headings(text: str | list[str], max_level: int = 6) -> list[Heading]:
    """Return the headings of ``text`` (a string or its lines) up to ``max_level``, in order."""
    joined = text if isinstance(text, str) else "\n".join(text)
    return [Heading(h.line, h.level, h.title) for h in blocks.headings(joined, max_level)]


def section_index(headings: list[Heading], line: int) -> int:
    """Index of the heading whose section holds ``line`` (-1 when it is above the first heading)."""
    return bisect_right([h.line for h in headings], line) - 1


def next_heading_line(headings: list[Heading], line: int) -> int | None:
    """The line of the first heading after ``line``, if any."""
    return next((h.line for h in headings if h.line > line), None)


def previous_heading_line(headings: list[Heading], line: int) -> int | None:
    """The line of the last heading before ``line``, if any."""
    before = [h.line for h in headings if h.line < line]
    return before[-1] if before else None
