"""The postgres backend against a real PostgreSQL 15 server: documents, history, search, migrations,
configuration and fallback, the file mirror, and LISTEN/NOTIFY."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import psycopg
import pytest

from core.backends import MemorySearchOptions, default_registry, resolve_memory_backend
from core.backends.pg import schema
from core.backends.postgres import PostgresMemoryBackend
from core.errors import MemoryBackendError
from core.settings.bindings import confirm
from core.settings.connections import set_connection
from core.storage import fileio
from tests.core.pg_server import PASSWORD, PgServer, free_port, project_key

MEMORY = ".fusion/memory.md"
ENTRY = "\n\n<!-- 2026-12-01 -->\n{}"


def files_under(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


def open_backend(root: Path, key: str, *, mirror: bool = True) -> PostgresMemoryBackend:
    b = PostgresMemoryBackend()
    b.initialize({"connection": "team", "projectKey": key, "mirror": mirror}, root)
    return b


def appender(text: str):
    """A ``build`` callback appending ``text`` as a dated entry unless it is already there."""
    return lambda current: None if text in current else ENTRY.format(text)


@pytest.fixture
def key(pg_connection: str) -> str:
    return project_key()


@pytest.fixture
def backend(project: Path, key: str):
    b = open_backend(project, key)
    yield b
    b.shutdown()


def sql(pg: PgServer, query: str, *args: object) -> list[tuple]:
    with psycopg.connect(pg.dsn()) as conn:
        return conn.execute(query, args).fetchall()


# -- documents ----------------------------------------------------------------------------------------
def test_documents_of_both_layouts_are_separate_rows(backend: PostgresMemoryBackend, project: Path, pg: PgServer,
                                                     key: str):
    backend.write_document(".fusion/memory/MEMORY.md", "# Project Memory\n\n## Decisions\n\n- use leases\n")
    backend.write_document(".fusion/memory/2026-12-01.md", "# Daily Memory 2026-12-01\n")
    backend.write_document(".fusion/agent-memory/bot-1/MEMORY.md", "- agent note\n")
    backend.write("- seed layout\n")
    assert backend.read_document(".fusion/memory/MEMORY.md").endswith("- use leases\n")
    assert backend.read_document(".fusion/memory/DREAMS.md") is None
    rows = sql(pg, "SELECT path FROM memdesk_documents WHERE project_key = %s ORDER BY path", key)
    assert [r[0] for r in rows] == [".fusion/agent-memory/bot-1/MEMORY.md", ".fusion/memory.md",
                                    ".fusion/memory/2026-12-01.md", ".fusion/memory/MEMORY.md"]
    # mirrored to the same paths on disk
    assert (project / ".fusion/agent-memory/bot-1/MEMORY.md").read_text(encoding="utf-8") == "- agent note\n"
    assert [p for p, *_ in backend.list_documents()] == [r[0] for r in rows]


@pytest.mark.parametrize("bad", ["/etc/passwd", ".fusion/../x.md", "memory.md", ".fusion//a.md", ".fusion\\a.md"])
def test_a_document_path_outside_fusion_is_refused(backend: PostgresMemoryBackend, project: Path, bad: str):
    before = files_under(project)
    with pytest.raises(MemoryBackendError) as err:
        backend.write_document(bad, "x")
    assert err.value.code == "INVALID_CONFIG"
    with pytest.raises(MemoryBackendError):
        backend.read_document(bad)
    assert files_under(project) == before


def test_append_re_reads_under_the_lock_and_reports_what_it_appended(backend: PostgresMemoryBackend):
    backend.write("# Project Memory\n")
    seen: list[str] = []

    def build(current: str) -> str:
        seen.append(current)
        return ENTRY.format("first")

    assert backend.append_document(MEMORY, build) == ENTRY.format("first")
    assert seen == ["# Project Memory\n"]
    assert backend.append_document(MEMORY, appender("first")) is None  # build said nothing to add
    assert backend.read() == "# Project Memory\n" + ENTRY.format("first")


def test_stale_expected_hash_from_another_host_is_a_conflict(project: Path, tmp_path: Path, key: str):
    (tmp_path / "host-b").mkdir()
    a, b = open_backend(project, key), open_backend(tmp_path / "host-b", key)
    try:
        a.write("- one\n")
        loaded = fileio.content_hash(a.read())
        b.append_document(MEMORY, appender("from host b"))
        with pytest.raises(MemoryBackendError) as err:
            a.write("- mine\n", expected_hash=loaded)
        assert err.value.code == "CONFLICT"
        assert "from host b" in a.read()
    finally:
        a.shutdown()
        b.shutdown()


def test_history_keeps_replaced_text_with_its_author(backend: PostgresMemoryBackend, project: Path):
    backend.write_document(MEMORY, "- v1\n", source="editor", author="alice")
    backend.write_document(MEMORY, "- v2\n", source="editor", author="bob")
    backend.write_document(MEMORY, "- v3\n", source="prune", author="carol")
    versions = backend.list_versions(MEMORY)
    assert [backend.get_version(v.id)[1] for v in versions] == ["- v2\n", "- v1\n"]
    assert versions[0].source == "prune"
    assert backend.get_version(10**12) is None
    assert not (project / ".fusion" / "memdesk" / "history.db").exists()  # history lives in the database


# -- search -------------------------------------------------------------------------------------------
def test_search_is_ranked_with_snippets_sections_and_lines(backend: PostgresMemoryBackend):
    backend.write("# Project Memory\n\n## Architecture\n\n- The worker claims a job with a lease\n\n"
                  "## Pitfalls\n\n- Clock skew breaks leases when hosts drift\n- Leases, leases: renew leases early\n")
    backend.write_document(".fusion/memory/2026-12-01.md", "# Daily Memory 2026-12-01\n\n- renewed a lease today\n")
    hits = backend.search("leases", MemorySearchOptions(limit=10))
    assert hits[0].line_number == 10 and hits[0].section == "Pitfalls"
    assert hits[0].content == "- «Leases», «leases»: renew «leases» early"  # marked as the file backends mark
    assert [hits[0].content[s:e] for s, e in hits[0].highlights] == ["«Leases»", "«leases»", "«leases»"]
    assert {(h.file, h.line_number) for h in hits} == {(MEMORY, 5), (MEMORY, 9), (MEMORY, 10),
                                                      (".fusion/memory/2026-12-01.md", 3)}
    assert all(0 <= h.score <= 1 for h in hits) and hits[0].score >= hits[-1].score
    # websearch syntax: quoted phrase and exclusion
    assert [h.line_number for h in backend.search('"clock skew" -renew')] == [9]
    assert backend.search("the") == []  # only stop words: no lexemes, no hits


def test_part_of_an_identifier_falls_back_to_a_substring_match(backend: PostgresMemoryBackend):
    backend.write("## Pitfalls\n\n- call claim_job_with_lease() before heartbeat\n")
    hits = backend.search("job_with_le")
    assert [(h.line_number, h.content) for h in hits] == [(3, "- call claim_«job_with_le»ase() before heartbeat")]
    assert hits[0].highlights == ((13, 26),)
    assert backend.search("100%") == []  # LIKE wildcards in the query are literal


def test_semantic_mode_says_it_is_keyword_only(backend: PostgresMemoryBackend):
    backend.write("## Pitfalls\n\n- PgBouncer drops LISTEN in transaction mode\n")
    assert backend.search("PgBouncer", MemorySearchOptions(mode="semantic"))[0].line_number == 3
    assert "keyword" in backend.search_note("semantic") and backend.search_note("keyword") is None
    assert "pgvector" in backend.search_note("hybrid") and "keyword search only" in backend.status_note()


# -- schema -------------------------------------------------------------------------------------------
def test_migrations_are_versioned_and_idempotent(backend: PostgresMemoryBackend, project: Path, key: str, pg: PgServer):
    rows = sql(pg, "SELECT version FROM memdesk_schema_version ORDER BY version")
    assert [r[0] for r in rows] == [m.version for m in schema.MIGRATIONS]
    again = open_backend(project, key)
    again.shutdown()
    assert sql(pg, "SELECT count(*) FROM memdesk_schema_version")[0][0] == len(schema.MIGRATIONS)


def test_migrations_never_drop_or_rewrite_data():
    import re

    for m in schema.MIGRATIONS:
        for step in m.steps:
            # An index holds no data (it is rebuilt from the rows): a step may drop one it replaced.
            sql_text = re.sub(r"ON DELETE CASCADE|^DROP INDEX memdesk_\w+$", "", step) if isinstance(step, str) else ""
            assert not re.search(r"\b(DROP|TRUNCATE|DELETE|UPDATE)\b", sql_text, re.I), (m.version, step)
    assert [m.version for m in schema.MIGRATIONS] == list(range(1, schema.LATEST + 1))


def test_a_newer_schema_is_refused_and_left_alone(pg: PgServer, project: Path, pg_connection: str):
    pg.create_database("memdesk_future")
    future = pg.dsn(database="memdesk_future")
    with psycopg.connect(future) as conn:
        schema.migrate(conn)
        conn.execute("INSERT INTO memdesk_schema_version VALUES (99, 'from a newer memdesk')")
    set_connection("future", future)
    b = PostgresMemoryBackend()
    with pytest.raises(MemoryBackendError) as err:
        b.initialize({"connection": "future", "projectKey": "k"}, project)
    assert err.value.code == "INVALID_CONFIG" and "version 99" in str(err.value) and "upgrade memdesk" in str(err.value)
    with psycopg.connect(future) as conn:
        assert conn.execute("SELECT max(version) FROM memdesk_schema_version").fetchone()[0] == 99
    assert files_under(project) == []


# -- configuration and fallback -----------------------------------------------------------------------
def settings_for(config: dict) -> dict:
    return {"memoryBackend": "postgres", "memoryBackendConfig": config}


@pytest.mark.parametrize("config", [
    {"connection": "team", "projectKey": "k", "dsn": "postgresql://memdesk:pw@127.0.0.1/x"},
    {"connection": "postgresql://memdesk:pw@127.0.0.1/x", "projectKey": "k"},
    {"connection": "team", "projectKey": "k", "password": "pw"},
    {"connection": "team", "projectKey": "../k"},
    {"connection": "team"},
    {"projectKey": "k"},
])
def test_bad_project_config_is_invalid_and_never_shows_a_password(config: dict, project: Path, pg_connection: str):
    b = PostgresMemoryBackend()
    with pytest.raises(MemoryBackendError) as err:
        b.initialize(config, project)
    assert err.value.code == "INVALID_CONFIG"
    assert "pw" not in str(err.value).replace("projectKey", "")
    assert files_under(project) == []


def fallback(project: Path, config: dict) -> str:
    confirm(project, config["connection"], config["projectKey"])  # bound: the fallback is about the server
    backend = resolve_memory_backend(settings_for(config), project, default_registry())
    assert backend.id == "file"
    assert backend.fallback_reason
    return backend.fallback_reason


def test_unknown_connection_falls_back_to_file_writing_nothing(project: Path, pg_connection: str):
    reason = fallback(project, {"connection": "nope", "projectKey": "k"})
    assert "no connection named 'nope'" in reason and "memdesk connections set nope" in reason
    assert files_under(project) == []


def test_server_down_falls_back_with_the_reason_and_the_password_masked(project: Path, pg_connection: str,
                                                                          pg: PgServer):
    set_connection("down", pg.dsn().replace(f"port={pg.port}", f"port={free_port()}"))
    reason = fallback(project, {"connection": "down", "projectKey": "k"})
    assert "unavailable" in reason and "password=****" in reason and PASSWORD not in reason
    assert files_under(project) == []


def test_a_refused_password_falls_back_with_the_reason(project: Path, pg_connection: str, pg: PgServer):
    set_connection("wrong", pg.dsn(password="not-the-password"))
    reason = fallback(project, {"connection": "wrong", "projectKey": "k"})
    assert "refused the login" in reason and "password authentication failed" in reason
    assert "not-the-password" not in reason
    assert files_under(project) == []


def test_edits_made_while_fallen_back_are_imported_once_the_server_is_back(project: Path, key: str, pg: PgServer):
    b = open_backend(project, key)
    b.write("# Project Memory\n")
    b.shutdown()
    set_connection("team", pg.dsn().replace(f"port={pg.port}", f"port={free_port()}"))  # "the server is down"
    confirm(project, "team", key)
    fb = resolve_memory_backend(settings_for({"connection": "team", "projectKey": key}), project, default_registry())
    assert fb.id == "file" and fb.read() == "# Project Memory\n"
    fb.write("# Project Memory\n" + ENTRY.format("written while the server was down"))
    set_connection("team", pg.dsn())  # the server is back
    back = resolve_memory_backend(settings_for({"connection": "team", "projectKey": key}), project, default_registry())
    try:
        assert back.id == "postgres" and back.fallback_reason is None
        assert "written while the server was down" in back.read()
        assert sql(pg, "SELECT content FROM memdesk_documents WHERE project_key = %s", key)[0][0] == back.read()
    finally:
        back.shutdown()


# -- mirror -------------------------------------------------------------------------------------------
def agent_append(root: Path, text: str) -> None:
    """What Fusion's own agents do: append to the file, no lock, no memdesk."""
    with open(root / MEMORY, "a", encoding="utf-8") as fh:
        fh.write(ENTRY.format(text))


def test_an_agents_append_to_the_mirror_is_imported_never_overwritten(backend: PostgresMemoryBackend, project: Path,
                                                                     key: str, tmp_path: Path):
    backend.write("# Project Memory\n")
    agent_append(project, "agent A learned this")
    backend.append_document(MEMORY, appender("operator entry"))
    text = backend.read()
    assert text == "# Project Memory\n" + ENTRY.format("agent A learned this") + ENTRY.format("operator entry")
    assert (project / MEMORY).read_text(encoding="utf-8") == text
    other = open_backend(tmp_path, key, mirror=False)
    try:
        assert other.read() == text
    finally:
        other.shutdown()


def test_an_append_on_one_host_and_a_write_on_another_both_survive(project: Path, tmp_path: Path, key: str):
    host_b = tmp_path / "host-b"
    host_b.mkdir()
    a, b = open_backend(project, key), open_backend(host_b, key)
    try:
        a.write("# Project Memory\n")
        b.read()
        b.append_document(MEMORY, appender("from host B"))
        agent_append(project, "agent on host A")  # host A's mirror still lacks B's entry
        text = a.read()
        assert "from host B" in text and "agent on host A" in text
        assert (project / MEMORY).read_text(encoding="utf-8") == text
        assert b.read() == text and (host_b / MEMORY).read_text(encoding="utf-8") == text
    finally:
        a.shutdown()
        b.shutdown()


def test_a_stale_mirror_is_refreshed_not_imported(project: Path, tmp_path: Path, key: str):
    host_b = tmp_path / "host-b"
    host_b.mkdir()
    a, b = open_backend(project, key), open_backend(host_b, key)
    try:
        a.write("- old\n")
        b.write("- pruned by host B\n")
        assert a.read() == "- pruned by host B\n"
        assert (project / MEMORY).read_text(encoding="utf-8") == "- pruned by host B\n"
        assert [a.get_version(v.id)[1] for v in a.list_versions(MEMORY)] == ["- old\n"]
    finally:
        a.shutdown()
        b.shutdown()


def test_edits_on_both_sides_merge_or_keep_the_file_in_history(project: Path, tmp_path: Path, key: str):
    host_b = tmp_path / "host-b"
    host_b.mkdir()
    a, b = open_backend(project, key), open_backend(host_b, key)
    try:
        a.write("line 1\nline 2\nline 3\nline 4\nline 5\n")
        b.write("line 1 (B)\nline 2\nline 3\nline 4\nline 5\n")
        (project / MEMORY).write_text("line 1\nline 2\nline 3\nline 4\nline 5 (agent)\n", encoding="utf-8")
        assert a.read() == "line 1 (B)\nline 2\nline 3\nline 4\nline 5 (agent)\n"  # clean three-way merge
        b.write("line 1 (B again)\nline 2\nline 3\nline 4\nline 5 (agent)\n")
        (project / MEMORY).write_text("line 1 (agent)\nline 2\nline 3\nline 4\nline 5 (agent)\n", encoding="utf-8")
        assert a.read() == "line 1 (B again)\nline 2\nline 3\nline 4\nline 5 (agent)\n"  # both changed line 1
        kept = [(v.source, a.get_version(v.id)[1]) for v in a.list_versions(MEMORY)]
        assert ("mirror-conflict", "line 1 (agent)\nline 2\nline 3\nline 4\nline 5 (agent)\n") in kept
        assert any("mirror-conflict" in w for w in a.warnings)
    finally:
        a.shutdown()
        b.shutdown()


def test_a_mirror_that_is_not_utf8_is_neither_imported_nor_overwritten(backend: PostgresMemoryBackend, project: Path):
    backend.write("- clean\n")
    (project / MEMORY).write_bytes(b"- caf\xe9 latin-1\n")
    backend.write("- newer\n")
    assert backend.read() == "- newer\n"
    assert (project / MEMORY).read_bytes() == b"- caf\xe9 latin-1\n"
    assert any("not valid UTF-8" in w for w in backend.warnings)


def test_without_the_mirror_no_file_is_written(project: Path, key: str):
    b = open_backend(project, key, mirror=False)
    try:
        b.write("- only in the database\n")
        b.append_document(MEMORY, appender("entry"))
        assert b.memory_path is None
        assert files_under(project) == []
    finally:
        b.shutdown()


def test_a_layered_project_mirrors_long_term_memory(layered_project: Path, key: str):
    before = (layered_project / ".fusion/memory/MEMORY.md").read_text(encoding="utf-8")
    b = open_backend(layered_project, key)
    try:
        assert b.primary == ".fusion/memory/MEMORY.md" and b.read() == before  # imported on first open
        b.append_document(b.primary, lambda cur: "\n- a team decision\n")
        assert (layered_project / ".fusion/memory/MEMORY.md").read_text(encoding="utf-8") == before + "\n- a team decision\n"
        assert not (layered_project / MEMORY).exists()  # never a file of the other layout
    finally:
        b.shutdown()


# -- live changes -------------------------------------------------------------------------------------
def test_another_hosts_write_reaches_a_watcher_with_its_hash(project: Path, tmp_path: Path, key: str):
    host_b = tmp_path / "host-b"
    host_b.mkdir()
    a, b = open_backend(project, key), open_backend(host_b, key)
    got: list = []
    arrived = threading.Event()

    def on_change(change) -> None:
        got.append((change, (project / MEMORY).read_text(encoding="utf-8")))
        arrived.set()

    try:
        a.write("# Project Memory\n")
        handle = a.watch(on_change)
        b.append_document(MEMORY, appender("live from B"))
        assert arrived.wait(10), "no notification arrived"
        change, mirror_then = got[-1]
        assert change.path == MEMORY and not change.own
        assert change.hash == fileio.content_hash(b.read())
        assert "live from B" in mirror_then  # host A's mirror was refreshed before the callback ran
        handle.stop()
        assert not handle.thread.is_alive()
    finally:
        a.shutdown()
        b.shutdown()


def test_changes_iterator_sees_only_its_project(backend: PostgresMemoryBackend, tmp_path: Path, key: str):
    other = open_backend(tmp_path, project_key(), mirror=False)
    feed = backend.change_feed()
    feed.start()
    try:
        other.write("- another project\n")
        backend.write("- ours\n")
        changes = list(feed.changes(timeout=2))
        assert [(c.path, c.own) for c in changes] == [(MEMORY, True)]
        assert json.loads(json.dumps(changes[0].__dict__))["hash"] == fileio.content_hash("- ours\n")
    finally:
        feed.close()
        other.shutdown()


def test_connections_file_is_private(pg_connection: str):
    path = Path(os.environ["MEMDESK_CONFIG_DIR"]) / "connections.json"
    assert path.stat().st_mode & 0o777 == 0o600


def test_chunking_only_the_appended_tail_equals_chunking_everything():
    """The append path re-chunks from the last dated entry on; it must give exactly what a full chunking gives."""
    import random

    from core.backends.pg.documents import chunk_appended
    from core.search.chunking import chunk_markdown
    from tests.conftest import REAL_MEMORY

    real = REAL_MEMORY.read_text(encoding="utf-8")
    pieces = ["\n\n<!-- 2026-12-01 -->\nentry", "\n- item", "\n  continued", "\n\n## Heading #", "\n```\ncode\n",
              "\n```\n", "\n<!-- c", "\nx -->", "\n\n", "\n### sub", "\npara line",
              "\n\n<!-- 2026-12-02 -->\n\n\nlate body", "\n## ", "\r\nwindows line", "\u2028separator"]
    rng = random.Random(13)
    for trial in range(400):
        base = real + ENTRY.format("seed") if trial % 4 == 0 else "".join(
            rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        new = base + "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
        assert chunk_appended(base, chunk_markdown(base, MEMORY), new, MEMORY) == chunk_markdown(new, MEMORY), trial


def test_a_one_mebibyte_paragraph_is_stored_and_searchable(backend: PostgresMemoryBackend):
    """A tsvector holds at most 1 MB: one huge entry of distinct words must still be written."""
    import random
    import string

    rng = random.Random(3)
    words = ["".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(4, 10))) for _ in range(150_000)]
    text = ("## Context\n\nearlyword " + " ".join(words))[:fileio.MAX_FILE_SIZE - 20] + " latewordxyz\n"
    backend.write(text)
    assert backend.read() == text
    assert backend.search("earlyword")[0].line_number == 3
    assert backend.search("latewordxyz")[0].line_number == 3  # past the indexed part: the substring fallback


def test_watch_reports_an_unavailable_server(project: Path, key: str, pg: PgServer):
    b = open_backend(project, key, mirror=False)
    try:
        b._dsn = pg.dsn().replace(f"port={pg.port}", f"port={free_port()}")  # the server went away since opening
        with pytest.raises(MemoryBackendError) as err:
            b.watch(lambda change: None)
        assert err.value.code == "BACKEND_UNAVAILABLE" and PASSWORD not in str(err.value)
    finally:
        b.shutdown()


def test_an_agent_writing_the_mirror_during_a_write_is_not_overwritten(backend: PostgresMemoryBackend,
                                                                       project: Path):
    backend.write("# Project Memory\n")

    def build(current: str) -> str:
        agent_append(project, "agent wrote during memdesk's write")  # between memdesk's read and its mirror write
        return ENTRY.format("memdesk entry")

    backend.append_document(MEMORY, build)
    assert "agent wrote during memdesk's write" in (project / MEMORY).read_text(encoding="utf-8")
    text = backend.read()  # imported on the next read, and the mirror brought in step
    assert "agent wrote during memdesk's write" in text and "memdesk entry" in text
    assert (project / MEMORY).read_text(encoding="utf-8") == text


def test_chunk_rows_stay_exactly_in_step_through_edits_appends_and_prunes(backend: PostgresMemoryBackend, pg: PgServer,
                                                                          key: str):
    """After every kind of change the rows are what a full chunking of the text gives, each indexed right."""
    import random

    from core.backends.pg.schema import TSV
    from core.search.chunking import chunk_markdown
    from tests.conftest import REAL_MEMORY

    rng = random.Random(11)
    lines = REAL_MEMORY.read_text(encoding="utf-8").splitlines(keepends=True)
    for step in range(12):
        kind = step % 4
        if kind == 0:
            del lines[rng.randrange(len(lines))]  # a prune: every later entry moves up
        elif kind == 1:
            lines.insert(rng.randrange(len(lines)), f"- inserted note {step}\n\n")
        elif kind == 2:
            lines[rng.randrange(len(lines))] = f"- edited in place {step}\n"
        if kind == 3:
            backend.append_document(MEMORY, appender(f"appended {step}"))
        else:
            backend.write("".join(lines))
        text = backend.read()
        lines = text.splitlines(keepends=True)
        want = [(e.line, e.end_line, e.section, e.text) for e in chunk_markdown(text, MEMORY)]
        got = sql(pg, "SELECT line, end_line, section, body FROM memdesk_chunks WHERE project_key = %s "
                      "AND path = %s ORDER BY line", key, MEMORY)
        assert got == want, step
        stale = sql(pg, f"SELECT count(*) FROM memdesk_chunks WHERE project_key = %s AND tsv <> ({TSV})", key)
        assert stale[0][0] == 0, step


def test_an_emptied_mirror_is_written_again_not_imported(backend: PostgresMemoryBackend, project: Path):
    backend.write("# Project Memory\n\n- keep me\n")
    (project / MEMORY).write_text("", encoding="utf-8")
    assert backend.read() == "# Project Memory\n\n- keep me\n"
    assert (project / MEMORY).read_text(encoding="utf-8") == "# Project Memory\n\n- keep me\n"
    (project / MEMORY).unlink()
    assert backend.read() == "# Project Memory\n\n- keep me\n" and (project / MEMORY).exists()


def test_a_writer_that_never_finishes_does_not_block_the_others_forever(backend: PostgresMemoryBackend,
                                                                         key: str, pg: PgServer,
                                                                         monkeypatch: pytest.MonkeyPatch):
    from core.backends.pg import documents

    monkeypatch.setattr(documents, "LOCK_TIMEOUT", "300ms")
    backend.write("- one\n")
    with psycopg.connect(pg.dsn()) as hung:  # another host, stuck inside its write of the same document
        hung.execute("SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))", (key, MEMORY))
        with pytest.raises(MemoryBackendError) as err:
            backend.append_document(MEMORY, appender("waits"))
        assert err.value.code == "WRITE_FAILED" and "another writer holds the document" in str(err.value)
    assert backend.append_document(MEMORY, appender("after")) is not None  # the lock went with its transaction
