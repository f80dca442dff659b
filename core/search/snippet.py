"""Snippets: the part of an entry around the query's words, with those words marked «like this».

Made in Python from the entry's text rather than with FTS5's ``snippet()`` or ``highlight()``: those
run for every row a query ranks, not only the page's, and even on the page alone ``highlight()``
(tokenizing the row again, in C) costs about what finding the words here does, while the window
would still be chosen here. Matching mirrors the tokenizer closely enough for highlighting: words
are compared case-insensitively with common English endings removed (porter), exactly (unicode61),
or as substrings (trigram). Which entries match is decided by FTS5 alone.

A search makes one :class:`Highlighter`: the exact test of its all-words hits (which ranks them) and
their snippets read the words found once in each text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable

MARKS = ("«", "»")
_OPEN, _CLOSE = MARKS
WIDTH_CHARS = 180
_WORD = re.compile(r"\w+", re.UNICODE)
_SUFFIXES = ("ations", "ation", "ingly", "ings", "ing", "edly", "ed", "ies", "es", "s", "ly", "ers", "er")


@functools.lru_cache(maxsize=8192)  # the same words come back in every snippet
def _stem(word: str) -> str:
    w = word.lower()
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[: -len(suffix)]
    return w


def _holds_word(lower: str, word: str) -> bool:
    """Whether ``word`` is a whole word of ``lower``."""
    i = lower.find(word)
    size = len(word)
    while i >= 0:
        if i == 0 or not (lower[i - 1].isalnum() or lower[i - 1] == "_"):
            after = lower[i + size:i + size + 1]  # "" at the end
            if not (after.isalnum() or after == "_"):
                return True
        i = lower.find(word, i + 1)
    return False


class _Matcher:
    """Finds the words of a text that match the query's words (built once per search).

    Porter and unicode61 look the query words up with ``str.find`` in the lower-cased text rather
    than with a regular expression made for the query: compiling one costs more than finding the
    words of a page of snippets.
    """

    def __init__(self, terms: Iterable[str], tokenizer: str) -> None:
        words = {w.lower() for t in terms for w in _WORD.findall(t)}
        self.tokenizer = tokenizer
        self.words = words
        self.stems: set[str] = set()
        self.pattern: re.Pattern[str] | None = None
        #: Whether a word that is exactly the needle matches (a longer one is checked when found).
        self.bare: dict[str, bool] = {}
        if tokenizer == "trigram":  # matches inside words
            alts = [re.escape(w) for w in sorted(words, key=len, reverse=True) if len(w) >= 3]
            self.pattern = re.compile("(?:" + "|".join(alts) + ")" if alts else r"(?!x)x", re.IGNORECASE)
            self.needles: list[str] = []
        elif tokenizer == "unicode61":
            self.needles = sorted(words)
            self.bare = dict.fromkeys(words, True)
        else:
            # A word matches when its stem is a query word's stem, so it starts with that stem: the needles
            # are the stems, less those starting with a shorter one (no two needles then match at one place).
            self.stems = {_stem(w) for w in words}
            needles: list[str] = []
            for stem in sorted(self.stems, key=len):
                if not any(stem.startswith(n) for n in needles):
                    needles.append(stem)
            self.needles = needles
            self.bare = {n: _stem(n) in self.stems for n in needles}
        self._looks = [(n, len(n), self.bare[n]) for n in self.needles]

    def spans(self, flat: str) -> list[tuple[int, int]]:
        """Character spans of the matching words of ``flat``."""
        if self.pattern is not None:
            return [m.span() for m in self.pattern.finditer(flat)]
        lower = flat.lower()
        if len(lower) != len(flat):  # lower-casing changed the length (rare letters): offsets would drift
            return self._spans_by_word(flat)
        found: list[tuple[int, int]] = []
        stemmed = self.tokenizer != "unicode61"
        find, match, stems, add = lower.find, _WORD.match, self.stems, found.append
        for needle, size, bare in self._looks:
            i = find(needle)
            while i >= 0:
                if i:
                    before = lower[i - 1]
                    if before.isalnum() or before == "_":  # inside a word
                        i = find(needle, i + 1)
                        continue
                end = i + size
                after = lower[end:end + 1]  # "" at the end
                if after.isalnum() or after == "_":  # a longer word: its end, then its stem
                    end = match(lower, end).end()  # type: ignore[union-attr]  # lower[end] is a word char
                    if stemmed and _stem(lower[i:end]) in stems:
                        add((i, end))
                elif bare:
                    add((i, end))
                i = find(needle, end)  # the next word starts past this one
        if len(self._looks) > 1:
            found.sort()
        return found

    def _spans_by_word(self, flat: str) -> list[tuple[int, int]]:
        if self.tokenizer == "unicode61":
            return [m.span() for m in _WORD.finditer(flat) if m.group().lower() in self.words]
        return [m.span() for m in _WORD.finditer(flat) if _stem(m.group()) in self.stems]


class Highlighter:
    """The snippets of one search, and the exact test of its all-words hits, from one look at each text.

    A text's words are found once (:meth:`_Matcher.spans` on its flattened, lower-cased form) and
    kept for the search: the exact test of an all-words hit and then its snippet read the same
    spans. Built per search; it keeps nothing between searches.
    """

    def __init__(self, terms: Iterable[str], tokenizer: str = "porter", width: int = WIDTH_CHARS) -> None:
        terms = list(terms)
        self.matcher = _Matcher(terms, tokenizer)
        self.width = width
        self._seen: dict[str, tuple[str, list[tuple[int, int]]]] = {}
        self._words: list[str] = []
        self._phrases: list[str] = []
        for term in terms:
            found = _WORD.findall(term.lower())
            if len(found) == 1:
                self._words.append(found[0])
            elif found:
                self._phrases.append(" ".join(found))

    def _look(self, text: str) -> tuple[str, list[tuple[int, int]]]:
        """``text`` flattened and the spans of its matching words."""
        seen = self._seen.get(text)
        if seen is None:
            flat = flatten(text)
            seen = self._seen[text] = (flat, self.matcher.spans(flat))
        return seen

    def exact(self, text: str, section: str | None) -> bool:
        """Whether the entry holds every query term as typed (see :func:`exact_matcher`).

        Valid for the porter and unicode61 matchers: a word as typed is one of the words they find
        (with porter its stem is the query word's).
        """
        flat, spans = self._look(text)
        found = {flat[s:e].lower() for s, e in spans}
        for word in self._words:
            if word not in found and (section is None or not _holds_word(section.lower(), word)):
                return False
        if self._phrases:
            both = text.lower() if section is None else f"{text}\n{section}".lower()
            flat = " ".join(_WORD.findall(both))
            return all(f" {p} " in f" {flat} " for p in self._phrases)
        return True

    def snippet(self, text: str) -> tuple[str, tuple[tuple[int, int], ...]]:
        """The snippet of ``text`` and the ``(start, end)`` of each mark pair in it (see :func:`highlight_maker`)."""
        flat, spans = self._look(text)
        return _window(flat, spans, self.width)


def snippet_maker(terms: Iterable[str], tokenizer: str = "porter", width: int = WIDTH_CHARS) -> Callable[[str], str]:
    """Return a function making the snippet of a text for these query ``terms``."""
    matcher = _Matcher(terms, tokenizer)
    return lambda text: _snippet(text, matcher, width)[0]


def highlight_maker(terms: Iterable[str], tokenizer: str = "porter", width: int = WIDTH_CHARS
                    ) -> Callable[[str], tuple[str, tuple[tuple[int, int], ...]]]:
    """Like :func:`snippet_maker`, also giving the ``(start, end)`` of each mark pair in the snippet.

    A view that highlights matches drops the two mark characters of each span and highlights what
    lies between them; a ``«`` that the memory itself holds is in no span.
    """
    matcher = _Matcher(terms, tokenizer)
    return lambda text: _snippet(text, matcher, width)


def make_snippet(text: str, terms: Iterable[str], tokenizer: str = "porter", width: int = WIDTH_CHARS) -> str:
    """Return about ``width`` characters of ``text`` around the most query words, the words marked."""
    return _snippet(text, _Matcher(terms, tokenizer), width)[0]


def flatten(text: str) -> str:
    """``text`` on one line, each run of white space one space (most entries are that already)."""
    # Only the space is both printable and white space, so a printable text needs no split unless it
    # has two spaces in a row or one at an end.
    if text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        return text
    return " ".join(text.split())


def _snippet(text: str, matcher: _Matcher, width: int) -> tuple[str, tuple[tuple[int, int], ...]]:
    flat = flatten(text)
    return _window(flat, matcher.spans(flat), width)


def _window(flat: str, spans: list[tuple[int, int]], width: int) -> tuple[str, tuple[tuple[int, int], ...]]:
    """About ``width`` characters of ``flat`` around the most of ``spans``, those marked."""
    size = len(flat)
    start, end = 0, size
    if size > width:  # most entries fit whole: no window to choose
        if spans:
            best, j, count = -1, 0, len(spans)
            for i, (s, _e) in enumerate(spans):  # the window opening at a hit that covers the most hits
                reach = s + width
                while j < count and spans[j][1] <= reach:
                    j += 1
                if j - i > best:
                    best, start = j - i, max(0, min(s - 20, size - width))
        if start > 0:
            start = flat.rfind(" ", 0, start + 1) + 1  # -1 + 1: no space before, start at 0
        end = min(size, start + width)
        if end < size:
            space = flat.find(" ", end)
            end = space if space >= 0 else size
    lead = "…" if start > 0 else ""
    tail = "…" if end < size else ""
    if not spans:
        return lead + flat[start:end] + tail, ()
    out, cursor, marks = [lead], start, []
    shift = len(lead) - start  # where a character of ``flat`` lands in the snippet, less 2 per mark pair before it
    for s, e in spans:
        if s >= start and e <= end:
            out.append(f"{flat[cursor:s]}{_OPEN}{flat[s:e]}{_CLOSE}")
            marks.append((s + shift, e + shift + 2))
            shift += 2
            cursor = e
    out += (flat[cursor:end], tail)
    return "".join(out), tuple(marks)


def exact_matcher(terms: Iterable[str]) -> Callable[[str, str | None], bool]:
    """A test of whether an entry (text, section) holds every query term as typed: each word whole
    (case ignored), each quoted phrase as it is. Used to rank exact matches before stemmed ones."""
    return Highlighter(terms).exact
