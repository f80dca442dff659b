"""Fuzzy matching for quick open and the command palette: the query's characters, in order, anywhere.

Pure Python (no Qt). ``"mmd"`` finds ``MEMORY.md``; ``"rev mem"`` finds
``agent-memory/reviewer/MEMORY.md`` (spaces split the query into parts, each matched on its own).
Each part ranks in tiers a person expects: the part whole in the file name (best at the name's
start or a word start), whole anywhere in the path, its characters in order in the name, then in
the path; word starts (after ``/ - _ . space`` or a capital) and shorter candidates break ties,
then the candidates' own order. Matched positions (for bold) are computed only for the rows shown.
:class:`FuzzyIndex` keeps the lowered candidates and narrows the last result when the query only
grew by a character, so a keystroke over 600 documents costs about a millisecond.
"""

from __future__ import annotations

from dataclasses import dataclass

_SEPARATORS = frozenset("/\\-_. :▸")


@dataclass(frozen=True)
class FuzzyMatch:
    """A candidate that matched: its index and score (higher is better)."""

    index: int
    score: float


def _is_subsequence(part: str, text: str) -> bool:
    pos = 0
    for ch in part:
        pos = text.find(ch, pos)
        if pos < 0:
            return False
        pos += 1
    return True


def _at_word_start(text: str, i: int) -> bool:
    return i == 0 or text[i - 1] in _SEPARATORS


def _base(lower: str) -> int:
    return max(lower.rfind("/"), lower.rfind("▸"), lower.rfind(":")) + 1


def _part_score(part: str, lower: str, base: int, name: str | None = None) -> float | None:
    name = lower[base:] if name is None else name
    found = name.find(part)
    if found >= 0:
        return 400 + (60 if found == 0 else 30 if _at_word_start(name, found) else 0)
    found = lower.find(part)
    if found >= 0:
        return 300 + (30 if _at_word_start(lower, found) else 0)
    if _is_subsequence(part, name):
        return 200 + (20 if name.startswith(part[0]) else 0)
    if _is_subsequence(part, lower):
        return 100
    return None


def fuzzy_score(query: str, candidate: str, lower: str | None = None) -> float | None:
    """The score of ``query`` against ``candidate`` (``None``: no match; an empty query matches all)."""
    lower = candidate.lower() if lower is None else lower
    base = _base(lower)
    total = 0.0
    for part in query.lower().split():
        score = _part_score(part, lower, base)
        if score is None:
            return None
        total += score
    return total - len(candidate) * 0.1


def match_positions(query: str, candidate: str) -> list[int]:
    """Where ``query``'s characters fall in ``candidate`` (for bold): each part whole where it scores,
    else its characters in order, from the file name when they all fit there."""
    lower = candidate.lower()
    base = _base(lower)
    positions: set[int] = set()
    for part in query.lower().split():
        found = lower.find(part, base)
        if found < 0:
            found = lower.find(part)
        if found >= 0:
            positions.update(range(found, found + len(part)))
            continue
        start = base if _is_subsequence(part, lower[base:]) else 0
        pos = start
        for ch in part:
            pos = lower.find(ch, pos)
            if pos < 0:
                break
            positions.add(pos)
            pos += 1
    return sorted(positions)


class FuzzyIndex:
    """Candidates prepared once; :meth:`search` ranks them for a query."""

    def __init__(self, candidates: list[str]) -> None:
        self.candidates = candidates
        self._lower = [c.lower() for c in candidates]
        self._bases = [_base(c) for c in self._lower]
        self._names = [low[base:] for low, base in zip(self._lower, self._bases, strict=True)]
        self._last: tuple[str, list[int]] | None = None

    def search(self, query: str, limit: int | None = None) -> list[FuzzyMatch]:
        """The matching candidates, best first (ties in the candidates' order)."""
        q = " ".join(query.lower().split())
        if not q:
            self._last = None
            matches = [FuzzyMatch(i, 0.0) for i in range(len(self.candidates))]
            return matches[:limit] if limit else matches
        pool: range | list[int] = range(len(self.candidates))
        if self._last is not None and q.startswith(self._last[0]):
            # A longer query only narrows what matched: a part that grew matches fewer candidates, and a
            # new part (after a space) is one more condition each must meet.
            pool = self._last[1]
        parts = q.split()
        found: list[FuzzyMatch] = []
        lowers, bases, names, length = self._lower, self._bases, self._names, self.candidates
        for i in pool:
            lower = lowers[i]
            total = 0.0
            for part in parts:
                score = _part_score(part, lower, bases[i], names[i])
                if score is None:
                    break
                total += score
            else:
                found.append(FuzzyMatch(i, total - len(length[i]) * 0.1))
        self._last = (q, [m.index for m in found])
        found.sort(key=lambda m: (-m.score, m.index))
        return found[:limit] if limit else found
