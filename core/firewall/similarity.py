"""Near-duplicate and contradiction rules over an index of a document's entries, built once and extended.

The entries, their tokens and the inverted index are :mod:`core.firewall.entry_index` (whose names this
module still exports). Two entries are near-duplicates when the Jaccard similarity of their token
sets is at least :data:`NEAR_DUPLICATE_THRESHOLD` (Fusion's ``RECALL_DEDUP_SIMILARITY_THRESHOLD``, 0.9)
or their normalised texts are equal. Fusion compares a new record with the last 200 of its kind; memdesk
compares with every entry of the document, through an inverted index: a candidate must share one of
the new entry's rarest ``n - ceil(t*n) + 1`` tokens (prefix filtering), so a lookup reads a few short
postings lists instead of every entry; a process that writes once looks the new entry's words up in the
text instead (:class:`TextLookup`).

A contradiction is a pair about the same subject that changes a value, a negation or a choice: the
token sequences share a prefix and a suffix of content words and differ in one short stretch ("use the
DB clock for lease expiry" / "use the app server clock for lease expiry"), or one adds a negation.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable, Iterator

from core.firewall.entry_index import (
    COMMON_POSTINGS,
    MAX_ENTRY_TOKENS,
    NEAR_DUPLICATE_THRESHOLD,
    Entry,
    EntryIndex,
    normalise,
    split_entries,
    tokens,
)
from core.firewall.rules import Deadline, Finding, RuleInfo

#: Jaccard at which a pair is close enough to be about the same subject (then checked for a contradiction).
SAME_SUBJECT_THRESHOLD = 0.5
MIN_TOKENS = 4
#: Words looked up beyond those a near-duplicate needs, for contradictions, when there is no index.
LOOKUP_EXTRA = 4
_NEGATIONS = frozenset({"not", "never", "no", "dont", "don't", "doesnt", "isnt", "avoid", "without", "stop",
                        "cannot", "cant", "shouldnt", "mustnt", "wont", "instead", "disable", "disabled"})
_STOP = frozenset({"the", "a", "an", "of", "to", "in", "on", "for", "and", "or", "is", "are", "be", "it", "this",
                   "that", "with", "as", "at", "by", "from", "we", "use", "uses", "when", "if", "so", "all"})


def most_words(n: int, threshold: float) -> int:
    """The most distinct words an entry may have and still be compared with an entry of ``n`` distinct words.

    Jaccard(a, b) <= n / |b| when |a| = n, so an entry with more than ``n / lowest`` distinct words reaches
    neither threshold :func:`_decide` uses (``threshold`` for near-duplicates, :data:`SAME_SUBJECT_THRESHOLD`
    for contradictions): it is not tokenised whole (a 10 KB paragraph costs what its first words do).
    """
    lowest = min(threshold, SAME_SUBJECT_THRESHOLD)
    return math.floor(n / lowest + 1e-9) if lowest > 0 else MAX_ENTRY_TOKENS


def _more_distinct_tokens(text: str, limit: int) -> bool:
    """Whether ``frozenset(tokens(text))`` has more than ``limit`` members, read from a prefix when that decides.

    :func:`normalise` works character by character (case, punctuation, white space), so the words of a prefix
    of the text are the text's first words, all whole but perhaps the last one. Measured reason: a one-shot
    ``memdesk append`` to a memory of long paragraphs tokenised ~100 of them whole (10 KB each, 40+ ms);
    their first few hundred characters already hold more distinct words than a candidate may have.
    """
    body = text.lstrip()  # so a prefix starts where normalise's own strip starts (its "- " is then the same)
    size = 16 * (limit + 2)
    while size < len(body):
        seq = normalise(body[:size]).split()
        whole = seq[:-1][:MAX_ENTRY_TOKENS]  # the last word may be cut at the prefix's end
        if len(set(whole)) > limit:
            return True
        if len(whole) >= MAX_ENTRY_TOKENS:  # every word tokens() keeps was seen
            return False
        size *= 4
    return len(set(tokens(text))) > limit


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b| (1.0 for two empty sets, as Fusion's ``recallSimilarity``)."""
    union = len(a | b)
    return 1.0 if not union else len(a & b) / union


def code_tokens(text: str) -> frozenset[str]:
    """Tokens inside the entry's inline code spans (identifiers, paths, commands)."""
    parts = text.split("`")
    return frozenset(t for code in parts[1::2] for t in tokens(code))


def contradiction(a: list[str], b: list[str], code: frozenset[str] = frozenset()) -> str | None:
    """Why ``a`` and ``b`` contradict (same subject, changed value, negation or choice), or ``None``.

    The two token sequences are aligned by their common start and common end; what is left in the middle
    of each is the change (one stretch: "use the [DB] clock …" / "use the [app server] clock …"). A plain
    prefix/suffix alignment, linear and without difflib (which a one-shot ``memdesk append`` never loads).
    A change inside inline code (``code``) names another thing (a parallel list of identifiers or
    commands), not another value for the same thing, and is not a contradiction.
    """
    if a == b:
        return None
    limit = min(len(a), len(b))
    head = 0
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    changed_a, changed_b = a[head:len(a) - tail], b[head:len(b) - tail]
    kept = [t for t in a[:head] + a[len(a) - tail:] if t not in _STOP]
    if len(kept) < 2:
        return None
    negated = (set(changed_a) | set(changed_b)) & _NEGATIONS
    if negated and len(changed_a) <= 4 and len(changed_b) <= 4 and (
            not changed_a or not changed_b or set(changed_a) ^ set(changed_b) <= _NEGATIONS | {"always"}):
        return "one negates the other"
    if not changed_a or not changed_b or len(changed_a) > 4 or len(changed_b) > 4:
        return None
    if code.intersection(changed_a) or code.intersection(changed_b):
        return None
    if any(t.isdigit() for t in changed_a) and any(t.isdigit() for t in changed_b):
        return "changes a value"
    return "changes a choice"


def match_entry(text: str, index: EntryIndex, deadline: Deadline, *,
                threshold: float = NEAR_DUPLICATE_THRESHOLD,
                seq: list[str] | None = None) -> tuple[str, str, Entry] | None:
    """The indexed entry ``text`` duplicates or contradicts: ``(kind, message, entry)``, or ``None``
    (``seq``: the :func:`tokens` of ``text``, when the caller has them already)."""
    seq = tokens(text) if seq is None else seq
    bag = frozenset(seq)
    if len(bag) < MIN_TOKENS:
        return None
    same = index.exact.get(" ".join(seq))
    if same is not None:
        return _same(index.entries[same].entry)
    items = index.entries
    candidates = ((items[i].entry, items[i].seq, items[i].bag, common)
                  for i, common in index.candidates(bag, SAME_SUBJECT_THRESHOLD, deadline).items())
    return _decide(text, seq, bag, candidates, threshold)


def _same(other: Entry) -> tuple[str, str, Entry]:
    return ("near-duplicate", f"same as the entry at line {other.line} once case, punctuation and markdown are "
                              f"set aside: {_quote(other.text)}", other)


def _decide(text: str, seq: list[str], bag: frozenset[str],
            candidates: Iterable[tuple[Entry, list[str], frozenset[str], int]],
            threshold: float) -> tuple[str, str, Entry] | None:
    """The closest near-duplicate among ``candidates`` (entry, tokens, token set, tokens shared), else the
    first contradiction, else ``None``."""
    best: tuple[float, Entry] | None = None
    clash: tuple[str, Entry] | None = None
    for other, other_seq, other_bag, common in candidates:
        similarity = common / (len(bag) + len(other_bag) - common)
        if similarity >= threshold and (best is None or similarity > best[0]):
            best = (similarity, other)
        elif clash is None and similarity >= SAME_SUBJECT_THRESHOLD:
            why = contradiction(seq, other_seq, code_tokens(text) | code_tokens(other.text))
            if why:
                clash = (why, other)
    if best is not None:
        return "near-duplicate", f"{best[0]:.0%} like the entry at line {best[1].line}: {_quote(best[1].text)}", best[1]
    if clash is not None:
        return "contradiction", f"{clash[0]} of the entry at line {clash[1].line}: {_quote(clash[1].text)}", clash[1]
    return None


def scan_similar(new_text: str, index: EntryIndex | TextLookup, deadline: Deadline, *,
                 threshold: float = NEAR_DUPLICATE_THRESHOLD) -> list[Finding]:
    """Near-duplicates and contradictions between the entries of ``new_text`` and the indexed document."""
    findings: list[Finding] = []
    for entry in split_entries(new_text):
        deadline.check("near-duplicate")
        found = (match_entry(entry.text, index, deadline, threshold=threshold) if isinstance(index, EntryIndex)
                 else index.match(entry.text, deadline, threshold=threshold))
        if found is not None:
            kind, message, _other = found
            findings.append(Finding(kind, kind, entry.line, (entry.start, entry.end), message))  # type: ignore[arg-type]
    return findings


class TextLookup:
    """Near-duplicates and contradictions found in a document's text without indexing it.

    A process that writes to a document once (``memdesk append``) would spend more on indexing a 1 MiB
    memory (tens of ms) than on everything else. The same prefix argument as :meth:`EntryIndex.candidates`
    holds for *any* choice of the new entry's tokens, so this looks up only its longest ones (long words are
    the rare ones) with ``str.find`` on the lower-cased text, takes the entries of the paragraphs they occur
    in, and compares those. A token that occurs more than :data:`COMMON_POSTINGS` times is looked up only when
    a near-duplicate could hide behind it, and for contradictions at most :data:`LOOKUP_EXTRA` more words are
    (the index, built on the next write, casts the wider net).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._lowered: str | None = None
        self._data: bytes | None = None  # the text's UTF-8, and the same with ASCII letters lowered (_haystack)
        self._ascii: bytes | None = None
        self._plain: bool | None = None  # no character whose lower case is ASCII or longer (U+212A, U+0130)
        self._lines: dict[tuple[bool, int], int] = {}
        self._paragraphs: dict[tuple[bool, int], tuple[list[int], list[Entry]]] = {}
        self._shapes: dict[bytes, list[tuple[int, int, int, str]]] = {}
        self._known: dict[bool, list[int]] = {False: [], True: []}
        self._entry_paragraph: dict[int, int] = {}  # (bytes) an entry's start -> its paragraph's start

    def _haystack(self, words: list[str]) -> str | bytes | None:
        """Where ``words`` are looked up: the text lowered, or ``None`` when lowering changes its length.

        Measured reason: ``str.lower`` of a 1 MiB memory with a few non-ASCII characters takes ~10 ms, a
        third of a one-shot ``memdesk append``; its UTF-8 bytes lowered (ASCII letters only) take 0.3 ms.
        The two find an ASCII word at the same places unless the text holds a character whose lower case
        is ASCII (U+212A KELVIN SIGN, U+0130), so the bytes serve when every word is ASCII and neither is
        there. Offsets are then byte offsets, used only inside this lookup (lines are counted alike).
        """
        if self._plain is None:
            self._plain = "\u212a" not in self.text and "\u0130" not in self.text
        if self._plain and all(w.isascii() for w in words):
            if self._ascii is None:
                self._data = self.text.encode("utf-8")
                self._ascii = self._data.lower()
            return self._ascii
        if self._lowered is None:
            lowered = self.text.lower()
            self._lowered = lowered if len(lowered) == len(self.text) else ""
        return self._lowered if self._lowered or not self.text else None

    def match(self, entry_text: str, deadline: Deadline, *,
              threshold: float = NEAR_DUPLICATE_THRESHOLD) -> tuple[str, str, Entry] | None:
        """As :func:`match_entry`, over the entries around the new entry's rarest-looking words."""
        seq = tokens(entry_text)
        bag = frozenset(seq)
        if len(bag) < MIN_TOKENS:
            return None
        n = len(bag)
        need = n - math.ceil(SAME_SUBJECT_THRESHOLD * n) + 1
        need_duplicate = n - math.ceil(threshold * n) + 1
        words = sorted(bag, key=lambda t: (-len(t), t))[:min(need, need_duplicate + LOOKUP_EXTRA)]
        hay = self._haystack(words)
        if hay is None:  # lower() changed lengths (rare scripts): index it instead
            return match_entry(entry_text, EntryIndex.build(self.text), deadline, threshold=threshold)
        norm = " ".join(seq)
        most = most_words(n, threshold)  # an entry with more distinct words is never a candidate
        found: dict[int, tuple[Entry, list[str], frozenset[str], int]] = {}
        copies: dict[str, int] = {}  # an entry's text -> the start of its first copy found (later copies: no work)
        for k, token in enumerate(words):
            deadline.check("near-duplicate")
            needle: str | bytes = token.encode("utf-8") if isinstance(hay, bytes) else token
            if k >= need_duplicate and _occurs_more_than(hay, needle, COMMON_POSTINGS):
                continue
            for pos, start, end in self._occurrences(hay, needle, deadline):
                starts, entries = self._entries_of(hay, start, end)
                i = bisect_right(starts, pos) - 1  # the entry the word occurs in
                if i < 0 or entries[i].start in found or pos >= entries[i].end:
                    continue
                first = copies.setdefault(entries[i].text, entries[i].start)
                if first != entries[i].start:  # a copy of an entry already compared: name the earlier one
                    if entries[i].start < first:
                        copies[entries[i].text] = entries[i].start
                        found[entries[i].start] = (entries[i], *found.pop(first)[1:])
                    continue
                if _more_distinct_tokens(entries[i].text, most):  # too many words to reach ``lowest``: never
                    found[entries[i].start] = (entries[i], [], frozenset(), 0)  # a candidate (similarity 0)
                    continue
                other_seq = tokens(entries[i].text)
                if " ".join(other_seq) == norm:
                    return _same(self._absolute(hay, start, entries[i]))
                other_bag = frozenset(other_seq)
                found[entries[i].start] = (entries[i], other_seq, other_bag, len(bag & other_bag))
        ordered = sorted(found.values(), key=lambda c: c[0].start)  # the first copy in the document is named
        if isinstance(hay, bytes):  # lines counted only for the entries _decide may name (the rest: never read)
            lowest = min(threshold, SAME_SUBJECT_THRESHOLD)
            ordered = [(self._absolute(hay, self._paragraph_start(c[0]), c[0]), *c[1:])
                       if c[3] and c[3] / (n + len(c[2]) - c[3]) >= lowest else c for c in ordered]
        return _decide(entry_text, seq, bag, ordered, threshold)

    def _paragraph_start(self, entry: Entry) -> int:
        return self._entry_paragraph[entry.start]

    def _absolute(self, hay: str | bytes, paragraph: int, entry: Entry) -> Entry:
        """``entry`` with its line in the document (entries found in the bytes carry their line in the paragraph)."""
        if not isinstance(hay, bytes):
            return entry
        return entry._replace(line=self._line_of(hay, self._entry_paragraph.get(entry.start, paragraph)) - 1 + entry.line)

    @staticmethod
    def _occurrences(hay: str | bytes, token: str | bytes, deadline: Deadline) -> Iterator[tuple[int, int, int]]:
        """Each place ``token`` occurs in ``hay``, with the paragraph (between blank lines) around it."""
        gap = b"\n\n" if isinstance(hay, bytes) else "\n\n"
        pos = hay.find(token)  # type: ignore[arg-type]
        while pos >= 0:
            deadline.check("near-duplicate")
            start = hay.rfind(gap, 0, pos)  # type: ignore[arg-type]
            start = 0 if start < 0 else start + 2
            end = hay.find(gap, pos)  # type: ignore[arg-type]
            end = len(hay) if end < 0 else end
            yield pos, start, end
            pos = hay.find(token, pos + len(token))  # type: ignore[arg-type]

    def _entries_of(self, hay: str | bytes, start: int, end: int) -> tuple[list[int], list[Entry]]:
        """The entries of the paragraph ``hay[start:end]`` and their offsets (in ``hay``'s units), split once."""
        in_bytes = isinstance(hay, bytes)
        key = (in_bytes, start)
        if key not in self._paragraphs:
            if not in_bytes:
                entries = list(split_entries(self.text[start:end], self._line_of(hay, start), start))
            else:  # lines in the paragraph: the document's line is counted only for an entry that is named
                entries = [Entry(n, start + a, start + b, text)
                           for n, a, b, text in self._shape(self._data[start:end])]  # type: ignore[index]
                for e in entries:
                    self._entry_paragraph[e.start] = start
            self._paragraphs[key] = ([e.start for e in entries], entries)
        return self._paragraphs[key]

    def _shape(self, raw: bytes) -> list[tuple[int, int, int, str]]:
        """The entries of one paragraph's UTF-8 bytes as (line in it from 1, byte start, byte end, text).

        Kept by content: a memory that repeats a paragraph (a copied section, an agent's repeated note)
        splits it once."""
        shape = self._shapes.get(raw)
        if shape is None:
            paragraph = raw.decode("utf-8")
            entries = list(split_entries(paragraph))
            if raw.isascii():
                shape = [(e.line, e.start, e.end, e.text) for e in entries]
            else:  # character offsets -> byte offsets, counted in one pass
                at_char, at_byte, shape = 0, 0, []
                for e in entries:  # in order, apart: each stretch of the paragraph is encoded once
                    first = at_byte + len(paragraph[at_char:e.start].encode("utf-8"))
                    at_char, at_byte = e.end, first + len(paragraph[e.start:e.end].encode("utf-8"))
                    shape.append((e.line, first, at_byte, e.text))
            self._shapes[raw] = shape
        return shape

    def _line_of(self, hay: str | bytes, offset: int) -> int:
        in_bytes = isinstance(hay, bytes)
        key = (in_bytes, offset)
        if key not in self._lines:
            known = self._known[in_bytes]  # offsets counted so far, in order
            at = bisect_right(known, offset)
            below = known[at - 1] if at else 0
            source: str | bytes = self._ascii if in_bytes else self.text  # type: ignore[assignment]
            newline = b"\n" if in_bytes else "\n"
            self._lines[key] = self._lines.get((in_bytes, below), 1) + source.count(newline, below, offset)  # type: ignore[arg-type]
            known.insert(at, offset)
        return self._lines[key]


def _occurs_more_than(hay: str | bytes, needle: str | bytes, limit: int) -> bool:
    """``hay.count(needle) > limit``, stopping at the occurrence that decides it (a common word of a 1 MiB memory
    is decided in its first few KB; ``count`` read the whole text for each: ~0.3 ms a word, measured)."""
    pos, seen = 0, 0
    while seen <= limit:
        pos = hay.find(needle, pos)  # type: ignore[arg-type]
        if pos < 0:
            return False
        seen, pos = seen + 1, pos + len(needle)
    return True


def _quote(text: str, limit: int = 120) -> str:
    one = " ".join(text.split())
    return f"“{one if len(one) <= limit else one[:limit - 1] + '…'}”"


RULES: tuple[RuleInfo, ...] = (
    RuleInfo("near-duplicate", "near-duplicate",
             "An entry equal to one already in the document once case, punctuation, markdown and white space "
             "are set aside, or with word-set Jaccard similarity ≥ 0.9",
             "Fusion recall-dedup.ts (threshold 0.9), memdesk index",
             "use the DB clock for lease expiry. (beside “Use the DB clock for lease expiry”)",
             "use the DB clock for lease renewal timeouts in tests"),
    RuleInfo("contradiction", "contradiction",
             "An entry about the same subject as an existing one that changes a value, a negation or a choice",
             "memdesk (token alignment: common start and end, one changed stretch)",
             "Use the app server clock for lease expiry (beside “Use the DB clock for lease expiry”)",
             "Use the DB clock for lease expiry in tests too"),
)
