"""The index a document's saves are compared with, kept from one save to the next (issue 20, the save path).

A save replaces the whole document, but changes a few entries. Indexing the rest of a 1 MiB memory on
every save cost 200-500 ms; looking each added entry up in the text costs a scan of the document per
word. This keeps one :class:`~core.firewall.similarity.EntryIndex` per document across saves: entries the
save removes (a line of theirs is no longer in the document) are retired, the entries it adds are indexed
when the next save shows the write happened (its ``current`` is this save's text). A save that does not
start from the text the index knows (another writer came between) rebuilds it once.

Entries keep the line they had when indexed; a finding names the line the entry has in the new text
(looked up with ``str.find`` for the one entry named).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from core.firewall.rules import Deadline, Finding
from core.firewall.similarity import EntryIndex, match_entry, split_entries, tokens


@dataclass
class _Kept:
    """One document's index, the text it describes, its retired entries, and the save not yet confirmed."""

    index: EntryIndex
    text: str
    dead: set[int] = field(default_factory=set)
    pending: tuple[str, set[int], str] | None = None  # (the save's text, entries it retires, its added excerpt)


def _retire(index: EntryIndex, dead: set[int], ident: int) -> None:
    """Take entry ``ident`` out of the comparisons; a later live copy of it becomes the one compared."""
    dead.add(ident)
    item = index.entries[ident]
    was_canonical = index.canonical[ident]
    index.canonical[ident] = False
    if was_canonical and index.exact.get(item.norm) == ident:
        del index.exact[item.norm]
        rare = min(item.bag, key=lambda t: len(index.postings.get(t, ())), default=None)
        for other in index.postings.get(rare, ()) if rare is not None else ():
            if other > ident and other not in dead and index.entries[other].norm == item.norm:
                index.canonical[other] = True
                index.exact[item.norm] = other
                break


def _unretire(index: EntryIndex, retired: set[int]) -> None:
    """Undo :func:`_retire` for ``retired`` (a save's view, until the next save shows it was written)."""
    for ident in sorted(retired):
        item = index.entries[ident]
        first = index.exact.get(item.norm)
        if first is None or first > ident:
            if first is not None:
                index.canonical[first] = False
            index.exact[item.norm] = ident
            index.canonical[ident] = True


class RestIndexes:
    """The kept indexes of the last few documents saved, by document key."""

    def __init__(self, size: int = 2) -> None:  # an index of a 1 MiB memory holds about 15 MB
        self._items: OrderedDict[str, _Kept] = OrderedDict()
        self._seen: set[str] = set()
        self._size = size
        self._lock = threading.Lock()

    def scan(self, key: str, current: str, new: str, added: str, deadline: Deadline,
             gone: set[str] | None = None) -> list[Finding] | None:
        """Near-duplicates and contradictions of the ``added`` excerpt against the rest of ``new``.

        ``None`` on the first save of ``key`` in this process (the caller compares another way: a one-shot
        process never pays for an index); the second save builds the index, later ones keep it up to date.
        """
        with self._lock:
            kept = self._kept(key, current)
            if kept is None:
                return None
            dead = self._removed(kept, current, new, gone)
            kept.pending = (new, dead, added)
            retired = dead - kept.dead
            for ident in retired:
                _retire(kept.index, kept.dead, ident)
            try:
                return self._compare(kept.index, new, added, deadline)
            finally:
                kept.dead.difference_update(retired)
                _unretire(kept.index, retired)

    def _kept(self, key: str, current: str) -> _Kept | None:
        kept = self._items.get(key)
        if kept is not None and kept.text != current:
            pending = kept.pending
            if pending is not None and current.startswith(pending[0]):  # the last save was written
                new, dead, added = pending
                for ident in dead - kept.dead:
                    _retire(kept.index, kept.dead, ident)
                for entry in split_entries(added):
                    kept.index.add(entry)  # the excerpt's lines: a finding looks the entry up in the text
                kept.text, kept.pending = new, None
            if len(current) > len(kept.text) and current.startswith(kept.text):  # appends came after it
                for entry in split_entries(current[len(kept.text):]):
                    kept.index.add(entry)
                kept.text = current
            if kept.text != current or len(kept.dead) * 2 > len(kept.index.entries) + 64:
                kept = None  # another writer replaced the text, or mostly retired: index it again later
                self._items.pop(key, None)
                return None  # this save is compared by look-up
        if kept is None:
            if key not in self._seen:
                self._seen.add(key)
                return None
            kept = _Kept(EntryIndex.build(current), current)
            self._items[key] = kept
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        self._items.move_to_end(key)
        return kept

    @staticmethod
    def _removed(kept: _Kept, current: str, new: str, gone: set[str] | None = None) -> set[int]:
        """The live entries of the index holding a line that the new text no longer has (``gone``)."""
        if gone is None:
            gone = set(current.split("\n")).difference(new.split("\n"))
        index, dead = kept.index, set()
        for line in gone:
            words = tokens(line)
            body = line.strip()
            if not words or not body:
                continue
            rare = min(words, key=lambda t: len(index.postings.get(t, ())))
            for ident in index.postings.get(rare, ()):
                if ident not in kept.dead and body in index.entries[ident].entry.text:
                    dead.add(ident)
        return dead

    @staticmethod
    def _compare(index: EntryIndex, new: str, added: str, deadline: Deadline) -> list[Finding]:
        findings: list[Finding] = []
        for entry in split_entries(added):
            deadline.check("near-duplicate")
            found = match_entry(entry.text, index, deadline)
            if found is None:
                continue
            kind, message, other = found
            pos = new.find(other.text)
            line = new.count("\n", 0, pos) + 1 if pos >= 0 else other.line
            if line != other.line:
                message = message.replace(f"line {other.line}", f"line {line}", 1)
            findings.append(Finding(kind, kind, entry.line, (entry.start, entry.end), message))  # type: ignore[arg-type]
        return findings
