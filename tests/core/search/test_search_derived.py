"""Search on every backend: memdesk's derived index over all documents; exact all-words hits first."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.backends import MemorySearchOptions
from core.project import Project
from core.search import derived
from core.search.db import Database
from core.search.index import SearchIndex

KEYWORD = MemorySearchOptions(limit=20, mode="keyword")


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(derived.CACHE_DIR_ENV, str(folder))
    yield folder
    derived.close_all()


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            out[str(p.relative_to(root))] = (p.lstat().st_mtime_ns, p.lstat().st_size)
    return out


def test_the_file_backend_searches_every_document_of_a_layered_project(layered_project: Path, cache: Path):
    before = snapshot(layered_project)
    project = Project(layered_project)
    assert not project.backend.has_capability("search") or project.backend.id == "qmd"
    docs = {d.path for d in project.documents()}
    texts = {p: (layered_project / p).read_text(encoding="utf-8") for p in docs}
    found_docs = set()
    for path, text in texts.items():
        words = [w for w in text.split() if w.isalpha() and len(w) > 6][:2]
        if not words:
            continue
        results = project.search(" ".join(words), KEYWORD)
        assert results, path
        assert all(r.file in docs and r.line_number and r.line_number > 0 for r in results)
        found_docs |= {r.file for r in results}
    assert any(p.startswith(".fusion/agent-memory/") for p in found_docs)
    assert any(p.rsplit("/", 1)[-1][:4].isdigit() for p in found_docs)  # a daily note
    assert snapshot(layered_project) == before  # nothing created or touched in the project
    assert list(cache.rglob("*.db"))  # the index lives in the cache


def test_a_seed_project_on_the_file_backend(sample_project: Path):
    project = Project(sample_project)
    assert project.backend.id == "file" and not project.backend.has_capability("search")
    results = project.search("PgBouncer LISTEN", MemorySearchOptions(limit=3, mode="hybrid"))
    assert results and results[0].file in {".fusion/memory.md", ".fusion/memory-insights.md"}
    first = results[0]
    assert first.highlights and all(first.content[s] == "«" and first.content[e - 1] == "»"
                                    for s, e in first.highlights)
    line = (sample_project / first.file).read_text(encoding="utf-8").splitlines()[first.line_number - 1]
    assert "PgBouncer" in line or "LISTEN" in line


def index_of(tmp_path: Path, entries: list[str]) -> SearchIndex:
    index = SearchIndex(Database(tmp_path / "i.db", "test"))
    text = "## Notes\n\n" + "\n".join(f"- {e}" for e in entries) + "\n"
    index.sync_document("m.md", text, "h")
    return index


def test_exact_all_words_hits_come_before_stemmed_ones_and_any_word_ones(tmp_path: Path):
    from core.search.snippet import exact_matcher

    entries = ["deploys deploying deployed slowly slows slowed",  # stems only, and more of them (BM25 likes it)
               "deploy is slow",  # the exact words
               "slow",  # one word only
               "the deploy step"]
    index = index_of(tmp_path, entries)
    terms = ["deploy", "slow"]
    hits, all_words = index.ranked(terms, 10, exact_matcher(terms))
    texts = [h.text for h in hits[:all_words]]
    assert texts == ["- deploy is slow", "- deploys deploying deployed slowly slows slowed"]
    assert all_words == 2 and len(hits) == 4  # then the entries holding one of the words
    plain, _n = index.ranked(terms, 10)
    assert {h.id for h in plain} == {h.id for h in hits}


def test_exact_matcher():
    from core.search.snippet import exact_matcher

    holds = exact_matcher(["lease", "clock drift"])
    assert holds("The lease uses the clock drift bound", None)
    assert not holds("The leases use the clock drift bound", None)
    assert not holds("The lease uses the clock, drifting", None)
    assert holds("a lease", "clock drift")  # the section counts too
