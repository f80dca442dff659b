"""memdesk's tables in PostgreSQL, created and migrated by versioned steps recorded in ``memdesk_schema_version``.

Steps only ever add (tables, columns, indexes); a step that would drop or rewrite data needs an explicit,
announced migration of its own, never a silent one. A database whose schema is newer than this memdesk
knows is refused, so an old client cannot write rows a newer one would misread.

No ``pg_trgm`` index: measured here, a trigram GIN index on the entries doubled the cost of writing them
(2,000 entries: 240 ms against 120 ms) and did not speed up the substring fallback (16 ms against 20 ms
over 10,000 entries), which scans only the project's own rows.

An entry's words (:data:`TSV`) are indexed from its first 200,000 characters: a ``tsvector`` holds at most 1 MB, which
one 1 MiB paragraph of distinct words exceeds (the write would fail). Text past that point of a single
huge entry is found by the substring fallback only.

Step 2 (measured on the benchmark's 100 KB memory and 100,000 entries, beside the other figures'
projects in the same database). A document's text is stored compressed with lz4 where the server has
it: an append rewrites the whole value, which pglz made a 2.4 ms update and lz4 a 0.6 ms one (reading it
back: 0.6 against 0.3 ms); values already stored stay as they are until rewritten. The words index
becomes :data:`WORDS`: the entry's words plus one lexeme naming its project (a space and the key, which
no parsed word can be), so a search asks the index for its project's matches alone. Over the words only,
the project was a second (btree) bitmap of every row of the project ANDed in (2 ms at 70,000 rows,
whatever the query) or other projects' matches fetched and thrown away, as the planner guessed; searches
took a median 2.0 ms and a p95 of 6.1 ms, with the project's lexeme 0.9 and 3.8 ms. The old words index
is dropped (nothing reads it; it made every write index the words twice), which loses no data: an index
is rebuilt from the rows. The index's pending list (entries not yet merged, which every search scans
whole) is kept to :data:`PENDING_LIST_KB`: with PostgreSQL's 4 MB a bulk load left up to 4 MB in it
until autovacuum's next pass (a common-words query read 270 index pages and took 2.4 ms before that
pass, 25 pages and 1.5 ms after); without a pending list (``fastupdate = off``) a 1 MiB write of new
entries took 900 ms instead of 580.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import psycopg

from core.errors import MemoryBackendError

#: How an entry's ``tsvector`` is made from its ``body`` and ``section`` (words weigh A, the section D).
TSV = ("setweight(to_tsvector('english', left(body, 200000)), 'A') || "
       "setweight(to_tsvector('english', coalesce(section, '')), 'D')")

def words_of(alias: str = "") -> str:
    """The expression of the words index (:data:`WORDS`) over the ``memdesk_chunks`` row named ``alias``."""
    row = f"{alias}." if alias else ""
    return f"{row}tsv || array_to_tsvector(ARRAY[' ' || {row}project_key])"


#: What the words index holds: the entry's words and its project's own lexeme (see the module docstring).
WORDS = words_of()
#: The words index's pending list, in kB (PostgreSQL's default is 4096; see the module docstring).
PENDING_LIST_KB = 256


def project_lexeme_query(key_param: str) -> str:
    """SQL for the ``tsquery`` of a project's lexeme, the key given as ``key_param`` (a placeholder)."""
    return f"quote_literal(' ' || {key_param})::tsquery"


#: Key of the advisory lock that serializes migrations between clients starting at the same time.
MIGRATION_LOCK = 0x6D656D64  # "memd"


def _lz4_text(conn: psycopg.Connection) -> None:
    """Documents' and versions' text compressed with lz4 from now on (kept as pglz on a server built without it)."""
    try:
        with conn.transaction():  # a savepoint: a server without lz4 refuses, and nothing else is undone
            for table in ("memdesk_documents", "memdesk_history"):
                conn.execute(f"ALTER TABLE {table} ALTER COLUMN content SET COMPRESSION lz4")
    except psycopg.errors.FeatureNotSupported:
        pass


@dataclass(frozen=True)
class Migration:
    """One schema step: its version, what it adds, and its SQL statements (or a callable)."""

    version: int
    description: str
    steps: tuple[str | Callable[[psycopg.Connection], None], ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "documents, history and full-text chunks", (
        """CREATE TABLE memdesk_documents (
            project_key text NOT NULL,
            path text NOT NULL,
            content text NOT NULL,
            hash text NOT NULL,
            size integer NOT NULL,
            revision bigint NOT NULL DEFAULT 1,
            updated_at timestamptz NOT NULL DEFAULT now(),
            updated_by text,
            source text NOT NULL,
            PRIMARY KEY (project_key, path))""",
        """CREATE TABLE memdesk_history (
            id bigserial PRIMARY KEY,
            project_key text NOT NULL,
            path text NOT NULL,
            hash text NOT NULL,
            size integer NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            source text NOT NULL,
            author text,
            content text NOT NULL,
            UNIQUE (project_key, path, hash))""",
        "CREATE INDEX memdesk_history_doc ON memdesk_history (project_key, path, created_at DESC, id DESC)",
        # Rows are found by document (not by line), and tsv is a plain column: an edit that moves
        # later entries down updates only their line numbers, in place (HOT), no re-indexing.
        """CREATE TABLE memdesk_chunks (
            id bigserial PRIMARY KEY,
            project_key text NOT NULL,
            path text NOT NULL,
            line integer NOT NULL,
            end_line integer NOT NULL,
            section text,
            body text NOT NULL,
            hash text NOT NULL,
            tsv tsvector NOT NULL,
            FOREIGN KEY (project_key, path) REFERENCES memdesk_documents ON DELETE CASCADE)
            WITH (fillfactor = 70)""",
        "CREATE INDEX memdesk_chunks_doc ON memdesk_chunks (project_key, path)",
        "CREATE INDEX memdesk_chunks_tsv ON memdesk_chunks USING gin (tsv)",
    )),
    Migration(2, "lz4 for document text; the words index holds each entry's project (the old one dropped)", (
        _lz4_text,
        f"CREATE INDEX memdesk_chunks_words ON memdesk_chunks USING gin (({WORDS})) "
        f"WITH (gin_pending_list_limit = {PENDING_LIST_KB})",
        "DROP INDEX memdesk_chunks_tsv",
    )),
)
LATEST = MIGRATIONS[-1].version


def current_version(conn: psycopg.Connection) -> int:
    """The schema version of the database (0 when memdesk never ran there)."""
    row = conn.execute("SELECT to_regclass('memdesk_schema_version') IS NOT NULL").fetchone()
    if not row or not row[0]:
        return 0
    found = conn.execute("SELECT coalesce(max(version), 0) FROM memdesk_schema_version").fetchone()
    return int(found[0]) if found else 0


def migrate(conn: psycopg.Connection, backend_id: str = "postgres") -> int:
    """Bring the schema to :data:`LATEST` in one transaction; return the version. Newer schemas are refused."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute("""CREATE TABLE IF NOT EXISTS memdesk_schema_version (
            version integer PRIMARY KEY, description text NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now())""")
        version = current_version(conn)
        if version > LATEST:
            raise MemoryBackendError(
                f"the database's memdesk schema is version {version}, newer than this memdesk understands "
                f"({LATEST}); upgrade memdesk on this machine. Nothing was changed.", "INVALID_CONFIG", backend_id)
        for m in MIGRATIONS:
            if m.version <= version:
                continue
            for step in m.steps:
                if callable(step):
                    step(conn)
                else:
                    conn.execute(step)
            conn.execute("INSERT INTO memdesk_schema_version (version, description) VALUES (%s, %s)",
                         (m.version, m.description))
            version = m.version
    return version
