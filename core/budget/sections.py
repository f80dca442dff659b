"""Markdown sections and which of them a cut leaves out.

A section runs from its ATX heading (``#`` to ``######``) to the line before the next heading of the
same or a higher level, so a ``##`` section holds its ``###`` sub-sections. Headings inside fenced code
blocks are not headings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.budget.measure import Cut, line_count

__all__ = ["Heading", "SectionCut", "headings", "sections_cut", "sections_past_cut"]

# Candidate lines start with '#' or a fence; searching from a literal newline is several times faster
# than a MULTILINE '^' on a 1 MiB text. The first line is checked on its own.
_CANDIDATE = re.compile(r"\n(?=#|```|~~~|[ \t]{1,3}(?:```|~~~))")
_HEADING = re.compile(r"(#{1,6})(?:[ \t]+(.*))?$")
_FENCE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})(.*)$")
_CLOSING = re.compile(r"[ \t]+#+[ \t]*$")


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
    """The headings of ``text`` in order, with the line where each section ends."""
    found: list[tuple[int, str, int]] = []
    fence: str | None = None
    starts = [0] if text[:1] in ("#", "`", "~", " ", "\t") else []
    starts += [m.start() + 1 for m in _CANDIDATE.finditer(text)]
    pos, line = 0, 1
    for start in starts:
        line += text.count("\n", pos, start)
        pos = start
        end = text.find("\n", start)
        row = text[start:end if end >= 0 else len(text)]
        fenced = _FENCE.match(row)
        if fenced is not None:
            marker = fenced.group(1)
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence) and not fenced.group(2).strip():
                fence = None
            continue
        heading = _HEADING.match(row) if fence is None else None
        if heading is not None:
            title = _CLOSING.sub("", (heading.group(2) or "").rstrip()).strip()
            found.append((len(heading.group(1)), title, line))
    total = max(line_count(text), 1)
    out: list[Heading] = []
    for i, (level, title, start_line) in enumerate(found):
        end_line = total
        for later_level, _title, later_line in found[i + 1:]:
            if later_level <= level:
                end_line = later_line - 1
                break
        out.append(Heading(level, title, start_line, end_line))
    return out


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
