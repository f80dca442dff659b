"""The sqlite backend (mirror, import of outside edits, transactions, confined paths) and registration."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.backends import MemorySearchOptions, default_registry, resolve_memory_backend
from core.backends.sqlite import SqliteMemoryBackend
from core.errors import MemoryBackendError
from core.storage import fileio
from core.storage.history import versions as history

MEMORY = ".fusion/memory.md"


@pytest.fixture
def sqlite_backend(project: Path):
    b = SqliteMemoryBackend()
    b.initialize({}, project)
    yield b
    b.shutdown()


def test_registered_with_settings_models_and_notes():
    registry = default_registry()
    assert {"sqlite", "hybrid"} <= set(registry.list())
    infos = {i.id: i for i in registry.infos()}
    schema = infos["sqlite"].settings_model.model_json_schema()
    assert set(schema["properties"]) == {"database", "mirror", "tokenizer"}
    assert schema["properties"]["mirror"]["default"] is True
    assert "keyword" in (infos["sqlite"].note or "")
    assert infos["hybrid"].note


def test_canonical_content_is_in_the_database_and_mirrored(sqlite_backend: SqliteMemoryBackend, project: Path):
    assert sqlite_backend.memory_path == MEMORY
    sqlite_backend.write("- one\n")
    assert (project / MEMORY).read_text() == "- one\n"
    assert sqlite_backend.database_path == project / ".fusion" / "memdesk" / "memory.db"
    (project / MEMORY).unlink()  # the mirror is a copy: the database still has the memory
    assert sqlite_backend.read() == "- one\n"


def test_outside_edit_of_the_mirror_is_imported_not_lost(sqlite_backend: SqliteMemoryBackend, project: Path):
    sqlite_backend.write("## Context\n\n- one\n")
    loaded = fileio.content_hash(sqlite_backend.read())
    with (project / MEMORY).open("a", encoding="utf-8") as fh:  # an agent appends to the file
        fh.write("\n<!-- 2026-11-30 -->\nagent narwhal note\n")
    with pytest.raises(MemoryBackendError) as err:  # the editor's stale save must not drop it
        sqlite_backend.write("## Context\n\n- one\n- mine\n", expected_hash=loaded)
    assert err.value.code == "CONFLICT"
    assert "agent narwhal note" in sqlite_backend.read()
    assert sqlite_backend.search("narwhal")[0].file == MEMORY
    sources = [v.source for v in history.list_versions(project, MEMORY)]
    assert "mirror-import" in sources


def test_mirror_off(project: Path):
    b = SqliteMemoryBackend()
    b.initialize({"mirror": False}, project)
    try:
        assert b.memory_path is None
        b.write("- only in the database\n")
        assert not (project / MEMORY).exists()
        assert b.search("database")[0].line_number == 1
        assert history.list_versions(project) == []
        b.write("- second\n")
        assert [v.source for v in history.list_versions(project, MEMORY)] == ["write"]
    finally:
        b.shutdown()


def test_a_new_database_starts_from_the_existing_file(project: Path):
    (project / ".fusion").mkdir()
    (project / MEMORY).write_text("- existing memory\n", encoding="utf-8")
    b = SqliteMemoryBackend()
    b.initialize({"mirror": False}, project)
    try:
        assert b.read() == "- existing memory\n"
    finally:
        b.shutdown()


def test_transaction_rolls_back_every_write(sqlite_backend: SqliteMemoryBackend, project: Path):
    sqlite_backend.write("- before\n")
    with pytest.raises(RuntimeError), sqlite_backend.transaction():
        sqlite_backend.write("- first\n")
        sqlite_backend.write("- second\n")
        raise RuntimeError("crash mid-way")
    assert sqlite_backend.read() == "- before\n"
    assert (project / MEMORY).read_text() == "- before\n"
    assert sqlite_backend.search("second") == []
    with sqlite_backend.transaction():
        sqlite_backend.write("- first\n")
        sqlite_backend.write("- second\n")
        assert (project / MEMORY).read_text() == "- before\n"  # the mirror follows the commit
    assert (project / MEMORY).read_text() == "- second\n"


@pytest.mark.parametrize("database", ["../outside.db", "/tmp/memdesk-outside.db", "escape/memory.db"])
def test_database_path_is_confined_to_the_root(project: Path, tmp_path: Path, database: str):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (project / "escape").symlink_to(outside)
    before = set(tmp_path.iterdir())
    with pytest.raises(MemoryBackendError) as err:
        SqliteMemoryBackend().initialize({"database": database}, project)
    assert err.value.code == "INVALID_CONFIG" and "database" in str(err.value)
    assert set(tmp_path.iterdir()) == before
    assert list(outside.iterdir()) == []
    assert not Path("/tmp/memdesk-outside.db").exists()


def test_bad_database_path_falls_back_to_file_with_reason(project: Path):
    backend = resolve_memory_backend({"memoryBackend": "sqlite", "memoryBackendConfig": {"database": "../x.db"}},
                                     project)
    assert backend.id == "file" and "database" in (backend.fallback_reason or "")


def test_custom_database_path_inside_the_root(project: Path):
    b = SqliteMemoryBackend()
    b.initialize({"database": ".fusion/memdesk/team.sqlite"}, project)
    try:
        b.write("- x\n")
        assert (project / ".fusion/memdesk/team.sqlite").is_file()
    finally:
        b.shutdown()


def test_search_modes_are_keyword_with_a_note(sqlite_backend: SqliteMemoryBackend):
    sqlite_backend.write("## Pitfalls\n\n- PgBouncer drops LISTEN\n")
    for mode in ("semantic", "hybrid"):
        results = sqlite_backend.search("pgbouncer", MemorySearchOptions(mode=mode))
        assert results[0].section == "Pitfalls"
        assert "keyword" in (sqlite_backend.search_note(mode) or "")
    assert sqlite_backend.search_note("keyword") is None


def test_unreadable_mirror_does_not_break_reads(sqlite_backend: SqliteMemoryBackend, project: Path, caplog):
    sqlite_backend.write("- good\n")
    (project / MEMORY).write_bytes(b"- bad \xff\n")
    assert sqlite_backend.read() == "- good\n"
    assert "not importing" in caplog.text
    os.chmod(project / MEMORY, 0o644)


def test_switching_the_mirror_on_refreshes_a_stale_file(project: Path):
    b = SqliteMemoryBackend()
    b.initialize({}, project)
    b.write("- old\n")
    b.shutdown()
    os.utime(project / MEMORY, ns=(1_000_000_000, 1_000_000_000))  # the mirror left behind long ago
    b.initialize({"mirror": False}, project)
    b.write("- newer, written while the mirror was off\n")
    b.shutdown()
    b.initialize({"mirror": True}, project)
    try:
        assert b.read() == "- newer, written while the mirror was off\n"
        assert (project / MEMORY).read_text() == "- newer, written while the mirror was off\n"
    finally:
        b.shutdown()
