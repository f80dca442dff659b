"""FTS5 details: the tokenizers offered, and turning a user's query into a safe ``MATCH`` expression.

Words are quoted (so FTS5 syntax in a query is never interpreted). A search first asks for entries
holding all the words (AND, fast even on common words) and, when those are fewer than wanted, fills
up with entries holding the query's selective words, then its common ones (see
:meth:`core.search.index.SearchIndex.ranked`), each group ranked by BM25. Very common English words
are dropped unless the query holds nothing else. Text in double quotes is kept as a phrase.
"""

from __future__ import annotations

import re
from typing import Literal

Tokenizer = Literal["porter", "unicode61", "trigram"]

#: FTS5 ``tokenize=`` argument of each tokenizer setting.
TOKENIZE_ARGS: dict[str, str] = {
    "porter": "porter unicode61 remove_diacritics 2",
    "unicode61": "unicode61 remove_diacritics 2",
    "trigram": "trigram",
}

STOPWORDS = frozenset(
    """a an and are as at be been but by can could did do does for from had has have how i if in
    into is it its me my no not of on or our should so than that the their them then there these
    they this to was we were what when where which who why will with would you your""".split()
)

_PHRASE = re.compile(r'"([^"]+)"')
_WORD = re.compile(r"\w+", re.UNICODE)


def query_terms(query: str, tokenizer: str = "porter") -> list[str]:
    """Return the terms (words and quoted phrases) of ``query`` that will be matched."""
    phrases = [p.strip() for p in _PHRASE.findall(query) if _WORD.search(p)]
    rest = _PHRASE.sub(" ", query)
    words = [w.lower() for w in _WORD.findall(rest)]
    kept = [w for w in words if w not in STOPWORDS] or words
    if tokenizer == "trigram":
        kept = [w for w in kept if len(w) >= 3]
        phrases = [p for p in phrases if len(p) >= 3]
    seen: dict[str, None] = {}
    for term in phrases + kept:
        seen.setdefault(term, None)
    return list(seen)


def join_terms(terms: list[str], op: str = "OR") -> str:
    """Quote each term and join them with ``op`` (``AND``: all words, ``OR``: any word)."""
    return f" {op} ".join('"' + t.replace('"', '""') + '"' for t in terms)


def build_match(query: str, tokenizer: str = "porter", op: str = "OR") -> str | None:
    """Return an FTS5 ``MATCH`` expression for ``query``, or ``None`` when nothing can be matched."""
    terms = query_terms(query, tokenizer)
    return join_terms(terms, op) if terms else None

