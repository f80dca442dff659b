"""Keyword search in PostgreSQL: ``websearch_to_tsquery`` over the chunks' GIN-indexed ``tsvector``.

Ranked by ``ts_rank_cd`` (normalized to 0..1), snippets by ``ts_headline`` (only for the page shown),
section and first line from the chunk row. A query the full-text parser finds nothing for (part of an
identifier such as ``Bounc`` or ``claim_jo``, not a stop word) falls back to a substring match (``ILIKE``
over the project's rows; a ``pg_trgm`` index was measured and did not pay for itself, see
:mod:`core.backends.pg.schema`). Keyword only: there are no vectors in this backend.
"""

from __future__ import annotations

import re

import psycopg

from core.backends.base import MemorySearchOptions, MemorySearchResult

CONFIG = "english"
HEADLINE = "StartSel=**, StopSel=**, MaxWords=30, MinWords=12, MaxFragments=2, FragmentDelimiter=\" … \""
_RANKED = f"""
WITH q AS (SELECT websearch_to_tsquery('{CONFIG}', %(q)s) AS q),
hits AS (
    SELECT c.path, c.line, c.section, c.body, ts_rank_cd(c.tsv, q.q, 32) AS rank
    FROM memdesk_chunks c, q
    WHERE c.project_key = %(key)s AND c.tsv @@ q.q
    ORDER BY rank DESC, c.path, c.line
    LIMIT %(limit)s OFFSET %(offset)s)
SELECT hits.path, hits.line, hits.section, ts_headline('{CONFIG}', hits.body, q.q, %(headline)s), hits.rank
FROM hits, q ORDER BY hits.rank DESC, hits.path, hits.line
"""
_PROBE = f"""WITH q AS (SELECT websearch_to_tsquery('{CONFIG}', %(q)s) AS q)
SELECT numnode(q.q) > 0, EXISTS (SELECT 1 FROM memdesk_chunks c WHERE c.project_key = %(key)s AND c.tsv @@ q.q)
FROM q"""
_SUBSTRING = """
SELECT path, line, section, body FROM memdesk_chunks
WHERE project_key = %(key)s AND body ILIKE %(pattern)s ESCAPE '\\'
ORDER BY path, line LIMIT %(limit)s OFFSET %(offset)s
"""
_TOKEN = re.compile(r"^\S{3,}$")
SNIPPET_CHARS = 240


def search(conn: psycopg.Connection, key: str, query: str, options: MemorySearchOptions) -> list[MemorySearchResult]:
    """One page of results for ``query`` in the project ``key``."""
    if options.limit <= 0 or not query.strip():
        return []
    args = {"q": query, "key": key, "limit": options.limit, "offset": max(0, options.offset), "headline": HEADLINE}
    rows = conn.execute(_RANKED, args).fetchall()
    if rows:
        return [MemorySearchResult(content=flatten(r[3]), score=round(min(1.0, max(0.0, float(r[4]))), 6),
                                   section=r[2], line_number=int(r[1]), file=r[0],
                                   scores={"keyword": float(r[4])}) for r in rows]
    token = query.strip()
    if not _TOKEN.match(token):
        return []
    has_words, any_hit = conn.execute(_PROBE, args).fetchone()  # type: ignore[misc]
    if not has_words or any_hit:
        return []  # only stop words, or past the last full-text hit: not a substring query
    pattern = "%" + token.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    found = conn.execute(_SUBSTRING, {**args, "pattern": pattern}).fetchall()
    # A substring hit ranks below any word hit: a fixed middling score, not a similarity measure.
    return [MemorySearchResult(content=substring_snippet(r[3], token), score=0.5, section=r[2],
                               line_number=int(r[1]), file=r[0], scores={"substring": 0.5}) for r in found]


def flatten(text: str) -> str:
    """The snippet on one line."""
    return " ".join(text.split())


def substring_snippet(body: str, token: str, width: int = SNIPPET_CHARS) -> str:
    """A one-line window of ``body`` around the first case-insensitive occurrence of ``token``, marked ``**``."""
    flat = flatten(body)
    at = flat.lower().find(token.lower())
    if at < 0:
        return flat[:width]
    start = max(0, at - width // 3)
    end = min(len(flat), start + width)
    piece = flat[start:at] + "**" + flat[at:at + len(token)] + "**" + flat[at + len(token):end]
    return ("…" if start else "") + piece + ("…" if end < len(flat) else "")
