"""Side-by-side diff of two texts: aligned line rows plus word-level highlights inside changed lines.

Pure and Qt-free; the prune review computes it on a worker thread. Lines are compared through
integer ids (one per distinct line), aligned by a patience pass (lines unique on both sides anchor
the alignment), and each gap between anchors is diffed with ``difflib.SequenceMatcher`` when it is
small. A large gap without unique lines (a file of repeated blocks) is aligned greedily, taking the
earliest match that keeps the sides in order, which is optimal when the new text only drops lines,
the common case of a prune. Word highlights are computed only for paired changed lines.

Each run of changed rows is a :class:`Hunk`; :func:`apply_hunks` builds the text that takes the new
side of the accepted hunks and keeps the old side everywhere else, byte for byte (lines are split on
``\n`` only, so a stray ``\r`` or Unicode separator inside a line stays in that line).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Literal, NamedTuple

RowKind = Literal["equal", "delete", "insert", "replace"]
Opcode = tuple[str, int, int, int, int]

#: Gaps with at most this many line pairs (len_a * len_b) go to SequenceMatcher directly.
SMALL_REGION = 60_000
#: At most this many changed line pairs get word-level highlights (the rest are highlighted whole).
MAX_WORD_DIFF_PAIRS = 4_000
#: Lines longer than this are highlighted whole instead of word by word.
MAX_WORD_DIFF_LINE = 4_000
_TOKEN_RE = re.compile(r"\w+|\s+|[^\w\s]", re.UNICODE)


class Hunk(NamedTuple):
    """One change: rows ``row_start:row_end`` of the diff, old lines ``old_start:old_end`` replaced by
    new lines ``new_start:new_end`` (0-based, end exclusive). ``index`` is its place among the hunks."""

    index: int  # type: ignore[assignment]  # the hunk's place; shadows tuple.index, which no caller uses
    row_start: int
    row_end: int
    old_start: int
    old_end: int
    new_start: int
    new_end: int

    @property
    def removed(self) -> int:
        """How many old lines the hunk takes out (changed lines included)."""
        return self.old_end - self.old_start

    @property
    def added(self) -> int:
        """How many new lines the hunk puts in (changed lines included)."""
        return self.new_end - self.new_start


class DiffRow(NamedTuple):
    """One row of the side-by-side view; a side is ``None`` where the other side has a line alone.

    ``left_no``/``right_no`` are 1-based line numbers; the spans are ``(start, end)`` character
    ranges of changed words inside a ``replace`` row. A named tuple: a 1 MiB diff has ~13,000 rows,
    and tuples are several times cheaper to build than frozen dataclasses.
    """

    kind: RowKind
    left: str | None
    right: str | None
    left_no: int | None = None
    right_no: int | None = None
    left_spans: tuple[tuple[int, int], ...] = ()
    right_spans: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class DiffResult:
    """The rows of a diff, its totals (lines removed, added and changed in place) and its hunks."""

    rows: list[DiffRow] = field(default_factory=list)
    removed: int = 0
    added: int = 0
    changed: int = 0
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        """True when both texts have the same lines."""
        return self.removed == self.added == self.changed == 0

    def hunk_starts(self) -> list[int]:
        """Return the index of the first row of every run of non-equal rows."""
        if self.hunks:
            return [h.row_start for h in self.hunks]
        starts, prev = [], "equal"
        for index, row in enumerate(self.rows):
            if row.kind != "equal" and prev == "equal":
                starts.append(index)
            prev = row.kind
        return starts


    def hunk_at(self, row: int) -> Hunk | None:
        """The hunk holding row ``row``, or ``None`` (an unchanged row)."""
        k = bisect_right([h.row_start for h in self.hunks], row) - 1
        return self.hunks[k] if k >= 0 and row < self.hunks[k].row_end else None


def split_lines(text: str) -> list[str]:
    """Split ``text`` into lines without their endings (``\n`` or ``\r\n``; a final newline adds no line)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _keep_ends(text: str) -> list[str]:
    """The lines of :func:`split_lines` with their endings kept, so that joining them gives ``text``."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def diff_line_opcodes(a: Sequence[str], b: Sequence[str]) -> list[Opcode]:
    """Return ``SequenceMatcher``-style opcodes aligning line lists ``a`` and ``b``."""
    ids: dict[str, int] = {}
    ai = [ids.setdefault(line, len(ids)) for line in a]
    bi = [ids.setdefault(line, len(ids)) for line in b]
    matches: list[tuple[int, int, int]] = []
    _match_region(ai, bi, 0, len(ai), 0, len(bi), matches)
    return _opcodes_from_matches(matches, len(ai), len(bi))


def _match_region(a: list[int], b: list[int], a0: int, a1: int, b0: int, b1: int,
                  out: list[tuple[int, int, int]]) -> None:
    """Append matching blocks ``(i, j, size)`` of ``a[a0:a1]`` and ``b[b0:b1]`` to ``out``, in order."""
    start_a, start_b = a0, b0
    while a0 < a1 and b0 < b1 and a[a0] == b[b0]:
        a0, b0 = a0 + 1, b0 + 1
    if a0 > start_a:
        out.append((start_a, start_b, a0 - start_a))
    tail = 0
    while a1 - tail > a0 and b1 - tail > b0 and a[a1 - tail - 1] == b[b1 - tail - 1]:
        tail += 1
    a1, b1 = a1 - tail, b1 - tail
    if a0 < a1 and b0 < b1:
        if (a1 - a0) * (b1 - b0) <= SMALL_REGION:
            matcher = SequenceMatcher(None, a[a0:a1], b[b0:b1], autojunk=False)
            out.extend((a0 + i, b0 + j, n) for i, j, n in matcher.get_matching_blocks() if n)
        else:
            anchors = _unique_anchors(a, b, a0, a1, b0, b1)
            if anchors:
                pa, pb = a0, b0
                for i, j in anchors:
                    _match_region(a, b, pa, i, pb, j, out)
                    out.append((i, j, 1))
                    pa, pb = i + 1, j + 1
                _match_region(a, b, pa, a1, pb, b1, out)
            else:
                _greedy_match(a, b, a0, a1, b0, b1, out)
    if tail:
        out.append((a1, b1, tail))


def _unique_anchors(a: list[int], b: list[int], a0: int, a1: int, b0: int, b1: int) -> list[tuple[int, int]]:
    """Patience anchors: lines occurring once on each side, longest increasing run of their positions."""
    count_a: dict[int, int] = {}
    for i in range(a0, a1):
        count_a[a[i]] = count_a.get(a[i], 0) + 1
    pos_b: dict[int, int] = {}
    count_b: dict[int, int] = {}
    for j in range(b0, b1):
        x = b[j]
        if count_a.get(x) == 1:
            count_b[x] = count_b.get(x, 0) + 1
            pos_b[x] = j
    pairs = [(i, pos_b[a[i]]) for i in range(a0, a1) if count_b.get(a[i]) == 1]
    return _longest_increasing(pairs)


def _longest_increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Longest subsequence of ``pairs`` (sorted by first item) whose second items increase."""
    tails: list[int] = []
    tail_index: list[int] = []
    back: list[int] = []
    for index, (_, j) in enumerate(pairs):
        k = bisect_left(tails, j)
        if k == len(tails):
            tails.append(j)
            tail_index.append(index)
        else:
            tails[k] = j
            tail_index[k] = index
        back.append(tail_index[k - 1] if k else -1)
    chain: list[tuple[int, int]] = []
    index = tail_index[-1] if tail_index else -1
    while index >= 0:
        chain.append(pairs[index])
        index = back[index]
    chain.reverse()
    return chain


def _greedy_match(a: list[int], b: list[int], a0: int, a1: int, b0: int, b1: int,
                  out: list[tuple[int, int, int]]) -> None:
    """Align without unique anchors: match each line of ``b`` to its earliest occurrence ahead in ``a``.

    A line whose next occurrence is far ahead is taken as a match only when the line after it
    matches too; otherwise it counts as inserted, so one stray common line cannot swallow a block.
    """
    positions: dict[int, list[int]] = {}
    for i in range(a0, a1):
        positions.setdefault(a[i], []).append(i)
    i = a0
    run_i = run_j = run_n = 0
    for j in range(b0, b1):
        occ = positions.get(b[j])
        if not occ:
            continue
        k = bisect_left(occ, i)
        if k == len(occ):
            continue
        hit = occ[k]
        if hit - i > 8 and not (j + 1 < b1 and hit + 1 < a1 and a[hit + 1] == b[j + 1]):
            continue
        if run_n and hit == run_i + run_n and j == run_j + run_n:
            run_n += 1
        else:
            if run_n:
                out.append((run_i, run_j, run_n))
            run_i, run_j, run_n = hit, j, 1
        i = hit + 1
    if run_n:
        out.append((run_i, run_j, run_n))


def _opcodes_from_matches(matches: list[tuple[int, int, int]], len_a: int, len_b: int) -> list[Opcode]:
    ops: list[Opcode] = []
    i = j = 0
    for mi, mj, n in [*matches, (len_a, len_b, 0)]:
        tag = "replace" if i < mi and j < mj else "delete" if i < mi else "insert" if j < mj else ""
        if tag:
            ops.append((tag, i, mi, j, mj))
        if n:
            if ops and ops[-1][0] == "equal" and ops[-1][2] == mi and ops[-1][4] == mj:
                ops[-1] = ("equal", ops[-1][1], mi + n, ops[-1][3], mj + n)
            else:
                ops.append(("equal", mi, mi + n, mj, mj + n))
        i, j = mi + n, mj + n
    return ops


def word_spans(old: str, new: str) -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
    """Return the character spans of the words that differ between ``old`` and ``new``."""
    if len(old) > MAX_WORD_DIFF_LINE or len(new) > MAX_WORD_DIFF_LINE:
        return ((0, len(old)),) if old else (), ((0, len(new)),) if new else ()
    ta, tb = _TOKEN_RE.findall(old), _TOKEN_RE.findall(new)
    oa, ob = _offsets(ta), _offsets(tb)
    left: list[tuple[int, int]] = []
    right: list[tuple[int, int]] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            _add_span(left, oa[i1], oa[i2])
        if j2 > j1:
            _add_span(right, ob[j1], ob[j2])
    return _trimmed(old, left), _trimmed(new, right)


def _trimmed(line: str, spans: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """Drop the white space at the ends of each span (a span of white space only is kept)."""
    out = []
    for start, end in spans:
        a, b = start, end
        while a < b and line[a].isspace():
            a += 1
        while b > a and line[b - 1].isspace():
            b -= 1
        out.append((a, b) if a < b else (start, end))
    return tuple(out)


def _offsets(tokens: list[str]) -> list[int]:
    offsets = [0]
    for token in tokens:
        offsets.append(offsets[-1] + len(token))
    return offsets


def _add_span(spans: list[tuple[int, int]], start: int, end: int) -> None:
    if spans and spans[-1][1] == start:
        spans[-1] = (spans[-1][0], end)
    else:
        spans.append((start, end))


def diff_texts(old: str, new: str) -> DiffResult:
    """Diff ``old`` against ``new`` into side-by-side rows with word highlights in changed lines."""
    a, b = split_lines(old), split_lines(new)
    rows: list[DiffRow] = []
    hunks: list[Hunk] = []
    removed = added = changed = word_pairs = 0
    for tag, i1, i2, j1, j2 in diff_line_opcodes(a, b):
        if tag != "equal":
            hunks.append(Hunk(len(hunks), len(rows), len(rows) + max(i2 - i1, j2 - j1), i1, i2, j1, j2))
        if tag == "equal":
            rows.extend(DiffRow("equal", a[i], b[j], i + 1, j + 1) for i, j in zip(range(i1, i2), range(j1, j2),
                                                                                   strict=True))
            continue
        pairs = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        for k in range(pairs):
            left, right = a[i1 + k], b[j1 + k]
            if word_pairs < MAX_WORD_DIFF_PAIRS:
                word_pairs += 1
                ls, rs = word_spans(left, right)
            else:
                ls, rs = ((0, len(left)),), ((0, len(right)),)
            rows.append(DiffRow("replace", left, right, i1 + k + 1, j1 + k + 1, ls, rs))
        changed += pairs
        rows.extend(DiffRow("delete", a[i], None, i + 1, None) for i in range(i1 + pairs, i2))
        rows.extend(DiffRow("insert", None, b[j], None, j + 1) for j in range(j1 + pairs, j2))
        removed += i2 - i1 - pairs
        added += j2 - j1 - pairs
    return DiffResult(rows, removed, added, changed, hunks)


def apply_hunks(old: str, new: str, hunks: Sequence[Hunk], accepted: Iterable[int]) -> str:
    """The text of ``old`` with the hunks numbered in ``accepted`` taken from ``new`` (``hunks`` from
    ``diff_texts(old, new)``). Every hunk accepted gives ``new`` exactly, none gives ``old``.

    Raises ``ValueError`` when the hunks do not fit the texts (they were computed from other ones).
    """
    chosen = set(accepted)
    numbers = {h.index for h in hunks}
    if chosen - numbers:
        raise ValueError(f"no hunk {sorted(chosen - numbers)[0]} in this diff")
    a, b = _keep_ends(old), _keep_ends(new)
    out: list[str] = []
    i = j = 0
    for hunk in hunks:
        if (hunk.old_start < i or hunk.new_start < j or hunk.old_end > len(a) or hunk.new_end > len(b)
                or hunk.old_start - i != hunk.new_start - j):
            raise ValueError("the changes do not belong to these texts")
        out.extend(a[i:hunk.old_start])
        out.extend(b[hunk.new_start:hunk.new_end] if hunk.index in chosen else a[hunk.old_start:hunk.old_end])
        i, j = hunk.old_end, hunk.new_end
    if len(a) - i != len(b) - j:
        raise ValueError("the changes do not belong to these texts")
    if chosen == numbers:
        return new
    if not chosen:
        return old
    out.extend(a[i:])
    # Only the last line of a text can lack its newline; inside the result it needs one.
    return "".join(line if line.endswith("\n") or k == len(out) - 1 else line + "\n"
                   for k, line in enumerate(out))
