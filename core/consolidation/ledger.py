"""The ledger of a consolidation: for every old entry removed or rewritten, what became of it.

The offline consolidation states each fate itself. For a model's reply (or another program's rewrite)
the fates are found by matching: an old entry whose text is still somewhere is ``kept``; one whose
words mostly reappear in a new entry was ``rewritten`` as it (same document) or ``merged`` into it;
anything else was ``removed`` and the reply gave no reason, so its facts count as lost.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Iterable, Mapping

from core.consolidation.entries import Entry, normalize, scan, tokens
from core.consolidation.model import ACCOUNTED_FATES, LedgerEntry
from core.documents.diff import diff_line_opcodes, split_lines

__all__ = ["REWRITE_SHARE", "accounted_ranges", "changed_old_lines", "match_ledger"]

#: Share of an old entry's words a new entry must hold to count as its rewrite.
REWRITE_SHARE = 0.5
_COMMON = 64


def changed_old_lines(before: str, after: str) -> set[int]:
    """0-based lines of ``before`` that a line diff to ``after`` removes or replaces."""
    out: set[int] = set()
    for tag, i1, i2, _j1, _j2 in diff_line_opcodes(split_lines(before), split_lines(after)):
        if tag in ("delete", "replace"):
            out.update(range(i1, i2))
    return out


def match_ledger(before: Mapping[str, str | None], after: Mapping[str, str],
                 explicit: Iterable[LedgerEntry] = (), touched_lines: Mapping[str, set[int]] | None = None
                 ) -> list[LedgerEntry]:
    """The ledger of the change ``before`` → ``after`` (path → text), ``explicit`` fates taking precedence.

    ``touched_lines`` gives per path the old lines the diff changes, when the caller has the diff already.
    """
    given = {(e.path, e.line): e for e in explicit}
    new_exact: dict[str, tuple[str, Entry]] = {}
    new_entries: list[tuple[str, Entry, frozenset[str]]] = []
    by_word: dict[str, list[int]] = defaultdict(list)

    def index() -> None:  # the new documents' entries, needed only for an entry without a stated fate
        for path, text in after.items():
            for entry in scan(text):
                if entry.structural:
                    continue
                new_exact.setdefault(normalize(entry.text), (path, entry))
                words = tokens(entry.text)
                for word in words:
                    by_word[word].append(len(new_entries))
                new_entries.append((path, entry, words))

    indexed = False
    out: list[LedgerEntry] = []
    for path, old in before.items():
        if not old or after.get(path) == old:
            continue
        touched = (touched_lines or {}).get(path)
        if touched is None:
            touched = changed_old_lines(old, after.get(path, ""))
        for entry in scan(old):
            if entry.structural or not touched.intersection(range(entry.start, entry.end)):
                continue
            if (path, entry.line) in given:
                out.append(given.pop((path, entry.line)))
                continue
            if not indexed:
                index()
                indexed = True
            out.append(_fate(path, entry, new_exact, new_entries, by_word))
    out.extend(given.values())  # explicit fates of entries the diff did not reach (e.g. moved text)
    out.sort(key=lambda e: (e.path, e.line))
    return out


def _fate(path: str, entry: Entry, new_exact: dict[str, tuple[str, Entry]],
          new_entries: list[tuple[str, Entry, frozenset[str]]], by_word: dict[str, list[int]]) -> LedgerEntry:
    hit = new_exact.get(normalize(entry.text))
    if hit is not None:
        return LedgerEntry(path, entry.line, entry.text, "kept", hit[0], hit[1].line, "")
    words = tokens(entry.text)
    counts: dict[int, int] = defaultdict(int)
    for word in words:
        hits = by_word.get(word)
        if hits and len(hits) <= _COMMON:
            for k in hits:
                counts[k] += 1
    best: tuple[float, int] | None = None
    for k, _n in heapq.nlargest(8, counts.items(), key=lambda kv: kv[1]):
        share = len(words & new_entries[k][2]) / len(words) if words else 0.0
        if best is None or share > best[0]:
            best = (share, k)
    if best is not None and best[0] >= REWRITE_SHARE:
        new_path, new_entry, _w = new_entries[best[1]]
        return LedgerEntry(path, entry.line, entry.text, "rewritten" if new_path == path else "merged", new_path, new_entry.line,
                           f"{round(best[0] * 100)}% of its words")
    return LedgerEntry(path, entry.line, entry.text, "removed", None, None,
                       "not in the result, and no reason was given")


def accounted_ranges(ledger: Iterable[LedgerEntry]) -> dict[str, list[tuple[int, int]]]:
    """Per path, the old line ranges (0-based, end exclusive) of entries marked dropped or superseded."""
    out: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for entry in ledger:
        if entry.fate in ACCOUNTED_FATES:
            out[entry.path].append((entry.line - 1, entry.line - 1 + entry.text.count("\n") + 1))
    return dict(out)
