"""Snippets: the part of an entry around the query's words, with those words marked «like this».

Made in Python from the entry's text rather than with FTS5's ``snippet()``: FTS5 has to re-read the
posting lists of every query word for each row it highlights (several milliseconds on a 10,000-entry
index), while this takes microseconds. Matching mirrors the tokenizer closely enough for
highlighting: words are compared case-insensitively with common English endings removed (porter),
exactly (unicode61), or as substrings (trigram). Which entries match is decided by FTS5 alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MARKS = ("«", "»")
WIDTH = 24
_WORD = re.compile(r"\w+", re.UNICODE)
_SUFFIXES = ("ations", "ation", "ingly", "ings", "ing", "edly", "ed", "ies", "es", "s", "ly", "er", "ers")


def _stem(word: str) -> str:
    w = word.lower()
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[: -len(suffix)]
    return w


def _matcher(terms: Iterable[str], tokenizer: str):
    words = {w.lower() for t in terms for w in _WORD.findall(t)}
    if tokenizer == "trigram":
        return lambda token: any(w in token.lower() for w in words if len(w) >= 3)
    if tokenizer == "unicode61":
        return lambda token: token.lower() in words
    stems = {_stem(w) for w in words}
    heads = {w[:3] for w in stems}  # a cheap first test: stemming every word of an entry is the slow part
    return lambda token: token[:3].lower() in heads and _stem(token) in stems


def make_snippet(text: str, terms: Iterable[str], tokenizer: str = "porter", width: int = WIDTH) -> str:
    """Return up to ``width`` words of ``text`` around the most query words, the words marked."""
    flat = " ".join(text.split())
    tokens = list(_WORD.finditer(flat))
    if not tokens:
        return flat[:200]
    matches = _matcher(terms, tokenizer)
    hit = [matches(m.group()) for m in tokens]
    positions = [i for i, h in enumerate(hit) if h]
    start = 0
    if positions:
        best, j = -1, 0
        for i, p in enumerate(positions):  # the window starting at a hit that covers the most hits
            while j < len(positions) and positions[j] < p + width:
                j += 1
            if j - i > best:
                best, start = j - i, max(0, min(p - 2, len(tokens) - width))
    end = min(len(tokens), start + width)
    first = 0 if start == 0 else tokens[start].start()
    last = len(flat) if end == len(tokens) else tokens[end - 1].end()
    out, cursor = [], first
    for i in range(start, end):
        if hit[i]:
            m = tokens[i]
            out += [flat[cursor:m.start()], MARKS[0], m.group(), MARKS[1]]
            cursor = m.end()
    out.append(flat[cursor:last])
    return ("…" if first > 0 else "") + "".join(out) + ("…" if last < len(flat) else "")
