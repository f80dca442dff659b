"""The headings of a memory document, found the way the preview renders them (no Qt).

A heading is an ATX line (``#`` to ``######`` followed by a space or the end of the line, as
CommonMark and ``pymdownx.saneheaders`` read it) outside fenced code. The outline, next/previous
section, the long-file preview and the preview's scroll sync all use these, so they agree on where
a section starts.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


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
    lines = text.split("\n") if isinstance(text, str) else text
    out: list[Heading] = []
    fence: str | None = None
    for number, line in enumerate(lines):
        if "`" in line or "~" in line:
            fenced = _FENCE.match(line)
            if fenced is not None:
                marker = fenced.group(1)
                if fence is None:
                    fence = marker
                    continue
                if marker[0] == fence[0] and len(marker) >= len(fence) and not line.strip()[len(marker):]:
                    fence = None
                    continue
        if fence is not None or "#" not in line[:4]:
            continue
        match = _ATX.match(line)
        if match is not None and len(match.group(1)) <= max_level:
            out.append(Heading(number, len(match.group(1)), (match.group(2) or "").strip()))
    return out


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
