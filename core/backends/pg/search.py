"""Keyword search in PostgreSQL: ``websearch_to_tsquery`` over the chunks' GIN-indexed ``tsvector``.

Every result holds all the words (websearch syntax: quoted phrases, ``-word``, ``or``). Ranked by
``ts_rank`` with the entry's length counted (flags 1|32: normalized to 0..1); among the best
:data:`EXACT_WINDOW`, entries holding every word as typed come before those that match only through a
stemmed form, as the file backends rank (:meth:`core.search.index.SearchIndex.exact_first`). Snippets
are the file backends' (:mod:`core.search.snippet`: words «marked», with their spans), made in Python
from the entry's text (``ts_headline`` cost 0.6 ms a page, and 3 ms at the p95), section and first
line from the chunk row. A query the
full-text parser finds nothing for (part of an identifier such as ``Bounc`` or ``claim_jo``, not a
stop word) falls back to a substring match (``ILIKE`` over the project's rows; a ``pg_trgm`` index was
measured and did not pay for itself, see :mod:`core.backends.pg.schema`). Keyword only: there are no
vectors in this backend.

Measured on the benchmark's 100,000 entries (2 cores): ``ts_rank_cd`` (cover density) cost 2.7 µs for
every matching row, ``ts_rank`` 1.2 µs, and a query of common words matches 8,000 rows, so cover density
made the slowest searches 20 ms. ``ts_rank`` found the entry a query was drawn from as often (its length
counted: more often); recall@5 on the labelled set (tests/data/search_labels.json) did not move.
"""

from __future__ import annotations

import re

import psycopg

from core.backends.base import MemorySearchOptions, MemorySearchResult
from core.backends.pg.schema import project_lexeme_query, words_of
from core.search.fts import query_terms
from core.search.snippet import exact_matcher, highlight_maker
from core.search.types import make_result

CONFIG = "english"
#: ``ts_rank`` flags: 1 divides by 1 + log(length), 32 maps the rank into 0..1 (``rank / (rank + 1)``).
RANK_FLAGS = 33
#: How many of the best all-words matches are read to put the exact ones first (as the file backends).
EXACT_WINDOW = 40
#: An entry of the project ``%(key)s`` holding the words of ``q.q``, found in the words index alone
#: (:data:`core.backends.pg.schema.WORDS`): the project's lexeme in the query confines it to the project
#: exactly, so there is no ``project_key =`` for the planner to read the project's rows by instead (a
#: project it guessed small would have every row's words matched one by one). A query without lexemes
#: (stop words only) matches nothing: joined with the project's, it would match every entry.
_MATCH = f"numnode(q.q) > 0 AND ({words_of('c')}) @@ (q.q && {project_lexeme_query('%(key)s')})"
_RANKED = f"""
SELECT c.path, c.line, c.section, c.body, ts_rank(c.tsv, q.q, {RANK_FLAGS}) AS rank
FROM memdesk_chunks c, websearch_to_tsquery('{CONFIG}', %(q)s) AS q(q)
WHERE {_MATCH}
ORDER BY rank DESC, c.path, c.line
LIMIT %(window)s
"""
_PROBE = f"""SELECT numnode(q.q) > 0, EXISTS (SELECT 1 FROM memdesk_chunks c WHERE {_MATCH})
FROM websearch_to_tsquery('{CONFIG}', %(q)s) AS q(q)"""
_SUBSTRING = """
SELECT path, line, section, body FROM memdesk_chunks
WHERE project_key = %(key)s AND body ILIKE %(pattern)s ESCAPE '\\'
ORDER BY path, line LIMIT %(limit)s OFFSET %(offset)s
"""
_TOKEN = re.compile(r"^\S{3,}$")
#: A websearch exclusion (``-word``, ``-"a phrase"``): its words are not looked for in the exact test.
_EXCLUDED = re.compile(r'(?:^|(?<=\s))-(?:"[^"]*"?|\S+)')


def search(conn: psycopg.Connection, key: str, query: str, options: MemorySearchOptions) -> list[MemorySearchResult]:
    """One page of results for ``query`` in the project ``key``."""
    if options.limit <= 0 or not query.strip():
        return []
    offset = max(0, options.offset)
    want = offset + options.limit
    args = {"q": query, "key": key, "limit": options.limit, "offset": offset, "window": max(want, EXACT_WINDOW)}
    # Planned for its words each time (no prepare=True): a generic plan knows neither how many entries
    # the words select nor how many the project holds.
    rows = conn.execute(_RANKED, args, prepare=False).fetchall()
    if rows:
        terms = query_terms(_EXCLUDED.sub(" ", query))
        highlight = highlight_maker(terms)
        out = []
        for r, exact in exact_first(rows, terms, want)[offset:]:
            content, marks = highlight(r[3])
            rank = float(r[4])
            out.append(make_result(content, round(min(1.0, max(0.0, rank)), 6), r[2], int(r[1]), r[0],
                                   {"keyword": rank, "exact": 1.0 if exact else 0.0}, marks))
        return out
    token = query.strip()
    if not _TOKEN.match(token):
        return []
    has_words, any_hit = conn.execute(_PROBE, args).fetchone()  # type: ignore[misc]
    if not has_words or any_hit:
        return []  # only stop words, or past the last full-text hit: not a substring query
    pattern = "%" + token.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    found = conn.execute(_SUBSTRING, {**args, "pattern": pattern}).fetchall()
    # A substring hit ranks below any word hit: a fixed middling score, not a similarity measure.
    highlight = highlight_maker([token], "trigram")  # marks the token inside words, case ignored
    out = []
    for r in found:
        content, marks = highlight(r[3])
        out.append(make_result(content, 0.5, r[2], int(r[1]), r[0], {"substring": 0.5}, marks))
    return out


def exact_first(rows: list[tuple], terms: list[str], want: int) -> list[tuple[tuple, bool]]:
    """The best ``want`` of ``rows`` (best first), those holding every one of ``terms`` as typed first,
    each group in rank order; each with whether it is exact. Stops at the ``want``-th exact row: no later
    row can come before it."""
    holds = exact_matcher(terms)
    exact: list[tuple[tuple, bool]] = []
    stemmed: list[tuple[tuple, bool]] = []
    for r in rows:
        if holds(r[3], r[2]):
            exact.append((r, True))
            if len(exact) == want:
                return exact
        elif len(stemmed) < want:
            stemmed.append((r, False))
    return (exact + stemmed)[:want]
