"""Snippets: the part of an entry around the query's words, with those words marked «like this».

Made in Python from the entry's text rather than with FTS5's ``snippet()``: FTS5 has to re-read the
posting lists of every query word for each row it highlights (several milliseconds on a 10,000-entry
index), while this takes microseconds. Matching mirrors the tokenizer closely enough for
highlighting: words are compared case-insensitively with common English endings removed (porter),
exactly (unicode61), or as substrings (trigram). Which entries match is decided by FTS5 alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

MARKS = ("«", "»")
WIDTH_CHARS = 180
_WORD = re.compile(r"\w+", re.UNICODE)
_SUFFIXES = ("ations", "ation", "ingly", "ings", "ing", "edly", "ed", "ies", "es", "s", "ly", "ers", "er")


def _stem(word: str) -> str:
    w = word.lower()
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[: -len(suffix)]
    return w


class _Matcher:
    """Finds the words of a text that match the query's words (built once per search)."""

    def __init__(self, terms: Iterable[str], tokenizer: str) -> None:
        words = {w.lower() for t in terms for w in _WORD.findall(t)}
        self.check: Callable[[str], bool] = lambda _tok: True
        if tokenizer == "trigram":
            alts = [re.escape(w) for w in sorted(words, key=len, reverse=True) if len(w) >= 3]
        elif tokenizer == "unicode61":
            alts = [re.escape(w) + r"\b" for w in sorted(words)]
        else:
            stems = {_stem(w) for w in words}
            alts = [re.escape(h) + r"\w*" for h in sorted({s[:3] for s in stems})]
            # Only words starting like a query word get stemmed (stemming every word is the slow part).
            self.check = lambda tok: _stem(tok) in stems
        edge = "" if tokenizer == "trigram" else r"\b"  # trigram matches inside words
        self.pattern = re.compile((edge + "(?:" + "|".join(alts) + ")") if alts else r"(?!x)x", re.IGNORECASE)

    def spans(self, flat: str) -> list[tuple[int, int]]:
        """Character spans of the matching words of ``flat``."""
        return [m.span() for m in self.pattern.finditer(flat) if self.check(m.group())]


def snippet_maker(terms: Iterable[str], tokenizer: str = "porter", width: int = WIDTH_CHARS) -> Callable[[str], str]:
    """Return a function making the snippet of a text for these query ``terms``."""
    matcher = _Matcher(terms, tokenizer)
    return lambda text: _snippet(text, matcher, width)


def make_snippet(text: str, terms: Iterable[str], tokenizer: str = "porter", width: int = WIDTH_CHARS) -> str:
    """Return about ``width`` characters of ``text`` around the most query words, the words marked."""
    return _snippet(text, _Matcher(terms, tokenizer), width)


def _snippet(text: str, matcher: _Matcher, width: int) -> str:
    flat = " ".join(text.split())
    spans = matcher.spans(flat)
    start = 0
    if spans:
        best, j = -1, 0
        for i, (s, _e) in enumerate(spans):  # the window opening at a hit that covers the most hits
            while j < len(spans) and spans[j][1] <= s + width:
                j += 1
            if j - i > best:
                best, start = j - i, max(0, min(s - 20, len(flat) - width))
    if start > 0:
        space = flat.rfind(" ", 0, start + 1)
        start = space + 1 if space >= 0 else 0
    end = min(len(flat), start + width)
    if end < len(flat):
        space = flat.find(" ", end)
        end = space if space >= 0 else len(flat)
    out, cursor = [], start
    for s, e in spans:
        if s >= start and e <= end:
            out += [flat[cursor:s], MARKS[0], flat[s:e], MARKS[1]]
            cursor = e
    out.append(flat[cursor:end])
    return ("…" if start > 0 else "") + "".join(out) + ("…" if end < len(flat) else "")
