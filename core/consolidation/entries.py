"""Entries of a memory document: the units a consolidation keeps, merges, supersedes or drops.

An entry is a top-level bullet with its continuation lines, a paragraph, a dated entry of the seed
layout (``<!-- YYYY-MM-DD -->`` and its text) or a fenced code block with the lines around it. Headings
and lone HTML comments are *structure*: listed (so sections are known) but never an entry. Lines are
split on ``\\n`` only, as :mod:`core.documents.diff` does, so line numbers agree with the review's diff.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["Entry", "normalize", "scan", "tokens"]

EntryKind = Literal["bullet", "paragraph", "dated", "heading", "comment"]

_HEADING_RE = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_BULLET_RE = re.compile(r"^(?:[-*+]|\d{1,9}[.)])[ \t]+")
_DATED_RE = re.compile(r"^<!--\s*\d{4}-\d{2}-\d{2}\s*-->\s*$")
_COMMENT_RE = re.compile(r"^\s*<!--.*-->\s*$")
_FENCE_RE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_NORM_STRIP = re.compile(r"^(?:[-*+]|\d{1,9}[.)])\s+|[*_`]+|<!--\s*\d{4}-\d{2}-\d{2}\s*-->")
_WORD_RE = re.compile(r"[0-9a-z_]+(?:[./-][0-9a-z_]+)*")


@dataclass(frozen=True)
class Entry:
    """Lines ``start:end`` (0-based, end exclusive) of a document; ``section`` is its ``##`` section's title."""

    start: int
    end: int
    kind: EntryKind
    section: str | None
    text: str

    @property
    def line(self) -> int:
        """The entry's first line, 1-based (as the review shows it)."""
        return self.start + 1

    @property
    def structural(self) -> bool:
        """Headings and lone comments: never removed by an offline consolidation."""
        return self.kind in ("heading", "comment")


def normalize(text: str) -> str:
    """The entry's text for duplicate detection: no bullet or emphasis marks, case and spacing folded."""
    cleaned = _NORM_STRIP.sub("", text)
    return " ".join(cleaned.casefold().split()).rstrip(".;:")


def tokens(text: str) -> frozenset[str]:
    """The words of ``text`` (case-folded; paths and dotted names stay whole), for similarity."""
    return frozenset(_WORD_RE.findall(text.casefold()))


def scan(text: str) -> list[Entry]:
    """The entries and structure lines of ``text`` in order (blank lines belong to none)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out: list[Entry] = []
    section: str | None = None
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        heading = _HEADING_RE.match(line)
        if heading:
            if len(heading.group(1)) <= 2:
                section = heading.group(2) if len(heading.group(1)) == 2 else None
            out.append(Entry(i, i + 1, "heading", section, line))
            i += 1
            continue
        if _COMMENT_RE.match(line) and not _DATED_RE.match(line):
            out.append(Entry(i, i + 1, "comment", section, line))
            i += 1
            continue
        kind: EntryKind = "dated" if _DATED_RE.match(line) else "bullet" if _BULLET_RE.match(line) else "paragraph"
        j = _entry_end(lines, i, kind)
        out.append(Entry(i, j, kind, section, "\n".join(lines[i:j])))
        i = j
    return out


def _entry_end(lines: list[str], i: int, kind: EntryKind) -> int:
    """Where the entry starting at ``i`` ends: a blank line, a heading, the next top-level bullet or dated
    marker; a fenced block is taken whole (blank lines and headings inside it included)."""
    j, n = i, len(lines)
    fence: str | None = None
    while j < n:
        line = lines[j]
        opening = _FENCE_RE.match(line)
        if fence is not None:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = None
            j += 1
            continue
        if j > i:
            if not line.strip() or _HEADING_RE.match(line) or _DATED_RE.match(line):
                break
            if kind != "dated" and _BULLET_RE.match(line) and (kind == "bullet" or j > i):
                break
            if kind == "bullet" and not line[:1].isspace() and not opening:
                break  # a new paragraph right under a bullet
        if opening:
            fence = opening.group(1)
        j += 1
    return max(j, i + 1)
