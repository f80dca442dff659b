"""Snippets: the part of an entry around the query's words, with those words marked «like this».

Made in Python from the entry's text rather than with FTS5's ``snippet()``: FTS5 has to re-read the
posting lists of every query word for each row it highlights (several milliseconds on a 10,000-entry
index), while this takes microseconds. Matching mirrors the tokenizer closely enough for
highlighting: words are compared case-insensitively with common English endings removed (porter),
exactly (unicode61), or as substrings (trigram). Which entries match is decided by FTS5 alone.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable

MARKS = ("«", "»")
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


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


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
        if tokenizer == "trigram":  # matches inside words
            alts = [re.escape(w) for w in sorted(words, key=len, reverse=True) if len(w) >= 3]
            self.pattern = re.compile("(?:" + "|".join(alts) + ")" if alts else r"(?!x)x", re.IGNORECASE)
            self.needles: list[str] = []
        elif tokenizer == "unicode61":
            self.needles = sorted(words)
        else:
            # A word matches when its stem is a query word's stem; only words starting like one are stemmed.
            self.stems = {_stem(w) for w in words}
            self.needles = sorted({st[:3] for st in self.stems})

    def spans(self, flat: str) -> list[tuple[int, int]]:
        """Character spans of the matching words of ``flat``."""
        if self.pattern is not None:
            return [m.span() for m in self.pattern.finditer(flat)]
        lower = flat.lower()
        if len(lower) != len(flat):  # lower-casing changed the length (rare letters): offsets would drift
            return self._spans_by_word(flat)
        found: list[tuple[int, int]] = []
        exact = self.tokenizer == "unicode61"
        find, match, stems = lower.find, _WORD.match, self.stems
        for needle in self.needles:  # no two needles match at one place: each is a different 3-letter start
            size = len(needle)
            i = find(needle)
            while i >= 0:
                before = lower[i - 1] if i else " "
                if not (before.isalnum() or before == "_"):
                    end = match(lower, i).end()  # type: ignore[union-attr]  # needle[0] is a word char
                    if (end == i + size) if exact else (_stem(lower[i:end]) in stems):
                        found.append((i, end))
                    i = find(needle, end)  # the next word starts past this one
                else:
                    i = find(needle, i + 1)
        if len(self.needles) > 1:
            found.sort()
        return found

    def _spans_by_word(self, flat: str) -> list[tuple[int, int]]:
        if self.tokenizer == "unicode61":
            return [m.span() for m in _WORD.finditer(flat) if m.group().lower() in self.words]
        return [m.span() for m in _WORD.finditer(flat) if _stem(m.group()) in self.stems]


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


def _snippet(text: str, matcher: _Matcher, width: int) -> tuple[str, tuple[tuple[int, int], ...]]:
    flat = " ".join(text.split())
    spans = matcher.spans(flat)
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
    out, cursor, length, marks = [lead], start, len(lead), []
    for s, e in spans:
        if s >= start and e <= end:
            out += (flat[cursor:s], MARKS[0], flat[s:e], MARKS[1])
            length += s - cursor
            marks.append((length, length + e - s + 2))
            length += e - s + 2
            cursor = e
    out += (flat[cursor:end], tail)
    return "".join(out), tuple(marks)


def exact_matcher(terms: Iterable[str]) -> Callable[[str, str | None], bool]:
    """A test of whether an entry (text, section) holds every query term as typed: each word whole
    (case ignored), each quoted phrase as it is. Used to rank exact matches before stemmed ones."""
    words: list[str] = []
    phrases: list[str] = []
    for term in terms:
        found = _WORD.findall(term.lower())
        if len(found) == 1:
            words.append(found[0])
        elif found:
            phrases.append(" ".join(found))

    def holds(text: str, section: str | None) -> bool:
        lower = (text if section is None else f"{text}\n{section}").lower()
        for word in words:
            i = lower.find(word)
            while i >= 0 and ((i > 0 and _word_char(lower[i - 1]))
                              or (i + len(word) < len(lower) and _word_char(lower[i + len(word)]))):
                i = lower.find(word, i + 1)
            if i < 0:
                return False
        if phrases:
            flat = " ".join(_WORD.findall(lower))
            return all(f" {p} " in f" {flat} " for p in phrases)
        return True

    return holds

