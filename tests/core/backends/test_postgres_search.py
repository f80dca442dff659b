"""The postgres backend's keyword search: the words index (each entry's words and its project's lexeme)
is what a search reads, results stay within the project, entries holding the words as typed come first,
and a database of schema 1 is migrated to it without losing a row."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from core.backends import MemorySearchOptions
from core.backends.pg import schema
from core.backends.pg import search as pg_search
from core.backends.postgres import PostgresMemoryBackend
from core.settings.connections import set_connection
from tests.core.backends.test_postgres import MEMORY, open_backend, sql
from tests.core.pg_server import PgServer, project_key


@pytest.fixture
def key(pg_connection: str) -> str:
    return project_key()


@pytest.fixture
def backend(project: Path, key: str):
    b = open_backend(project, key, mirror=False)
    yield b
    b.shutdown()


def plan(pg: PgServer, query: str, key: str) -> str:
    """The plan of the ranked query, with sequential scans off (a table this small would be read whole)."""
    with psycopg.connect(pg.dsn()) as conn:
        conn.execute("SET enable_seqscan = off")
        rows = conn.execute("EXPLAIN " + pg_search._RANKED, {"q": query, "key": key, "window": 40}).fetchall()
    return "\n".join(r[0] for r in rows)


def test_a_search_reads_the_words_index_alone(backend: PostgresMemoryBackend, pg: PgServer, key: str):
    backend.write("".join(f"- note {n} about leases and clocks\n" for n in range(50)))
    shown = plan(pg, "leases clocks", key)
    assert "memdesk_chunks_words" in shown, shown
    assert "memdesk_chunks_doc" not in shown and "BitmapAnd" not in shown, shown  # no bitmap of the project's rows
    indexes = {r[0] for r in sql(pg, "SELECT indexname FROM pg_indexes WHERE tablename = 'memdesk_chunks'")}
    assert "memdesk_chunks_words" in indexes and "memdesk_chunks_tsv" not in indexes


def test_results_stay_within_the_project(project: Path, tmp_path: Path, pg_connection: str):
    keys = ["acme.api_v2-" + project_key(), project_key()]  # every character a key may hold
    names = ["northern", "southern"]
    hosts = []
    try:
        for n, k in enumerate(keys):
            root = tmp_path / f"host-{n}"
            root.mkdir()
            hosts.append(open_backend(root, k, mirror=False))
            hosts[-1].write(f"## Notes\n\n- the {names[n]} walrus migration\n")
        for n, b in enumerate(hosts):
            hits = b.search("walrus migration")
            assert len(hits) == 1 and names[n] in hits[0].content, [h.content for h in hits]
        assert hosts[0].search("the") == []  # stop words only: nothing, not every entry of the project
    finally:
        for b in hosts:
            b.shutdown()


def test_entries_holding_the_words_as_typed_come_first(backend: PostgresMemoryBackend):
    backend.write("## Notes\n\n"
                  "- leasing: leased, lease, lease renewal, leasing again\n\n"  # stems only, and often
                  "- leases expire when the clock of one host runs fast against the others\n")
    hits = backend.search("leases", MemorySearchOptions(limit=10))
    assert [h.line_number for h in hits] == [5, 3]
    assert [h.scores["exact"] for h in hits] == [1.0, 0.0]
    assert hits[0].scores["keyword"] < hits[1].scores["keyword"]  # ranked lower, shown first
    # an excluded word is not looked for as typed
    assert [h.line_number for h in backend.search("leases -renewal")] == [5]
    # the page after the first
    assert [h.line_number for h in backend.search("leases", MemorySearchOptions(limit=1, offset=1))] == [3]
    assert backend.search("leases", MemorySearchOptions(limit=1, offset=2)) == []


def test_a_schema_1_database_is_migrated_without_losing_a_row(pg: PgServer, project: Path, pg_connection: str,
                                                             monkeypatch: pytest.MonkeyPatch):
    pg.create_database("memdesk_schema1")
    set_connection("old", pg.dsn(database="memdesk_schema1"))
    text = "# Project Memory\n\n## Notes\n\n- the walrus migration\n" + "".join(
        f"- entry {n}: compressible text, long enough to be stored compressed\n" for n in range(100))
    with monkeypatch.context() as m:  # a memdesk that knows schema 1 only
        m.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:1])
        m.setattr(schema, "LATEST", 1)
        old = PostgresMemoryBackend()
        old.initialize({"connection": "old", "projectKey": "k", "mirror": False}, project)
        old.write(text)
        old.write(text + "- a second entry\n")  # one version in history
        old.shutdown()
    b = PostgresMemoryBackend()
    b.initialize({"connection": "old", "projectKey": "k", "mirror": False}, project)
    try:
        with psycopg.connect(pg.dsn(database="memdesk_schema1")) as conn:
            versions = [r[0] for r in conn.execute("SELECT version FROM memdesk_schema_version ORDER BY 1")]
            indexes = {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'memdesk_chunks'")}
        assert versions == [1, 2] and "memdesk_chunks_words" in indexes and "memdesk_chunks_tsv" not in indexes
        assert b.read_document(MEMORY) == text + "- a second entry\n"
        assert [b.get_version(v.id)[1] for v in b.list_versions(MEMORY)] == [text]
        assert [h.line_number for h in b.search("walrus")] == [5]
        with psycopg.connect(pg.dsn(database="memdesk_schema1")) as conn:  # the value stored before: as it was
            assert conn.execute("SELECT pg_column_compression(content) FROM memdesk_documents").fetchone()[0] == "pglz"
        b.append_document(MEMORY, lambda current: "- appended after the migration\n")
        with psycopg.connect(pg.dsn(database="memdesk_schema1")) as conn:
            method = conn.execute("SELECT pg_column_compression(content) FROM memdesk_documents").fetchone()[0]
            try:
                conn.execute("CREATE TEMP TABLE has_lz4 (x text COMPRESSION lz4)")
                lz4 = True
            except psycopg.errors.FeatureNotSupported:
                lz4 = False
        assert method == ("lz4" if lz4 else "pglz")  # rewritten by the append with the column's new method
        assert [h.line_number for h in b.search("appended")] == [107]
    finally:
        b.shutdown()
