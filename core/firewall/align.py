"""Where a replacement differs from the document it replaces: line stretches found with C-speed scans.

The screen looks only at the lines a save adds (:func:`core.firewall.engine.added_lines`). A save that
changes one place is diffed there (the texts' common start and end); one that changes a line in the
middle *and* adds at the end (an operator's usual save) used to fall back to splitting both 1 MiB texts
into sets of lines: ~7 ms of a ~25 ms save. This walks both texts instead: the common run from where
they last agreed (``str.startswith`` on growing blocks), then the nearest line of the old text, a few
lines on, that the new text holds at a line start (``str.find``), and again from there. What it returns
is only where to look: the caller keeps a line of a stretch unless the other text holds it anywhere, so
the result is the set-based one exactly, however the stretches fall. ``None`` when the texts differ in
too many places (the caller splits them).
"""

from __future__ import annotations

from core.documents.runs import common_prefix

#: Differing stretches followed before giving up (the caller then splits both texts).
MAX_STRETCHES = 64
#: Lines of the old text skipped, at most, when looking for the place both agree again.
MAX_SKIP = 8
#: How far into the new text (characters) that place is looked for.
WINDOW = 1 << 16
#: An anchor line (or run of lines) this long at least, so a blank or short line does not anchor.
MIN_ANCHOR = 24
#: When no anchor is found, a rest of at most this many lines on each side is taken as one stretch.
TAIL_LINES = 256

def _next_line(text: str, p: int) -> int:
    """The start of the line after the one at ``p`` (``-1`` when that is the last line)."""
    e = text.find("\n", p)
    return -1 if e < 0 else e + 1


def _anchor(text: str, p: int) -> str:
    """The line at ``p``, with the lines after it until it is :data:`MIN_ANCHOR` long (without the last newline)."""
    e = text.find("\n", p)
    while e >= 0 and e - p < MIN_ANCHOR:
        e = text.find("\n", e + 1)
    return text[p:] if e < 0 else text[p:e]


def _at_line(text: str, q: int, anchor: str) -> bool:
    end = q + len(anchor)
    return (q == 0 or text[q - 1] == "\n") and text.startswith(anchor, q) and (end == len(text) or text[end] == "\n")


def _resync(new: str, i: int, current: str, j: int) -> tuple[int, int] | None:
    """The nearest pair of line starts ``(i2, j2)`` after ``(i, j)`` where the two texts hold the same lines again."""
    best: tuple[int, int, int] | None = None
    jb = j
    for _skip in range(MAX_SKIP + 1):
        if jb < 0:
            break
        anchor = _anchor(current, jb)
        if len(anchor) >= MIN_ANCHOR or jb + len(anchor) == len(current):
            q = new.find(anchor, i, i + WINDOW + len(anchor))
            while q >= 0 and not _at_line(new, q, anchor):
                q = new.find(anchor, q + 1, i + WINDOW + len(anchor))
            if q >= 0 and (q, jb) != (i, j):
                cost = (q - i) + (jb - j)
                if best is None or cost < best[0]:
                    best = (cost, q, jb)
        jb = _next_line(current, jb)
    return None if best is None else (best[1], best[2])


def changed_regions(new: str, current: str) -> list[tuple[int, int, int, int]] | None:
    """Stretches ``(new_start, new_end, current_start, current_end)`` outside of which both texts hold the same
    lines in the same order. Starts are line starts, ends the start of the line after the stretch (the
    text's length + 1 after its last line): its lines are :func:`lines_of`. ``None`` when they differ in more
    than :data:`MAX_STRETCHES` places, or where no place they agree again is found in a long rest."""
    regions: list[tuple[int, int, int, int]] = []
    i = j = 0
    while True:
        k = common_prefix(new, current, i, j)
        if i + k == len(new) and j + k == len(current):
            return regions
        nl = new.rfind("\n", i, i + k)
        if nl >= 0:
            i, j = nl + 1, j + nl + 1 - i
        if len(regions) >= MAX_STRETCHES:
            return None
        found = _resync(new, i, current, j)
        if found is None:  # no place they agree again: a short rest is one stretch, a long one is split
            if new.count("\n", i) > TAIL_LINES or current.count("\n", j) > TAIL_LINES:
                return None
            regions.append((i, len(new) + 1, j, len(current) + 1))
            return regions
        i2, j2 = found
        regions.append((i, i2, j, j2))
        i, j = i2, j2


def lines_of(text: str, start: int, end: int) -> list[str]:
    """The lines of a stretch of ``text`` (see :func:`changed_regions`)."""
    return text[start:end - 1].split("\n") if end > start else []
