"""Rebuilding derived indexes from the canonical content, and verifying every entry can be found."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.backends import MemoryBackend, MemorySearchOptions
from core.backends.file import FileMemoryBackend
from core.project.reindex import reindex
from tests.conftest import REAL_MEMORY, SAMPLE
from tests.core.searching import SEARCHING_KINDS, make_searching_backend


@pytest.fixture(params=SEARCHING_KINDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path):
    root = tmp_path / "p"
    shutil.copytree(SAMPLE, root)
    shutil.copyfile(REAL_MEMORY, root / ".fusion" / "memory-archive.md")
    b = make_searching_backend(request.param)
    b.initialize({}, root)
    yield b
    b.shutdown()


def test_rebuild_and_verify_the_real_memory(backend: MemoryBackend):
    progress: list[int] = []
    report = reindex(backend, verify=True, progress=lambda p, _m: progress.append(p))
    assert report.indexed and report.ok, report.problems[:5]
    assert report.files == 3 and report.entries > 700
    assert report.verify is not None and report.verify.keyword_checked > 700
    assert progress[-1] == 100
    semantic = backend.search_service.provider() is not None  # type: ignore[attr-defined]
    assert report.semantic == semantic
    assert (report.vectors > 0) == semantic and (report.verify.vectors_checked > 0) == semantic
    assert report.to_json()["ok"] is True


def test_rebuild_repairs_a_damaged_index(backend: MemoryBackend):
    backend.search("claim")  # index everything
    db = backend.search_service.db  # type: ignore[attr-defined]
    with db.transaction() as c:
        c.execute("DELETE FROM search_entries WHERE id IN (SELECT id FROM search_entries LIMIT 5)")
        c.execute("UPDATE search_entries SET line = line + 1000 WHERE id IN (SELECT id FROM search_entries LIMIT 1)")
    from core.search.verify import verify_index

    damaged = verify_index(backend.search_service)  # type: ignore[attr-defined]
    assert not damaged.ok and any("missing from the index" in p for p in damaged.problems)
    report = reindex(backend, verify=True)
    assert report.ok, report.problems[:5]
    assert backend.search("SKIP LOCKED", MemorySearchOptions(mode="keyword"))


def test_cancel_stops_the_rebuild(backend: MemoryBackend):
    with pytest.raises(InterruptedError):
        reindex(backend, cancelled=lambda: True)


def test_backends_without_an_index_rebuild_the_derived_one(project: Path, tmp_path: Path, monkeypatch):
    from core.search import derived

    monkeypatch.setenv(derived.CACHE_DIR_ENV, str(tmp_path / "cache"))
    (project / ".fusion").mkdir()
    (project / ".fusion" / "memory.md").write_text("- one walrus\n- two walruses\n", encoding="utf-8")
    b = FileMemoryBackend()
    b.initialize({}, project)
    try:
        report = reindex(b, verify=True)
        assert report.indexed and report.ok and report.entries == 2 and "derived" in report.backend_id
    finally:
        derived.close_all()
