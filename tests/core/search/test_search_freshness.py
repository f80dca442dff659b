"""The index follows the documents without a stat per file: inotify events after the first search."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from core.backends import MemorySearchOptions
from core.backends.hybrid import HybridMemoryBackend
from core.search import corpus, service
from core.search.embeddings import Embedder

KEYWORD = MemorySearchOptions(limit=20, mode="keyword")
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def layered(tmp_path: Path):
    root = tmp_path / "p"
    write(root / ".fusion" / "memory" / "MEMORY.md", "# Project Memory\n\n## Decisions\n\n- walrus decision\n")
    for day in range(1, 31):
        write(root / ".fusion" / "memory" / f"2026-01-{day:02d}.md", f"# Daily Memory\n\n- note {day}\n")
    backend = HybridMemoryBackend(embedder=Embedder(installed=lambda: False))
    backend.initialize({}, root)
    yield root, backend
    backend.shutdown()


def files(results) -> list[tuple[str, int]]:
    return sorted((r.file, r.line_number) for r in results)


def test_after_the_first_searches_nothing_is_statted_when_nothing_changed(layered, monkeypatch):
    root, backend = layered
    assert files(backend.search("walrus", KEYWORD)) == [(".fusion/memory/MEMORY.md", 5)]
    backend.search("walrus", KEYWORD)  # the second search starts the watcher
    calls: list[int] = []
    real = corpus.stat_files

    def counted(r, paths):
        calls.append(len(paths))
        return real(r, paths)

    monkeypatch.setattr(service, "stat_files", counted)
    for _ in range(5):
        assert files(backend.search("walrus", KEYWORD)) == [(".fusion/memory/MEMORY.md", 5)]
    assert calls == []
    # An agent appends to one daily note, as Fusion's own tool does (no lock, no rename).
    with open(root / ".fusion" / "memory" / "2026-01-07.md", "a", encoding="utf-8") as fh:
        fh.write("\n- a walrus passed by\n")
    assert files(backend.search("walrus", KEYWORD)) == [(".fusion/memory/2026-01-07.md", 5),
                                                         (".fusion/memory/MEMORY.md", 5)]
    assert calls == [1]  # only the file that changed


def test_created_deleted_renamed_and_new_agent_files_are_seen_at_once(layered):
    root, backend = layered
    backend.search("walrus", KEYWORD)
    backend.search("walrus", KEYWORD)
    write(root / ".fusion" / "memory" / "DREAMS.md", "# Memory Dreams\n\n- dreamt of a walrus\n")
    assert (".fusion/memory/DREAMS.md", 3) in files(backend.search("walrus", KEYWORD))
    (root / ".fusion" / "memory" / "DREAMS.md").unlink()
    assert files(backend.search("walrus", KEYWORD)) == [(".fusion/memory/MEMORY.md", 5)]
    write(root / ".fusion" / "agent-memory" / "agent-3" / "MEMORY.md", "# Agent\n\n- the agent's walrus\n")
    assert (".fusion/agent-memory/agent-3/MEMORY.md", 3) in files(backend.search("walrus", KEYWORD))
    write(root / ".fusion" / "agent-memory" / "agent-3" / "2026-02-01.md", "- a later walrus\n")
    assert (".fusion/agent-memory/agent-3/2026-02-01.md", 1) in files(backend.search("walrus", KEYWORD))
    tmp = root / ".fusion" / "memory" / ".MEMORY.md.tmp"
    tmp.write_text("# Project Memory\n\n- replaced, no sea mammal\n", encoding="utf-8")
    os.replace(tmp, root / ".fusion" / "memory" / "MEMORY.md")  # an atomic save by another editor
    assert (".fusion/memory/MEMORY.md", 5) not in files(backend.search("walrus", KEYWORD))
    assert files(backend.search("mammal", KEYWORD)) == [(".fusion/memory/MEMORY.md", 3)]


def test_a_layout_change_is_seen(tmp_path: Path):
    root = tmp_path / "p"
    write(root / ".fusion" / "memory.md", "- seed walrus\n")
    backend = HybridMemoryBackend(embedder=Embedder(installed=lambda: False))
    backend.initialize({}, root)
    try:
        backend.search("walrus", KEYWORD)
        backend.search("walrus", KEYWORD)
        write(root / ".fusion" / "memory" / "MEMORY.md", "- layered walrus\n")  # the project turns layered
        assert files(backend.search("walrus", KEYWORD)) == [(".fusion/memory.md", 1), (".fusion/memory/MEMORY.md", 1)]
    finally:
        backend.shutdown()


def test_a_keyword_search_never_loads_the_embedding_model(tmp_path: Path):
    loads: list[int] = []

    def factory():
        loads.append(1)
        raise AssertionError("the model was loaded")

    root = tmp_path / "p"
    write(root / ".fusion" / "memory.md", "- walrus one\n")
    backend = HybridMemoryBackend(embedder=Embedder(factory=factory))
    backend.initialize({}, root)
    try:
        for i in range(3):
            write(root / ".fusion" / "memory-archive.md", f"- walrus archived {i}\n")
            assert backend.search("walrus", KEYWORD)
        assert loads == []
    finally:
        backend.shutdown()
