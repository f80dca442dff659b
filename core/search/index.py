"""The derived search index: entries with file/section/line, an FTS5 table over them, and their vectors.

Everything here can be rebuilt from the canonical content. The FTS5 table is an external-content
table over ``search_entries`` (the text is stored once); a document is synced by diffing its entries
against the rows already indexed, so unchanged entries keep their rows and vectors. Whenever text
leaves a document its rows, its FTS postings and (when no other entry shares it) its vector are
deleted, and the FTS index is optimized so no trace of the removed terms stays in its segments.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from core.search.chunking import Entry, chunk_markdown
from core.search.db import Database
from core.search.fts import TOKENIZE_ARGS, join_terms
from core.search.vectors import VectorStore

_TABLES = (
    "CREATE TABLE IF NOT EXISTS search_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS search_docs(path TEXT PRIMARY KEY, hash TEXT NOT NULL, "
    "mtime_ns INTEGER, size INTEGER, checked_ns INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS search_entries(id INTEGER PRIMARY KEY, path TEXT NOT NULL, "
    "line INTEGER NOT NULL, end_line INTEGER NOT NULL, section TEXT, date TEXT, hash TEXT NOT NULL, "
    "text TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS search_entries_path ON search_entries(path)",
    "CREATE INDEX IF NOT EXISTS search_entries_hash ON search_entries(hash)",
    "CREATE TABLE IF NOT EXISTS search_vectors(hash TEXT NOT NULL, model TEXT NOT NULL, "
    "vec BLOB NOT NULL, PRIMARY KEY(hash, model))",
)
#: How many all-words matches are read to put the exact ones first (see :meth:`SearchIndex.ranked`).
EXACT_WINDOW = 40
#: How many entries the selective words of a query may hold together (see :meth:`SearchIndex.ranked`).
FILL_BUDGET = 300
#: The fewest matches of a query's common words the last fill scores (see :meth:`SearchIndex.keyword_sample`).
SAMPLE_MIN = 40
#: FTS5's default ``automerge`` (restored after a bulk load).
AUTOMERGE = 4
#: The most page cache (KiB) the index's connection keeps: SQLite's default 2 MiB is less than a
#: 10,000-entry index (6 MB), so searches read the pages of its FTS index, entries and doc sizes
#: from the file again and again (5% of a search there, 7% at 100,000 entries). The cache grows
#: only as pages are read.
CACHE_KIB = 32 * 1024
_SCORE = "bm25(search_fts, 1.0, 0.4)"
_KEYWORD_SQL = f"SELECT rowid, {_SCORE} FROM search_fts WHERE search_fts MATCH ? ORDER BY 2 LIMIT ?"
# Queries read what a hit shows along: the LIMIT inside keeps FTS5 ranking alone (no join per match),
# and the CROSS JOIN reads the few rows it keeps by id. Each row is (group, id, bm25, path, line,
# section, text): a KeywordHit after the group.
_HIT = "k.id, k.score, e.path, e.line, e.section, e.text"
# The fill's rows: the best ``?2`` matches of ``?1`` by BM25 less the ids in the JSON array ``?3`` (the
# all-words hits, which come back too), read with their rows (in no order: the caller sorts so few).
_FILL_SQL = (f"SELECT 1, {_HIT} FROM (SELECT rowid AS id, {_SCORE} AS score FROM search_fts "
             "WHERE search_fts MATCH ?1 ORDER BY score, rowid LIMIT ?2) k CROSS JOIN search_entries e ON e.id = k.id "
             "WHERE k.id NOT IN (SELECT value FROM json_each(?3))")
# The last fill's rows: the ``?2`` first matches of ``?1`` (index order) less the ids in ``?3``.
_SAMPLE_SQL = (f"SELECT 1, {_HIT} FROM (SELECT rowid AS id, {_SCORE} AS score FROM search_fts "
               "WHERE search_fts MATCH ?1 LIMIT ?2) k CROSS JOIN search_entries e ON e.id = k.id "
               "WHERE k.id NOT IN (SELECT value FROM json_each(?3))")


@functools.lru_cache(maxsize=16)
def _all_words_sql(words: int) -> str:
    """The all-words matches of a query of ``words`` terms and, when a fill will follow, each term's count.

    Parameters: ``?1`` the all-words match, ``?2`` how many of its best to read, ``?3`` the page
    size, ``?4`` the count cap, then each term quoted. Rows: ``(0, hit...)`` for the matches and,
    when they are fewer than the page, ``(2, term index, count, ...)`` for each term.
    One statement rather than two: each costs about as much to run as a small query.
    """
    terms = ", ".join(f"({i}, ?{5 + i})" for i in range(words))
    return (f"WITH a AS MATERIALIZED (SELECT rowid AS id, {_SCORE} AS score FROM search_fts "
            "WHERE search_fts MATCH ?1 ORDER BY score, rowid LIMIT ?2) "
            f"SELECT 0, {_HIT} FROM a k CROSS JOIN search_entries e ON e.id = k.id "
            "UNION ALL SELECT 2, t.column1, (SELECT count(*) FROM (SELECT 1 FROM search_fts "
            "WHERE search_fts MATCH t.column2 LIMIT ?4)), NULL, NULL, NULL, NULL "
            f"FROM (VALUES {terms}) t WHERE (SELECT count(*) FROM a) < ?3")


_FTS = ("CREATE VIRTUAL TABLE search_fts USING fts5(text, section, content='search_entries', "
        "content_rowid='id', tokenize='{tok}')")


def _best_first(row: tuple) -> tuple[float, int]:
    """Sort key of a query's rows: BM25 (lower is better), then id."""
    return row[2], row[1]


def split_terms(terms: list[str], counts: list[int], want: int) -> tuple[list[str], list[str]]:
    """Split ``terms`` into the selective and the common ones by how many entries hold each (``counts``,
    counted to ``FILL_BUDGET + 1``; see :meth:`SearchIndex.ranked`), rarest first; words no entry holds go."""
    selective: list[str] = []
    common: list[str] = []
    total = 0
    for count, term in sorted(zip(counts, terms, strict=True), key=lambda ct: ct[0]):
        # A word held by more entries than the budget is common however few the others hold.
        if count and count <= FILL_BUDGET and (total < want or total + count <= FILL_BUDGET):
            selective.append(term)
            total += count
        elif count:
            common.append(term)
    return selective, common


@dataclass(frozen=True)
class DocState:
    """What the index knows of a document: content hash, file stat and when it was checked."""

    path: str
    hash: str
    mtime_ns: int | None
    size: int | None
    checked_ns: int


class IndexedEntry(NamedTuple):
    """An entry row of the index (a named tuple: a search makes dozens, and a frozen dataclass costs
    three times as much to make)."""

    id: int
    path: str
    line: int
    end_line: int
    section: str | None
    date: str | None
    hash: str
    text: str


class KeywordHit(NamedTuple):
    """One FTS5 match: entry id and raw ``bm25()`` (lower is better), with what a result shows of the
    entry (file, line, section, text) when it was read along."""

    id: int
    bm25: float
    path: str | None = None
    line: int | None = None
    section: str | None = None
    text: str | None = None
    #: Whether the entry holds every query word as typed (not only a stemmed form of it).
    exact: bool = False


_hit = KeywordHit._make  # of a query's row after its group, and whether it is exact:
_EXACT, _STEMMED = (True,), (False,)


@dataclass
class SyncStats:
    """How a sync changed a document's rows."""

    added: int = 0
    removed: int = 0
    moved: int = 0

    @property
    def changed(self) -> bool:
        """Whether any row changed."""
        return bool(self.added or self.removed or self.moved)


class SearchIndex:
    """The index tables inside :class:`Database` ``db`` (its own file, or the sqlite backend's)."""

    def __init__(self, db: Database, tokenizer: str = "porter") -> None:
        self.db = db
        self.tokenizer = tokenizer if tokenizer in TOKENIZE_ARGS else "porter"
        self.vectors = VectorStore(db)
        self._docs: dict[str, DocState] | None = None
        self._docs_version = -1
        with db.lock:
            db.conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        self.ensure_schema()

    # -- schema -------------------------------------------------------------------------------
    def ensure_schema(self) -> None:
        """Create the tables; recreate the FTS table when the tokenizer setting changed."""
        with self.db.transaction() as c:
            for sql in _TABLES:
                c.execute(sql)
            row = c.execute("SELECT value FROM search_meta WHERE key='tokenizer'").fetchone()
            has_fts = c.execute("SELECT 1 FROM sqlite_master WHERE name='search_fts'").fetchone()
            if row is None or row[0] != self.tokenizer or not has_fts:
                c.execute("DROP TABLE IF EXISTS search_fts")
                c.execute(_FTS.format(tok=TOKENIZE_ARGS[self.tokenizer]))
                c.execute("INSERT INTO search_fts(search_fts) VALUES('rebuild')")
                c.execute("INSERT OR REPLACE INTO search_meta VALUES('tokenizer', ?)", (self.tokenizer,))

    # -- documents ----------------------------------------------------------------------------
    def docs(self) -> dict[str, DocState]:
        """Every indexed document by path.

        Kept between calls (every search asks) while no other connection committed (SQLite's
        ``data_version``) and this index wrote nothing; never kept from inside a transaction, which
        may still roll back.
        """
        with self.db.lock:
            version = self.db.data_version()
            if self._docs is not None and self._docs_version == version:
                return dict(self._docs)
            rows = self.db.conn.execute("SELECT path, hash, mtime_ns, size, checked_ns FROM search_docs")
            docs = {r[0]: DocState(*r) for r in rows}
            if not self.db.in_transaction:
                self._docs, self._docs_version = docs, version
            return dict(docs)

    def _writing(self) -> None:
        """Forget the kept documents: the caller is about to change them."""
        self._docs = None

    def sync_document(self, path: str, text: str, digest: str, *, mtime_ns: int | None = None,
                      size: int | None = None, provider: Callable[[], Any] | None = None,
                      optimize: bool = True, fresh: bool = False) -> SyncStats:
        """Make the index hold exactly the entries of ``text`` for ``path`` (one transaction).

        ``provider`` returns the embedding provider (or ``None``); it is called only when new entries
        need vectors, so a sync that adds nothing never loads the model. When rows changed the FTS
        index is optimized after the commit (one segment: removed terms leave no trace, and queries
        read one doclist per word instead of merging several); ``optimize=False`` leaves that to the
        caller, which syncs several documents and then calls :meth:`optimize` once. ``fresh``: the
        document has no rows yet (a rebuild after :meth:`clear`), so they are not looked up.
        """
        entries = chunk_markdown(text, path)
        stats = SyncStats()
        with self.db.transaction() as c:
            self._writing()
            old: dict[str, list[tuple]] = defaultdict(list)
            rows = () if fresh else c.execute("SELECT id, hash, line, end_line, section, date, text "
                                              "FROM search_entries WHERE path = ? ORDER BY line", (path,))
            for row in rows:
                old[row[1]].append(row)
            new_rows: list[Entry] = []
            for e in entries:
                bucket = old.get(e.hash)
                if not bucket:
                    new_rows.append(e)
                    continue
                rid, _h, line, end_line, section, date, old_text = bucket.pop(0)
                if section != e.section:
                    self._fts_delete(c, rid, old_text, section)
                    self._fts_insert(c, rid, e.text, e.section)
                if (line, end_line, section, date) != (e.line, e.end_line, e.section, e.date):
                    c.execute("UPDATE search_entries SET line=?, end_line=?, section=?, date=? WHERE id=?",
                              (e.line, e.end_line, e.section, e.date, rid))
                    stats.moved += 1
            gone = [row for bucket in old.values() for row in bucket]
            c.executemany("INSERT INTO search_fts(search_fts, rowid, text, section) VALUES('delete',?,?,?)",
                          [(rid, old_text, section or "") for rid, _h, _l, _e, section, _d, old_text in gone])
            c.executemany("DELETE FROM search_entries WHERE id = ?", [(row[0],) for row in gone])
            if new_rows:
                last = c.execute("SELECT coalesce(max(id), 0) FROM search_entries").fetchone()[0]
                c.executemany("INSERT INTO search_entries(path, line, end_line, section, date, hash, text) "
                              "VALUES (?,?,?,?,?,?,?)",
                              [(path, e.line, e.end_line, e.section, e.date, e.hash, e.text) for e in new_rows])
                # One statement indexes every new row (the write lock is ours: ids above `last` are them).
                c.execute("INSERT INTO search_fts(rowid, text, section) SELECT id, text, coalesce(section, '') "
                          "FROM search_entries WHERE path = ? AND id > ?", (path, last))
            stats.added, stats.removed = len(new_rows), len(gone)
            if gone:
                self.vectors.drop_orphans(c, {row[1] for row in gone})
            model = provider() if new_rows and provider is not None else None
            if model is not None:
                self.vectors.ensure(c, model, [(e.hash, e.text) for e in new_rows])
            if stats.changed:
                self.vectors.invalidate()
            c.execute("INSERT OR REPLACE INTO search_docs VALUES (?,?,?,?,?)",
                      (path, digest, mtime_ns, size, time.time_ns()))
            if optimize and stats.changed:
                self.db.after_commit(self.optimize)
        return stats

    def touch_document(self, path: str, mtime_ns: int | None, size: int | None) -> None:
        """Record a new stat for a document whose content did not change."""
        with self.db.transaction() as c:
            self._writing()
            c.execute("UPDATE search_docs SET mtime_ns=?, size=?, checked_ns=? WHERE path=?",
                      (mtime_ns, size, time.time_ns(), path))

    def remove_document(self, path: str, optimize: bool = True) -> int:
        """Forget a document and every row derived from it; return how many entries went.

        ``optimize=False``: the caller optimizes (as for :meth:`sync_document`).
        """
        with self.db.transaction() as c:
            self._writing()
            rows = c.execute("SELECT id, hash, section, text FROM search_entries WHERE path=?", (path,)).fetchall()
            for rid, _h, section, text in rows:
                self._fts_delete(c, rid, text, section)
            c.execute("DELETE FROM search_entries WHERE path=?", (path,))
            c.execute("DELETE FROM search_docs WHERE path=?", (path,))
            self.vectors.drop_orphans(c, {r[1] for r in rows})
            self.vectors.invalidate()
            if rows and optimize:
                self.db.after_commit(self.optimize)
        return len(rows)

    def load_documents(self, docs: list[tuple[str, str, str, int | None, int | None]],
                       cancelled: Callable[[], bool] | None = None) -> int:
        """Index ``(path, text, hash, mtime_ns, size)`` documents into an index just cleared; return the entries.

        The bulk path of a rebuild: every entry in one ``executemany`` and the FTS table filled by
        one statement, inside the caller's transaction (the per-document diff of
        :meth:`sync_document` has nothing to diff against here).
        """
        rows: list[tuple] = []
        for path, text, _digest, _m, _s in docs:
            if cancelled is not None and cancelled():
                raise InterruptedError("reindex cancelled")
            rows += [(path, e.line, e.end_line, e.section, e.date, e.hash, e.text) for e in chunk_markdown(text, path)]
        with self.db.transaction() as c:
            self._writing()
            # Building the two indexes once after the rows is cheaper than keeping them up to date row by row.
            c.execute("DROP INDEX IF EXISTS search_entries_path")
            c.execute("DROP INDEX IF EXISTS search_entries_hash")
            c.executemany("INSERT INTO search_entries(path, line, end_line, section, date, hash, text) "
                          "VALUES (?,?,?,?,?,?,?)", rows)
            for sql in _TABLES:
                if sql.startswith("CREATE INDEX"):
                    c.execute(sql)
            # No merging while the rows go in: the optimize after the commit merges every segment once
            # (incremental merges were a sixth of the FTS insert, all of it redone by the optimize).
            c.execute("INSERT INTO search_fts(search_fts, rank) VALUES('automerge', 0)")
            c.execute("INSERT INTO search_fts(rowid, text, section) SELECT id, text, coalesce(section, '') "
                      "FROM search_entries")
            c.execute(f"INSERT INTO search_fts(search_fts, rank) VALUES('automerge', {AUTOMERGE})")
            now = time.time_ns()
            c.executemany("INSERT OR REPLACE INTO search_docs VALUES (?,?,?,?,?)",
                          [(path, digest, mtime, size, now) for path, _t, digest, mtime, size in docs])
            self.vectors.invalidate()
        return len(rows)

    def clear(self) -> None:
        """Delete every derived row (entries, FTS postings, vectors, documents)."""
        with self.db.transaction() as c:
            self._writing()
            c.execute("INSERT INTO search_fts(search_fts) VALUES('delete-all')")
            for table in ("search_entries", "search_docs", "search_vectors"):
                c.execute(f"DELETE FROM {table}")
            self.vectors.invalidate()
            self.db.after_commit(self.optimize)

    def optimize(self) -> None:
        """Merge the FTS segments into one (deleted terms leave no trace, queries read one doclist per
        word), then checkpoint the log. About 40 ms for 10,000 entries."""
        with self.db.lock:
            self.db.conn.execute("INSERT INTO search_fts(search_fts) VALUES('optimize')")
        self.db.checkpoint()

    @staticmethod
    def _fts_insert(c: sqlite3.Connection, rid: int, text: str, section: str | None) -> None:
        c.execute("INSERT INTO search_fts(rowid, text, section) VALUES (?,?,?)", (rid, text, section or ""))

    @staticmethod
    def _fts_delete(c: sqlite3.Connection, rid: int, text: str, section: str | None) -> None:
        c.execute("INSERT INTO search_fts(search_fts, rowid, text, section) VALUES('delete',?,?,?)",
                  (rid, text, section or ""))

    # -- queries ------------------------------------------------------------------------------
    def keyword(self, match: str, limit: int) -> list[KeywordHit]:
        """Return the best ``limit`` FTS5 matches of ``match`` as ``(id, bm25)`` (no snippet yet)."""
        with self.db.lock:
            return [KeywordHit(rid, score) for rid, score in self.db.conn.execute(_KEYWORD_SQL, (match, limit))]

    def ranked(self, terms: list[str], limit: int, exact: Callable[[str, str | None], bool] | None = None
               ) -> tuple[list[KeywordHit], int]:
        """The best ``limit`` entries for ``terms`` (with their rows) and how many of them hold all the words.

        First the entries holding all the words: with ``exact`` (a test of an entry's text and
        section), those holding every word as typed before those that match only through a stemmed
        form, each group by BM25 (among the best :data:`EXACT_WINDOW` all-words matches). When those
        are fewer than ``limit``, the rest comes from the entries holding the query's *selective*
        words, by BM25 over those words, and only when these run out from the entries holding its
        common words alone (the best by BM25 of the first few of them, see :meth:`keyword_sample`).
        The selective words are the rarest ones: enough of them to hold ``limit`` entries, and more
        while together they hold no more than :data:`FILL_BUDGET`. BM25 scores every entry a match
        selects (about half a microsecond each), so an OR over a word held by thousands of entries
        is what made searches slow, and such a word weighs little in BM25 anyway. On an index where
        all the words together hold at most that many entries every word is selective: plain BM25
        over any of the words.

        The all-words matches and, when a fill follows, the words' counts are one statement; the
        fill another.
        """
        if not terms or limit <= 0:
            return [], 0
        quoted = [join_terms([t]) for t in terms]
        window = max(limit, EXACT_WINDOW) if exact is not None else limit
        # One word: its matches are all the words', nothing fills, and a page of 0 skips the counts.
        page = limit if len(terms) > 1 else 0
        with self.db.lock:
            rows = self.db.conn.execute(_all_words_sql(len(terms)), (
                " AND ".join(quoted), window, page, FILL_BUDGET + 1, *quoted)).fetchall()
        counts = [0] * len(terms)
        found = []
        for r in rows:
            if r[0]:
                counts[r[1]] = r[2]
            else:
                found.append(r)
        found.sort(key=_best_first)
        hits = self._all_words(found, limit, exact)
        all_words = len(hits)
        if all_words >= limit or len(terms) == 1:
            return hits, all_words
        selective, common = split_terms(quoted, counts, limit)
        if selective:
            hits += self.fill(" OR ".join(selective), limit, hits)[:limit - len(hits)]
        if common and len(hits) < limit:
            match = " OR ".join(common)
            if selective:
                match = f"({match}) NOT ({' OR '.join(selective)})"
            hits += self.keyword_sample(match, limit, hits)[:limit - len(hits)]
        return hits, all_words

    def fill(self, match: str, limit: int, seen: Iterable[KeywordHit] = ()) -> list[KeywordHit]:
        """The best ``limit`` matches of ``match`` by BM25 less those ``seen``, best first.

        The all-words hits match the selective words too: they are asked for and skipped (by id,
        after the ranking, so only the rows kept are read).
        """
        return self._rows(_FILL_SQL, match, limit, seen)

    def _rows(self, sql: str, match: str, limit: int, seen: Iterable[KeywordHit]) -> list[KeywordHit]:
        """The hits of :data:`_FILL_SQL` or :data:`_SAMPLE_SQL`, best first."""
        with self.db.lock:
            rows = self.db.conn.execute(sql, (match, limit, json.dumps([h.id for h in seen]))).fetchall()
        rows.sort(key=_best_first)
        return [_hit(r[1:] + _STEMMED) for r in rows]

    @staticmethod
    def _all_words(rows: list[tuple], limit: int, exact: Callable[[str, str | None], bool] | None
                   ) -> list[KeywordHit]:
        """The page's all-words hits from ``rows`` (best first), those ``exact`` holds for first.

        The test stops at the ``limit``-th exact match, since no later row can come before it (the
        page is then the exact ones alone).
        """
        if exact is None:
            return [_hit(r[1:] + _STEMMED) for r in rows[:limit]]
        exact_hits: list[KeywordHit] = []
        stemmed: list[KeywordHit] = []
        for r in rows:
            if exact(r[6], r[5]):
                exact_hits.append(_hit(r[1:] + _EXACT))
                if len(exact_hits) == limit:
                    return exact_hits
            elif len(stemmed) < limit:
                stemmed.append(_hit(r[1:] + _STEMMED))
        return (exact_hits + stemmed)[:limit]

    def keyword_sample(self, match: str, limit: int, seen: Iterable[KeywordHit] = ()) -> list[KeywordHit]:
        """The best ``limit`` by BM25 among the first matches of ``match`` (index order), less those ``seen``.

        For the last fill, entries holding only a query's common words: ranking every one of
        thousands such entries cost milliseconds, and they rank below everything else anyway. Twice
        as many as wanted are scored (at least :data:`SAMPLE_MIN`, at most :data:`FILL_BUDGET`):
        BM25 costs about a microsecond a row, which made a 300-row sample the dearest query of a search.
        """
        window = min(FILL_BUDGET, max(SAMPLE_MIN, 2 * limit))
        return self._rows(_SAMPLE_SQL, match, window, seen)[:limit]

    def entries(self, ids: Iterable[int]) -> dict[int, IndexedEntry]:
        """Return the entry rows of ``ids``."""
        id_list = list(ids)
        if not id_list:
            return {}
        sql = ("SELECT id, path, line, end_line, section, date, hash, text FROM search_entries "
               f"WHERE id IN ({','.join('?' * len(id_list))})")
        with self.db.lock:
            return {r[0]: IndexedEntry(*r) for r in self.db.conn.execute(sql, id_list)}

    def all_entries(self, path: str | None = None) -> list[IndexedEntry]:
        """Every entry row (of one document when ``path`` is given), in file order."""
        sql = "SELECT id, path, line, end_line, section, date, hash, text FROM search_entries"
        args: tuple[str, ...] = ()
        if path is not None:
            sql, args = sql + " WHERE path = ?", (path,)
        with self.db.lock:
            return [IndexedEntry(*r) for r in self.db.conn.execute(sql + " ORDER BY path, line", args)]

    def count(self) -> int:
        """Number of indexed entries."""
        with self.db.lock:
            return int(self.db.conn.execute("SELECT count(*) FROM search_entries").fetchone()[0])

    def matches_entry(self, match: str, entry_id: int) -> bool:
        """Whether the FTS row of ``entry_id`` matches ``match`` (used by verification)."""
        with self.db.lock:
            return self.db.conn.execute("SELECT 1 FROM search_fts WHERE search_fts MATCH ? AND rowid = ?",
                                        (match, entry_id)).fetchone() is not None
