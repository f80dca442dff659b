"""Case-insensitive literal search that reports positions the way Qt counts them (UTF-16 units)."""

from __future__ import annotations

import re
from bisect import bisect_left

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def find_matches(text: str, query: str) -> list[tuple[int, int]]:
    """Return ``(start, length)`` of every match of ``query`` in ``text``, in Qt document positions.

    Qt counts characters outside the Basic Multilingual Plane (emoji) as two positions; Python as
    one. Positions are converted so a ``QTextCursor`` can select the match.
    """
    if not query:
        return []
    spans = [(m.start(), m.end()) for m in re.finditer(re.escape(query), text, re.IGNORECASE)]
    if text.isascii():
        return [(s, e - s) for s, e in spans]
    astral = [m.start() for m in _ASTRAL.finditer(text)]
    if not astral:
        return [(s, e - s) for s, e in spans]

    def qt_pos(i: int) -> int:
        return i + bisect_left(astral, i)

    return [(qt_pos(s), qt_pos(e) - qt_pos(s)) for s, e in spans]
