"""Deleting text from the memory removes it from every index: no search mode finds it, no row holds it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from core.backends import MemoryBackend, MemorySearchOptions
from tests.core.searching import SEARCHING_KINDS, make_searching_backend

SECRET = "zebraquokka"
BASE = "# Project Memory\n\n## Pitfalls\n\n- Clock skew breaks leases\n- PgBouncer drops LISTEN\n"
WITH_SECRET = BASE + f"- The staging password is {SECRET} and must rotate monthly\n"


def index_files(backend: MemoryBackend) -> list[Path]:
    db = backend.search_service.db.path  # type: ignore[attr-defined]
    return [p for p in (db, Path(f"{db}-wal")) if p.exists()]


def rows_holding(db_path: Path, needle: str) -> list[str]:
    """Names of tables (and FTS vocabulary) that still hold ``needle``."""
    conn = sqlite3.connect(db_path)
    try:
        found = []
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'search_%'"):
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            for col in cols:
                hit = conn.execute(f"SELECT count(*) FROM {table} WHERE instr(CAST({col} AS BLOB), ?) > 0",
                                   (needle.encode(),)).fetchone()[0]
                if hit:
                    found.append(f"{table}.{col}")
        conn.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, search_fts, 'row')")
        if conn.execute("SELECT count(*) FROM temp.vocab WHERE term LIKE ?", (f"%{needle}%",)).fetchone()[0]:
            found.append("search_fts vocabulary")
        if "memory" in {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}:
            if conn.execute("SELECT count(*) FROM memory WHERE content LIKE ?", (f"%{needle}%",)).fetchone()[0]:
                found.append("memory.content")
        return found
    finally:
        conn.close()


@pytest.mark.parametrize("kind", SEARCHING_KINDS)
def test_deleted_line_is_gone_from_every_index(kind: str, project: Path):
    backend = make_searching_backend(kind)
    backend.initialize({}, project)
    try:
        backend.write(WITH_SECRET)
        for mode in ("keyword", "semantic", "hybrid"):
            hits = backend.search(f"staging password {SECRET}", MemorySearchOptions(limit=10, mode=mode))
            assert any(SECRET in r.content or r.line_number == 7 for r in hits), mode
        vectors_before = _vector_count(backend)
        assert "search_entries.text" in rows_holding(backend.search_service.db.path, SECRET)  # type: ignore[attr-defined]

        backend.write(BASE)  # the operator deletes the line

        for mode in ("keyword", "semantic", "hybrid"):
            for query in (SECRET, f"staging password {SECRET} rotate monthly"):
                hits = backend.search(query, MemorySearchOptions(limit=50, mode=mode))
                assert all(SECRET not in r.content and r.line_number != 7 for r in hits), (mode, query)
        db_path = backend.search_service.db.path  # type: ignore[attr-defined]
        assert rows_holding(db_path, SECRET) == []
        if vectors_before:
            assert _vector_count(backend) == vectors_before - 1
        for f in index_files(backend):
            assert SECRET.encode() not in f.read_bytes(), f"{f.name} still holds the deleted text"
    finally:
        backend.shutdown()


def _vector_count(backend: MemoryBackend) -> int:
    db = backend.search_service.db  # type: ignore[attr-defined]
    with db.lock:
        return int(db.conn.execute("SELECT count(*) FROM search_vectors").fetchone()[0])


def test_deleting_a_whole_searched_file_forgets_it(project: Path):
    backend = make_searching_backend("hybrid-keyword-only")
    backend.initialize({}, project)
    try:
        backend.write(BASE)
        archive = project / ".fusion" / "memory-archive.md"
        archive.write_text(f"# Memory Archive\n\n- old note about {SECRET}\n", encoding="utf-8")
        assert backend.search(SECRET)[0].file == ".fusion/memory-archive.md"
        archive.unlink()
        assert backend.search(SECRET) == []
        assert rows_holding(backend.search_service.db.path, SECRET) == []  # type: ignore[union-attr]
    finally:
        backend.shutdown()


def test_deleted_line_is_gone_from_postgres(project: Path, pg_connection: str, pg):
    """The same on the postgres backend: no search mode, chunk row, tsvector lexeme, document row or mirror
    keeps the deleted line; only the history does, by design."""
    import psycopg

    from core.backends.postgres import PostgresMemoryBackend
    from tests.core.pg_server import project_key

    key = project_key()
    backend = PostgresMemoryBackend()
    backend.initialize({"connection": "team", "projectKey": key}, project)

    def holding(query: str) -> int:
        with psycopg.connect(pg.dsn()) as conn:
            return int(conn.execute(query, (key, f"%{SECRET}%")).fetchone()[0])

    chunk_rows = "SELECT count(*) FROM memdesk_chunks WHERE project_key = %s AND body ILIKE %s"
    lexemes = "SELECT count(*) FROM memdesk_chunks WHERE project_key = %s AND tsv::text ILIKE %s"
    documents = "SELECT count(*) FROM memdesk_documents WHERE project_key = %s AND content ILIKE %s"
    kept = "SELECT count(*) FROM memdesk_history WHERE project_key = %s AND content ILIKE %s"
    try:
        backend.write(WITH_SECRET)
        for mode in ("keyword", "semantic", "hybrid"):
            hits = backend.search(f"staging password {SECRET}", MemorySearchOptions(limit=10, mode=mode))
            assert any(SECRET in r.content and r.line_number == 7 for r in hits), mode
        assert holding(chunk_rows) == 1 and holding(lexemes) == 1

        backend.write(BASE)  # the operator deletes the line

        for mode in ("keyword", "semantic", "hybrid"):
            for query in (SECRET, f"staging password {SECRET} rotate monthly", SECRET[2:8]):
                hits = backend.search(query, MemorySearchOptions(limit=50, mode=mode))
                assert all(SECRET not in r.content and r.line_number != 7 for r in hits), (mode, query)
        assert holding(chunk_rows) == 0
        assert holding(lexemes) == 0 and holding(documents) == 0
        assert SECRET not in (project / ".fusion" / "memory.md").read_text(encoding="utf-8")
        assert holding(kept) == 1  # history keeps replaced versions, by design
    finally:
        backend.shutdown()
