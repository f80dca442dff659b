"""Pure text helpers for the editor's external-change handling: classify, merge appends, diff3, newlines.

The editor keeps the exact text it loaded (the *base*) beside what the operator typed (*mine*).
When the file changes on disk (*theirs*), :func:`classify_change` says whether it is the same text,
the base plus appended text (agents append dated entries), or anything else; :func:`merge3` is a
line-based three-way merge (like ``diff3``/git) whose conflicting hunks carry markers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Literal

ChangeKind = Literal["same", "appended", "other"]

MARK_MINE = "<<<<<<< mine (your unsaved edits)"
MARK_SPLIT = "======="
MARK_THEIRS = ">>>>>>> disk (changed by another program)"

_ENTRY_MARKER = re.compile(r"<!-- \d{4}-\d{2}-\d{2} -->")
_CONFLICT_LINE = re.compile(r"^(<<<<<<< mine|>>>>>>> disk)", re.MULTILINE)


def classify_change(base: str, disk: str) -> ChangeKind:
    """Return ``"same"``, ``"appended"`` (``disk`` is ``base`` plus text at the end) or ``"other"``."""
    if disk == base:
        return "same"
    if disk.startswith(base):
        return "appended"
    return "other"


def appended_text(base: str, disk: str) -> str:
    """Return what ``disk`` adds after ``base`` (``""`` when it is not a pure append)."""
    return disk[len(base):] if disk.startswith(base) else ""


def describe_append(suffix: str) -> str:
    """Return a status line such as ``Merged 2 new entries appended on disk``."""
    entries = len(_ENTRY_MARKER.findall(suffix))
    if entries:
        noun = "entry" if entries == 1 else "entries"
        return f"Merged {entries} new {noun} appended on disk"
    lines = max(1, len(suffix.strip("\r\n").splitlines()))
    noun = "line" if lines == 1 else "lines"
    return f"Merged {lines} new {noun} appended on disk"


@dataclass(frozen=True)
class TextStyle:
    """How a file spells its text beyond the characters an editor shows: line ends and a BOM."""

    newline: str = "\n"
    bom: bool = False


def detect_style(text: str) -> TextStyle:
    """Return the line ends (``\\r\\n`` when the file uses them) and whether it starts with a BOM."""
    return TextStyle("\r\n" if "\r\n" in text else "\n", text.startswith("\ufeff"))


def to_editor_text(text: str) -> str:
    """Return ``text`` as a Qt text editor holds it: ``\\n`` line ends (also for lone ``\\r`` and
    U+2029, which Qt turns into line breaks) and no leading BOM."""
    text = text.removeprefix("\ufeff")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.replace("\u2029", "\n") if "\u2029" in text else text


def from_editor_text(text: str, style: TextStyle) -> str:
    """Return editor text with the file's line ends and BOM restored."""
    if style.newline != "\n":
        text = text.replace("\n", style.newline)
    return "\ufeff" + text if style.bom else text


def count_conflicts(text: str) -> int:
    """Return how many conflict blocks left by :func:`merge3` are still in ``text``."""
    return sum(1 for m in _CONFLICT_LINE.finditer(text) if m.group(1).startswith("<"))


@dataclass(frozen=True)
class MergeResult:
    """A three-way merge: the merged text and how many hunks conflicted (marked in the text)."""

    text: str
    conflicts: int


def _changes(base: list[str], other: list[str]) -> list[tuple[int, int, list[str]]]:
    """The hunks turning ``base`` into ``other``: ``(start, end, replacement lines)`` in base order."""
    # Common leading and trailing lines are cut first: edits are local, files are up to 1 MiB.
    head = 0
    limit = min(len(base), len(other))
    while head < limit and base[head] == other[head]:
        head += 1
    tail = 0
    while tail < limit - head and base[-1 - tail] == other[-1 - tail]:
        tail += 1
    b, o = base[head:len(base) - tail], other[head:len(other) - tail]
    ops = SequenceMatcher(None, b, o, autojunk=len(b) > 2000).get_opcodes()
    return [(head + i1, head + i2, o[j1:j2]) for tag, i1, i2, j1, j2 in ops if tag != "equal"]


def _apply(base: list[str], lo: int, hi: int, changes: list[tuple[int, int, list[str]]]) -> list[str]:
    out: list[str] = []
    pos = lo
    for start, end, lines in changes:
        out.extend(base[pos:start])
        out.extend(lines)
        pos = end
    out.extend(base[pos:hi])
    return out


def _terminated(lines: list[str]) -> list[str]:
    if lines and not lines[-1].endswith("\n"):
        return [*lines[:-1], lines[-1] + "\n"]
    return lines


def merge3(base: str, mine: str, theirs: str) -> MergeResult:
    """Merge ``mine`` and ``theirs`` (both derived from ``base``) line by line.

    Hunks changed on one side only are taken from that side; hunks both sides changed differently
    are written as ``<<<<<<< mine`` / ``=======`` / ``>>>>>>> disk`` blocks and counted.
    """
    if mine == theirs or theirs == base:
        return MergeResult(mine, 0)
    if mine == base:
        return MergeResult(theirs, 0)
    b = base.splitlines(keepends=True)
    cm, ct = _changes(b, mine.splitlines(keepends=True)), _changes(b, theirs.splitlines(keepends=True))
    out: list[str] = []
    conflicts = 0
    pos = im = it = 0
    while im < len(cm) or it < len(ct):
        take_mine = it >= len(ct) or (im < len(cm) and cm[im][0] <= ct[it][0])
        first = cm[im] if take_mine else ct[it]
        lo, hi = first[0], first[1]
        group_m: list[tuple[int, int, list[str]]] = []
        group_t: list[tuple[int, int, list[str]]] = []
        # Grow the cluster while a change from either side starts inside (or touches) it.
        while True:
            if im < len(cm) and cm[im][0] <= hi:
                group_m.append(cm[im])
                hi = max(hi, cm[im][1])
                im += 1
            elif it < len(ct) and ct[it][0] <= hi:
                group_t.append(ct[it])
                hi = max(hi, ct[it][1])
                it += 1
            else:
                break
        out.extend(b[pos:lo])
        side_m, side_t = _apply(b, lo, hi, group_m), _apply(b, lo, hi, group_t)
        if not group_t or side_m == side_t:
            out.extend(side_m)
        elif not group_m:
            out.extend(side_t)
        else:
            conflicts += 1
            if out and not out[-1].endswith("\n"):
                out[-1] += "\n"
            out.append(MARK_MINE + "\n")
            out.extend(_terminated(side_m))
            out.append(MARK_SPLIT + "\n")
            out.extend(_terminated(side_t))
            out.append(MARK_THEIRS + "\n")
        pos = hi
    out.extend(b[pos:])
    return MergeResult("".join(out), conflicts)


def changed_lines(a: str, b: str) -> tuple[set[int], set[int]]:
    """Return the 0-based line numbers of ``a`` and of ``b`` that are not common to both."""
    la, lb = a.splitlines(), b.splitlines()
    only_a: set[int] = set()
    only_b: set[int] = set()
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, la, lb).get_opcodes():
        if tag != "equal":
            only_a.update(range(i1, i2))
            only_b.update(range(j1, j2))
    return only_a, only_b
