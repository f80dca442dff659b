"""Markdown sections and which of them a cut leaves out.

A section runs from its heading to the line before the next heading of the same or a higher level, so
a ``##`` section holds its ``###`` sub-sections. The headings are :mod:`core.documents.blocks`' (CommonMark: none
inside code, HTML comments or other HTML blocks; setext headings too; top-level only).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.budget.measure import Cut, line_count
from core.documents import blocks

__all__ = ["Heading", "SectionCut", "headings", "sections_cut", "sections_past_cut"]


@dataclass(frozen=True)
class Heading:
    """One heading: its level, text and 1-based line; ``end_line`` is the section's last line."""

    level: int
    title: str
    line: int
    end_line: int


@dataclass(frozen=True)
class SectionCut:
    """A section the cut reaches: ``wholly`` when none of it is loaded, else it is cut part-way."""

    title: str
    line: int
    level: int
    wholly: bool

    def to_json(self) -> dict[str, object]:
        """camelCase JSON."""
        return {"heading": self.title, "line": self.line, "level": self.level, "wholly": self.wholly}


def headings(text: str) -> list[Heading]:
    """The headings of ``text`` in order, with the line where each section ends (1-based lines)."""
    found = blocks.scan(text)
    total = max(line_count(text), 1)
    return [Heading(h.level, h.title, h.line + 1, h.end if h.end < found.lines else total)
            for h in found.top()]


def sections_cut(heads: list[Heading], cut: Cut | None) -> list[SectionCut]:
    """The sections that ``cut`` leaves out wholly or in part (for a middle cut, those in the gap)."""
    if cut is None:
        return []
    first = cut.first_line
    last = (cut.resume_line - 1) if cut.resume_line is not None else None  # last line not wholly loaded
    out = []
    for h in heads:
        if h.end_line < first or (last is not None and h.line > last):
            continue
        inside_start = h.line >= first
        inside_end = last is None or h.end_line <= last
        out.append(SectionCut(h.title, h.line, h.level, inside_start and inside_end))
    return out


def sections_past_cut(text: str, cut_line: int) -> list[tuple[str, int, bool]]:
    """Sections at or past ``cut_line`` (the first line not loaded): ``(heading, line, wholly)``.

    ``wholly`` is True when the heading itself is at or past the cut, False when the section starts
    before the cut and runs past it. For the outline of the editor.
    """
    cut = Cut("cut", cut_line, 0, False, "lines")
    return [(s.title, s.line, s.wholly) for s in sections_cut(headings(text), cut)]
