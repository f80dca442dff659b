"""One contract suite run against every built-in backend: file, readonly, sqlite, hybrid and postgres.

The readonly backend runs the write-refusal variant: every write is refused with ``READ_ONLY`` and
nothing on disk changes. The hybrid backend runs twice: with the semantic model when the extra is
installed, and keyword-only (as without the extra). The postgres backend runs against the session's
throwaway PostgreSQL cluster (tests/core/pg_server.py), with and without its file mirror, each test under a
project key of its own.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.backends import (
    MemoryBackend,
    MemorySearchOptions,
    get_backend_capabilities,
    require_capability,
)
from core.backends.file import FileMemoryBackend, ReadOnlyMemoryBackend
from core.backends.postgres import PostgresMemoryBackend
from core.backends.sqlite import SqliteMemoryBackend
from core.errors import MemoryBackendError
from core.storage import fileio
from core.storage.fileio import MAX_FILE_SIZE
from tests.conftest import REAL_MEMORY
from tests.core.pg_server import project_key
from tests.core.searching import make_searching_backend

KINDS = ["file", "readonly", "sqlite", "sqlite-nomirror", "hybrid", "hybrid-keyword-only", "postgres",
         "postgres-nomirror"]
EXPECTED_CAPS = {
    "file": {"read", "write"},
    "readonly": {"read"},
    "sqlite": {"read", "write", "search", "transactions"},
    "sqlite-nomirror": {"read", "write", "search", "transactions"},
    "hybrid": {"read", "write", "search"},
    "hybrid-keyword-only": {"read", "write", "search"},
    "postgres": {"read", "write", "search", "transactions"},
    "postgres-nomirror": {"read", "write", "search", "transactions"},
}


def make(kind: str) -> tuple[MemoryBackend, dict]:
    """A fresh, uninitialized backend of ``kind`` and the config to initialize it with."""
    if kind == "file":
        return FileMemoryBackend(), {}
    if kind == "readonly":
        return ReadOnlyMemoryBackend(), {}
    if kind == "sqlite-nomirror":
        return SqliteMemoryBackend(), {"mirror": False}
    if kind.startswith("postgres"):
        return PostgresMemoryBackend(), {"connection": "team", "projectKey": project_key(),
                                         "mirror": kind == "postgres"}
    return make_searching_backend(kind), {}


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    if request.param.startswith("postgres"):
        request.getfixturevalue("pg_connection")  # the cluster, and the connection "team" in the user config
    return request.param


def versions(backend: MemoryBackend, project: Path) -> list[str]:
    """The texts kept in history for the working memory (the database's history for postgres)."""
    from core.storage.history import versions as history

    if isinstance(backend, PostgresMemoryBackend):
        return [backend.get_version(v.id)[1] for v in backend.list_versions(".fusion/memory.md")]
    return [history.get_version(project, v.id)[1] for v in history.list_versions(project, ".fusion/memory.md")]


@pytest.fixture
def backend(kind: str, project: Path):
    b, cfg = make(kind)
    b.initialize(cfg, project)
    yield b
    b.shutdown()


def writable(kind: str) -> bool:
    return kind != "readonly"


def big_content(size: int) -> str:
    """Realistic markdown of exactly ``size`` UTF-8 bytes (long bullets, a few hundred entries)."""
    line = "- " + "the worker claims a job with a lease and renews it by heartbeat " * 15 + "\n"
    text = "# Project Memory\n\n## Architecture\n\n" + line * (size // len(line))
    return text + "x" * (size - len(text.encode("utf-8")))


def on_disk(project: Path) -> bytes | None:
    path = project / ".fusion" / "memory.md"
    return path.read_bytes() if path.exists() else None


def test_read_is_empty_when_nothing_was_written(backend: MemoryBackend):
    assert backend.read() == ""


def test_round_trip_is_byte_exact(kind: str, backend: MemoryBackend, project: Path):
    text = "# Project Memory\r\n\r\n## Pitfalls\n\n- ünïcödé ✓ `code`\n\tindented\n\n<!-- 2026-01-02 -->\nno final newline"
    if not writable(kind):
        with pytest.raises(MemoryBackendError) as err:
            backend.write(text)
        assert err.value.code == "READ_ONLY"
        assert on_disk(project) is None
        return
    backend.write(text)
    assert backend.read() == text
    backend.write(text + "\n")
    assert backend.read() == text + "\n"


def test_round_trip_of_the_real_fusion_memory(kind: str, project: Path):
    real = REAL_MEMORY.read_bytes()
    b, cfg = make(kind)
    if not writable(kind):
        (project / ".fusion").mkdir()
        shutil.copyfile(REAL_MEMORY, project / ".fusion" / "memory.md")
    b.initialize(cfg, project)
    try:
        if writable(kind):
            b.write(real.decode("utf-8"))
        assert b.read().encode("utf-8") == real
        if kind in ("file", "sqlite", "hybrid", "hybrid-keyword-only", "postgres"):
            assert on_disk(project) == real  # the file (or the sqlite mirror) holds the same bytes
    finally:
        b.shutdown()
    b2, _ = make(kind)
    b2.initialize(cfg, project)
    try:
        assert b2.read().encode("utf-8") == real
    finally:
        b2.shutdown()


def test_one_mebibyte_limit(kind: str, backend: MemoryBackend, project: Path):
    if not writable(kind):
        with pytest.raises(MemoryBackendError) as err:
            backend.write(big_content(MAX_FILE_SIZE + 1))
        assert err.value.code == "READ_ONLY"
        return
    backend.write("- before\n")
    before_disk = on_disk(project)
    with pytest.raises(MemoryBackendError) as err:
        backend.write(big_content(MAX_FILE_SIZE + 1))
    assert err.value.code == "QUOTA_EXCEEDED"
    assert "1,048,577" in str(err.value) and "1,048,576" in str(err.value)
    assert backend.read() == "- before\n"
    assert on_disk(project) == before_disk
    exact = big_content(MAX_FILE_SIZE)
    backend.write(exact)
    assert backend.read() == exact


def assert_refused(backend: MemoryBackend, project: Path, **kwargs) -> None:
    """The write-refusal variant: READ_ONLY, and nothing on disk or in history changes."""
    from core.storage.history import versions as history

    before = on_disk(project)
    with pytest.raises(MemoryBackendError) as err:
        backend.write("- refused\n", **kwargs)
    assert err.value.code == "READ_ONLY"
    assert on_disk(project) == before and history.list_versions(project) == []


def test_stale_expected_hash_is_a_conflict(kind: str, backend: MemoryBackend, project: Path):
    if not writable(kind):
        assert_refused(backend, project, expected_hash=fileio.content_hash(""))
        return
    backend.write("- one\n")
    loaded = fileio.content_hash(backend.read())
    backend.write("- two\n", expected_hash=loaded)
    with pytest.raises(MemoryBackendError) as err:
        backend.write("- three\n", expected_hash=loaded)
    assert err.value.code == "CONFLICT"
    assert backend.read() == "- two\n"
    backend.write("- three\n", expected_hash=fileio.content_hash("- two\n"))
    assert backend.read() == "- three\n"


def test_expected_hash_of_empty_content_guards_creation(kind: str, backend: MemoryBackend, project: Path):
    if not writable(kind):
        assert_refused(backend, project, expected_hash="0" * 64)
        return
    backend.write("- first\n", expected_hash=fileio.content_hash(""))
    with pytest.raises(MemoryBackendError) as err:
        backend.write("- again\n", expected_hash=fileio.content_hash(""))
    assert err.value.code == "CONFLICT"


def test_not_initialized_before_initialize(kind: str):
    b, _cfg = make(kind)
    for call in (b.read, lambda: b.write("x")):
        with pytest.raises(MemoryBackendError) as err:
            call()
        assert err.value.code == "NOT_INITIALIZED"
    if b.has_capability("search"):
        with pytest.raises(MemoryBackendError) as err:
            b.search("x")
        assert err.value.code == "NOT_INITIALIZED"


def test_capability_negotiation(kind: str, backend: MemoryBackend):
    caps = get_backend_capabilities(backend)
    assert caps == EXPECTED_CAPS[kind]
    for cap in ("read", "write", "search", "insights", "transactions"):
        assert backend.has_capability(cap) == (cap in caps)
        if cap in caps:
            require_capability(backend, cap)
        else:
            with pytest.raises(MemoryBackendError) as err:
                require_capability(backend, cap)
            assert err.value.code == "CAPABILITY_UNSUPPORTED"
    if "search" not in caps:
        with pytest.raises(MemoryBackendError) as err:
            backend.search("anything")
        assert err.value.code == "CAPABILITY_UNSUPPORTED"
    info = type(backend).describe()
    assert info.id == backend.id and info.capabilities == caps


def test_search_results_follow_the_contract(kind: str, backend: MemoryBackend):
    if not backend.has_capability("search"):
        with pytest.raises(MemoryBackendError) as err:
            backend.search("PgBouncer", MemorySearchOptions(mode="keyword"))
        assert err.value.code == "CAPABILITY_UNSUPPORTED"
        return
    backend.write("# Project Memory\n\n## Pitfalls\n\n- PgBouncer drops LISTEN in transaction mode\n"
                  "- Clock skew breaks leases\n")
    for mode in ("keyword", "semantic", "hybrid"):
        results = backend.search("PgBouncer LISTEN", MemorySearchOptions(limit=5, mode=mode))
        assert results, mode
        top = results[0]
        assert top.file == ".fusion/memory.md" and top.section == "Pitfalls" and top.line_number == 5
        assert all(0.0 <= r.score <= 1.0 for r in results)
    assert backend.search("PgBouncer", MemorySearchOptions(limit=1, offset=1, mode="keyword")) == []


def test_shutdown_then_initialize_again(kind: str, project: Path):
    b, cfg = make(kind)
    if not writable(kind):
        (project / ".fusion").mkdir()
        (project / ".fusion" / "memory.md").write_text("- kept\n", encoding="utf-8")
    b.initialize(cfg, project)
    if writable(kind):
        b.write("- kept\n")
    b.shutdown()
    assert not b.initialized
    with pytest.raises(MemoryBackendError) as err:
        b.read()
    assert err.value.code == "NOT_INITIALIZED"
    b.shutdown()  # a second shutdown is harmless
    b.initialize(cfg, project)
    try:
        assert b.read() == "- kept\n"
    finally:
        b.shutdown()


def test_every_replacing_write_keeps_the_previous_version(kind: str, backend: MemoryBackend, project: Path):

    if not writable(kind):
        assert_refused(backend, project, source="editor")
        return
    backend.write("- v1\n", source="editor")
    backend.write("- v2\n", source="editor")
    assert "- v1\n" in versions(backend, project)
