"""Which part of a long memory document the preview renders: the section around the cursor (no Qt).

Rendering and laying out a whole 1 MiB document would stall the window, so past
:data:`FULL_PREVIEW_CHARS` the preview shows whole sections around the cursor's section while they
fit :data:`WINDOW_CHARS`, topped up with the start of the next section (or the end of the previous
one) so a tiny section never leaves the preview nearly empty. A section longer than the budget is
cut to the lines around the cursor.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate

from gui.editor.sections import find_headings, section_index

FULL_PREVIEW_CHARS = 24 * 1024
WINDOW_CHARS = 12 * 1024


@dataclass(frozen=True)
class PreviewWindow:
    """The markdown to render, the document line it starts at (0-based) and a note when partial."""

    source: str
    first_line: int = 0
    note: str | None = None


def preview_window(text: str, cursor_line: int, full: int = FULL_PREVIEW_CHARS,
                   budget: int = WINDOW_CHARS) -> PreviewWindow:
    """Return the part of ``text`` to preview for a cursor on ``cursor_line``."""
    if len(text) <= full:
        return PreviewWindow(text)
    lines = text.split("\n")
    n = len(lines)
    line = min(max(cursor_line, 0), n - 1)
    prefix = list(accumulate((len(s) + 1 for s in lines), initial=0))
    headings = find_headings(lines)

    def size(lo: int, hi: int) -> int:
        return prefix[hi] - prefix[lo]

    bounds = sorted({0, n, *(h.line for h in headings)})
    k = bisect_right(bounds, line) - 1
    lo, hi = bounds[k], bounds[k + 1]
    if size(lo, hi) > budget:  # one long section: the lines around the cursor
        lo, hi = line, line + 1
        while (lo > 0 or hi < n) and size(lo, hi) < budget:
            lo, hi = max(lo - 1, 0), min(hi + 1, n)
    else:
        lo_k, hi_k = k, k + 1
        grew = True
        while grew:  # whole neighbouring sections, one on each side at a time
            grew = False
            if lo_k > 0 and size(bounds[lo_k - 1], bounds[hi_k]) <= budget:
                lo_k, grew = lo_k - 1, True
            if hi_k < len(bounds) - 1 and size(bounds[lo_k], bounds[hi_k + 1]) <= budget:
                hi_k, grew = hi_k + 1, True
        lo, hi = bounds[lo_k], bounds[hi_k]
        while hi < n and size(lo, hi + 1) <= budget:  # top up with the start of the next section
            hi += 1
        while lo > 0 and size(lo - 1, hi) <= budget:  # or the end of the previous one
            lo -= 1
    source = "\n".join(lines[lo:hi])
    if len(source) > 2 * budget:  # one enormous line (a pasted blob): show its start only
        return PreviewWindow(source[: 2 * budget], lo,
                             f"Long line: the preview shows the first {2 * budget:,} characters of "
                             f"lines {lo + 1:,}–{hi:,}.")
    top = [h for h in headings if h.level <= 2]
    k = section_index(top, line)
    where = f"section “{top[k].label}”" if k >= 0 else "the text before the first section"
    note = f"Long file: lines {lo + 1:,}–{hi:,} of {n:,} around the cursor, in {where}."
    return PreviewWindow(source, lo, note)
