"""A document's entries, their normalised tokens and the inverted index over them (the near-duplicate and
contradiction rules of :mod:`core.firewall.similarity` read them).

An entry is a paragraph or a top-level list item (headings, HTML comments and code fences are not
entries). Its text is normalised as Fusion's recall store does (``normalizeRecallContent`` in
``packages/core/src/memory/recall/recall-dedup.ts`` at Runfusion/Fusion@3897b294: trim, lower case,
white space collapsed, trailing punctuation dropped) plus markdown marks and inner punctuation, and
split into word tokens. The index maps each token to the entries holding it, so a lookup reads a few
short postings lists instead of every entry (prefix filtering: a candidate must share one of the new
entry's rarest ``n - ceil(t*n) + 1`` tokens).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from sys import intern
from typing import TYPE_CHECKING, NamedTuple

from core.documents.grown import extends

if TYPE_CHECKING:
    from core.firewall.rules import Deadline

NEAR_DUPLICATE_THRESHOLD = 0.9
#: Postings longer than this are not walked when looking for contradiction candidates (see ``candidates``).
COMMON_POSTINGS = 48
MAX_ENTRY_TOKENS = 400


# The functional form (UP014 asks for the class form): real types, not the strings typing compiles one
# by one for the class form under `from __future__ import annotations` (issue 19 item 7).
Entry = NamedTuple("Entry", [  # noqa: UP014
    ("line", int),
    ("start", int),
    ("end", int),
    ("text", str),
])
Entry.__doc__ = 'One entry of a document: its first line (1-based), offsets and text.'


def split_entries(text: str, first_line: int = 1, base: int = 0) -> Iterator[Entry]:
    """The entries of ``text``: paragraphs and top-level list items, without headings, comments and fences."""
    lines: list[str] = []
    start_line = start_off = 0
    in_fence = False
    offset = base
    number = first_line - 1

    def flush() -> Iterator[Entry]:
        if lines:
            body = "\n".join(lines).strip()
            if body:
                yield Entry(start_line, start_off, start_off + len("\n".join(lines)), body)
            lines.clear()

    for raw in text.split("\n"):
        number += 1
        stripped = raw.strip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
            yield from flush()
        elif in_fence or not stripped or stripped.startswith("#") or (
                stripped.startswith("<!--") and stripped.endswith("-->")):
            yield from flush()
        else:
            if raw[:1] in "-*+" and raw[1:2] == " " or (raw[:1].isdigit() and ". " in raw[:5]):
                yield from flush()
            if not lines:
                start_line, start_off = number, offset
            lines.append(raw)
        offset += len(raw) + 1
    yield from flush()


_PUNCT = str.maketrans({c: " " for c in "`*_~#>|()[]{}<>\"'.,;:!?/\\=+&^%$@"})


def normalise(text: str) -> str:
    """Fusion's recall normalisation plus markdown marks and punctuation: lower case, words, one space."""
    body = text.strip().lower()
    if body[:2] in ("- ", "* ", "+ "):
        body = body[2:]
    return " ".join(body.translate(_PUNCT).split())


def tokens(text: str) -> list[str]:
    """The entry's word tokens, in order (at most :data:`MAX_ENTRY_TOKENS`)."""
    return normalise(text).split()[:MAX_ENTRY_TOKENS]


# The functional form (UP014 asks for the class form): real types, not the strings typing compiles one
# by one for the class form under `from __future__ import annotations` (issue 19 item 7).
_Indexed = NamedTuple("_Indexed", [  # noqa: UP014
    ("entry", Entry),
    ("norm", str),
    ("seq", list[str]),
    ("bag", frozenset[str]),
])


class EntryIndex:
    """A document's entries with an inverted index from token to entry ids; extended as the text grows."""

    def __init__(self) -> None:  # a plain class, not a dataclass: less at import (measured, ~0.5 ms)
        self.text = ""
        self.entries: list[_Indexed] = []
        self.postings: dict[str, list[int]] = {}
        self.exact: dict[str, int] = {}
        self.newlines = 0  # newlines in ``text``, kept so an extension counts only its own
        #: Whether each entry is the first with its normalised text: later copies are never compared again
        #: (a memory that repeats an entry nine times costs one comparison, and the first copy is named).
        self.canonical: list[bool] = []

    @classmethod
    def build(cls, text: str) -> EntryIndex:
        """Index every entry of ``text``."""
        index = cls()
        index._add_text(text, 1, 0)
        index.text = text
        index.newlines = text.count("\n")
        return index

    def updated(self, text: str) -> EntryIndex:
        """This index for ``text``: extended in place when ``text`` only adds to the end, else rebuilt."""
        if text is self.text or text == self.text:
            return self
        if extends(text, self.text):  # known without reading both texts when an append joined them
            # The last entry may go on in the new text (seed appends add "\n\n<!-- date -->\n" after a
            # file that ends without a newline): index again from its start, everything before stays.
            start, first_line = len(self.text), self.newlines + 1
            if self.entries and (self.entries[-1].entry.end >= len(self.text) - 1 or not self.text.endswith("\n\n")):
                last = self._drop_last()
                start, first_line = last.start, last.line
            self._add_text(text[start:], first_line, start)
            self.newlines += text.count("\n", len(self.text))
            self.text = text
            return self
        return EntryIndex.build(text)

    def _drop_last(self) -> Entry:
        item = self.entries.pop()
        self.canonical.pop()
        ident = len(self.entries)
        for token in item.bag:
            ids = self.postings[token]
            if ids and ids[-1] == ident:
                ids.pop()
            if not ids:
                del self.postings[token]
        if self.exact.get(item.norm) == ident:
            del self.exact[item.norm]
        return item.entry

    def _add_text(self, text: str, first_line: int, base: int) -> None:
        for entry in split_entries(text, first_line, base):
            self.add(entry)

    def add(self, entry: Entry, seq: list[str] | None = None) -> None:
        """Index one entry (``seq``: its :func:`tokens`, when the caller has them already)."""
        seq = [intern(t) for t in (tokens(entry.text) if seq is None else seq)]  # one string per distinct word
        item = _Indexed(entry, " ".join(seq), seq, frozenset(seq))
        ident = len(self.entries)
        self.entries.append(item)
        self.canonical.append(item.norm not in self.exact)
        self.exact.setdefault(item.norm, ident)
        for token in item.bag:
            self.postings.setdefault(token, []).append(ident)

    def candidates(self, bag: frozenset[str], threshold: float, deadline: Deadline) -> dict[int, int]:
        """Entries that may reach ``threshold`` Jaccard with ``bag``, with how many tokens they share."""
        n = len(bag)
        if not n:
            return {}
        need = n - math.ceil(threshold * n) + 1
        need_duplicate = n - math.ceil(NEAR_DUPLICATE_THRESHOLD * n) + 1
        rare = sorted(bag, key=lambda t: len(self.postings.get(t, ())))[:need]
        shared: dict[int, int] = {}
        for k, token in enumerate(rare):
            deadline.check("near-duplicate")
            ids = self.postings.get(token, ())
            # Every near-duplicate is found through the first ``need_duplicate`` tokens. Beyond them (the
            # wider net for contradictions), a token in more than COMMON_POSTINGS entries ("plugin",
            # "test") says little about the subject and its postings are skipped: the walk stays short.
            if k >= need_duplicate and len(ids) > COMMON_POSTINGS:
                continue
            for ident in ids:
                if ident not in shared and self.canonical[ident]:
                    shared[ident] = len(bag & self.entries[ident].bag)
        return shared
