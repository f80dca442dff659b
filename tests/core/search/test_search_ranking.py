"""Keyword ranking and the per-search work kept small: all words first, then the selective words, then
the common ones; documents, mirror and folders checked cheaply but never stale."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from core.backends import MemorySearchOptions, mirror_ledger
from core.backends.hybrid import HybridMemoryBackend
from core.backends.sqlite import SqliteMemoryBackend
from core.search import index as index_module
from core.search.corpus import stat_files
from core.search.db import Database
from core.search.embeddings import Embedder
from core.search.fts import join_terms, query_terms
from core.search.index import KeywordHit, SearchIndex
from core.search.relevance import load_labels
from core.search.service import RACY_NS, SearchService
from core.search.snippet import exact_matcher, make_snippet
from core.storage import fileio
from tests.conftest import REPO, SAMPLE

KEYWORD = MemorySearchOptions(limit=10, mode="keyword")


@pytest.fixture
def index(tmp_path: Path):
    db = Database(tmp_path / "search.db", "test")
    yield SearchIndex(db)
    db.close()


def all_then_any(idx: SearchIndex, terms: list[str], limit: int) -> list[int]:
    """The ranking before the selective/common split: all words by BM25, then any word by BM25."""
    hits = idx.keyword(join_terms(terms, "AND"), limit)
    seen = {h.id for h in hits}
    hits += [h for h in idx.keyword(join_terms(terms, "OR"), 2 * limit) if h.id not in seen]
    return [h.id for h in hits[:limit]]


def sync(idx: SearchIndex, lines: list[str], path: str = ".fusion/memory.md") -> dict[str, int]:
    """Index one bullet per line; return each line's entry id."""
    text = "".join(f"- {line}\n" for line in lines)
    idx.sync_document(path, text, str(hash(text)))
    return {e.text[2:]: e.id for e in idx.all_entries(path)}


def test_on_a_small_index_every_word_is_selective_and_the_order_is_unchanged(index: SearchIndex):
    for rel in (".fusion/memory.md", ".fusion/memory-insights.md"):
        text = (SAMPLE / rel).read_text(encoding="utf-8")
        index.sync_document(rel, text, str(hash(text)))
    for label in load_labels(REPO / "tests" / "data" / "search_labels.json"):
        terms = query_terms(label["query"])
        for limit in (5, 10, 40):
            assert [h.id for h in index.ranked(terms, limit)[0]] == all_then_any(index, terms, limit), label["query"]


def test_common_words_are_scored_only_when_the_selective_ones_run_out(index: SearchIndex, monkeypatch):
    monkeypatch.setattr(index_module, "FILL_BUDGET", 4)
    ids = sync(index, ["rare rarer common", "rare rarer thing", "rare other thing"] +
               [f"common filler {n}" for n in range(8)])
    asked: list[str] = []

    def spying(method):
        def spy(match: str, limit: int, *args) -> list[KeywordHit]:
            asked.append(match)
            return method(match, limit, *args)
        return spy

    for name in ("fill", "keyword_sample"):  # every fill ranked() can make (the all-words query is its own)
        monkeypatch.setattr(index, name, spying(getattr(index, name)))
    # Two words fill three results: the common word is never matched on its own.
    hits, all_words = index.ranked(["rare", "common"], 3)
    assert all_words == 1 and hits[0].id == ids["rare rarer common"]
    assert {h.id for h in hits[1:]} == {ids["rare rarer thing"], ids["rare other thing"]}
    assert asked == ['"rare"']
    # When the selective words run out, entries holding only the common word fill the page.
    asked.clear()
    hits, all_words = index.ranked(["rare", "rarer", "common"], 5)
    assert all_words == 1 and len(hits) == 5 and len({h.id for h in hits}) == 5
    assert [h.id for h in hits[:3]] == [ids["rare rarer common"], ids["rare rarer thing"], ids["rare other thing"]]
    assert all(h.id in {ids[f"common filler {n}"] for n in range(8)} for h in hits[3:])
    assert asked == ['"rarer" OR "rare"', '("common") NOT ("rarer" OR "rare")']


def test_a_word_no_entry_holds_is_left_out_of_the_fill(index: SearchIndex):
    ids = sync(index, ["walrus one", "walrus two", "other"])
    hits, all_words = index.ranked(["walrus", "zzzabsent"], 10)
    assert all_words == 0 and {h.id for h in hits} == {ids["walrus one"], ids["walrus two"]}
    assert index.ranked(["zzzabsent", "zzzgone"], 10) == ([], 0)


def test_documents_are_kept_between_searches_but_never_stale(index: SearchIndex, tmp_path: Path):
    sync(index, ["first"])
    assert index.docs()[".fusion/memory.md"].hash == index.docs()[".fusion/memory.md"].hash
    other = sqlite3.connect(tmp_path / "search.db")
    other.execute("UPDATE search_docs SET hash = 'changed elsewhere'")
    other.commit()
    other.close()
    assert index.docs()[".fusion/memory.md"].hash == "changed elsewhere"  # another connection committed
    with pytest.raises(RuntimeError), index.db.transaction():
        sync(index, ["second"], ".fusion/memory-archive.md")
        assert set(index.docs()) == {".fusion/memory.md", ".fusion/memory-archive.md"}
        raise RuntimeError("roll back")
    assert set(index.docs()) == {".fusion/memory.md"}
    sync(index, ["third"], ".fusion/memory-insights.md")
    assert set(index.docs()) == {".fusion/memory.md", ".fusion/memory-insights.md"}


def test_a_refresh_that_indexes_several_files_optimizes_once(project: Path, monkeypatch):
    backend = HybridMemoryBackend(embedder=Embedder(installed=lambda: False))
    backend.initialize({}, project)
    try:
        index = backend.search_service.index  # type: ignore[union-attr]
        calls: list[int] = []
        optimize = index.optimize

        def counted() -> None:
            calls.append(1)
            optimize()

        monkeypatch.setattr(index, "optimize", counted)
        for day in (1, 2, 3):
            path = project / ".fusion" / "memory" / f"2026-01-0{day}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"- walrus note {day}\n", encoding="utf-8")
        assert len(backend.search("walrus", KEYWORD)) == 3 and len(calls) == 1
        assert len(backend.search("walrus", KEYWORD)) == 3 and len(calls) == 1  # nothing changed
        (project / ".fusion" / "memory" / "2026-01-02.md").unlink()
        assert len(backend.search("walrus", KEYWORD)) == 2 and len(calls) == 2  # removed terms are purged
        backend.search_service.rebuild()  # type: ignore[union-attr]
        assert len(calls) == 3  # a rebuild is one transaction, optimized once
    finally:
        backend.shutdown()


def test_a_symlinked_folder_or_file_is_searched_only_when_it_stays_in_the_project(project: Path, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "2026-01-01.md").write_text("- walrus outside\n", encoding="utf-8")
    (outside / "archive.md").write_text("- walrus archived outside\n", encoding="utf-8")
    (project / ".fusion").mkdir()
    (project / ".fusion" / "memory").symlink_to(outside)
    assert stat_files(project, [".fusion/memory/2026-01-01.md"]) == {".fusion/memory/2026-01-01.md": None}
    (project / ".fusion" / "memory-archive.md").symlink_to(outside / "archive.md")
    backend = HybridMemoryBackend(embedder=Embedder(installed=lambda: False))
    backend.initialize({}, project)
    try:
        assert backend.search("walrus", KEYWORD) == []
        inside = project / "notes"
        inside.mkdir()
        (inside / "archive.md").write_text("- walrus archived inside\n", encoding="utf-8")
        (project / ".fusion" / "memory-archive.md").unlink()
        (project / ".fusion" / "memory-archive.md").symlink_to(inside / "archive.md")
        assert [r.content for r in backend.search("walrus", KEYWORD)] == ["- «walrus» archived inside"]
        # The link's target changes where no watched folder sees it: still found on the next search.
        (inside / "archive.md").write_text("- walrus archived inside, edited\n", encoding="utf-8")
        assert [r.content for r in backend.search("walrus", KEYWORD)] == ["- «walrus» archived inside, edited"]
    finally:
        backend.shutdown()
    assert stat_files(project, ["../outside/2026-01-01.md"]) == {"../outside/2026-01-01.md": None}


def test_the_mirror_is_read_again_only_when_it_or_the_database_changed(project: Path, monkeypatch):
    mirror = project / ".fusion" / "memory.md"
    mirror.parent.mkdir()
    mirror.write_text("- walrus first\n", encoding="utf-8")
    old = time.time_ns() - 10_000_000_000
    os.utime(mirror, ns=(old, old))  # old enough for its timestamp to be trusted
    backend = SqliteMemoryBackend()
    backend.initialize({}, project)

    def other_connection(sql: str, *args: object) -> None:
        conn = sqlite3.connect(backend.database_path)
        conn.execute(sql, args)
        conn.commit()
        conn.close()

    other_connection("UPDATE memory SET updated_ns = ?", old - 10_000_000_000)  # the edits below are newer
    # The look trusts the file's change time (which utime cannot put back), so let it age past the window.
    time.sleep(RACY_NS / 1e9 + 0.2)
    reads: list[Path] = []  # reads of the mirror: the mirror ledger's look opens and reads the whole file
    look = mirror_ledger.Ledger.look

    @contextmanager
    def spy(ledger: mirror_ledger.Ledger) -> Iterator[mirror_ledger.Look]:
        with look(ledger) as seen:
            if seen.fd is not None and ledger.path() == mirror:
                reads.append(mirror)
            yield seen

    monkeypatch.setattr(mirror_ledger.Ledger, "look", spy)
    try:
        assert len(backend.search("walrus", KEYWORD)) == 1 and len(reads) == 1
        assert len(backend.search("walrus", KEYWORD)) == 1 and len(reads) == 1  # unchanged: not read again
        # An outside edit (a new size and time) is read and imported on the next search.
        mirror.write_text("- walrus first\n- walrus second\n", encoding="utf-8")
        os.utime(mirror, ns=(old + 1, old + 1))
        assert len(backend.search("walrus", KEYWORD)) == 2 and len(reads) == 2
        # Another connection changes the content: the stale mirror is rewritten from the database.
        other_connection("UPDATE memory SET content = ?, hash = ?", "- narwhal\n", fileio.content_hash("- narwhal\n"))
        assert backend.read() == "- narwhal\n" and mirror.read_text(encoding="utf-8") == "- narwhal\n"
        # A file modified moments ago is always read (its timestamp may not have ticked yet).
        backend.write("- walrus third\n")
        mirror.write_text("- walrus fourth, outside\n", encoding="utf-8")
        assert [r.content for r in backend.search("fourth", KEYWORD)] == ["- walrus «fourth», outside"]
        count = len(reads)
        backend.search("fourth", KEYWORD)
        assert len(reads) == count + 1
    finally:
        backend.shutdown()


def test_snippets_survive_letters_whose_lower_case_is_longer():
    assert make_snippet("İstanbul tests TESTING", ["tests"]) == "İstanbul «tests» «TESTING»"
    assert make_snippet("İstanbul tests", ["tests"], "unicode61") == "İstanbul «tests»"
    assert make_snippet("Go gopher", ["go"]) == "«Go» gopher"


def keyword_service(project: Path, lines: list[str], tmp_path: Path) -> SearchService:
    """A keyword-only search service over one memory file of ``lines`` (one bullet each)."""
    memory = project / ".fusion" / "memory.md"
    memory.parent.mkdir(parents=True, exist_ok=True)
    memory.write_text("## Notes\n\n" + "".join(f"- {line}\n" for line in lines), encoding="utf-8")
    return SearchService(project, Database(tmp_path / "search.db", "test"), embedder=None)


def test_a_page_is_exact_all_words_hits_then_stemmed_ones_then_any_word_ones(project: Path, tmp_path: Path):
    lines = ["deploys deploying deployed slowly slows slowed", "deploy is slow", "deploy slow slow deploy",
             "slow", "the deploy step", "nothing to see"]
    service = keyword_service(project, lines, tmp_path)
    try:
        page = service.search("deploy slow", MemorySearchOptions(limit=10, mode="keyword"))
        kinds = [(r.scores["all_words"], r.scores["exact"]) for r in page]
        assert kinds == [(1.0, 1.0), (1.0, 1.0), (1.0, 0.0), (0.0, 0.0), (0.0, 0.0)]
        assert {r.content for r in page[:2]} == {"- «deploy» is «slow»", "- «deploy» «slow» «slow» «deploy»"}
        assert page[2].content == "- «deploys» «deploying» «deployed» «slowly» «slows» «slowed»"
        assert [r.score for r in page] == sorted((r.score for r in page), reverse=True)
        # A later page is the same ranking, cut further on.
        later = service.search("deploy slow", MemorySearchOptions(limit=3, offset=2, mode="keyword"))
        assert [(r.content, r.scores) for r in later] == [(r.content, r.scores) for r in page[2:5]]
    finally:
        service.close()


def test_highlights_land_on_the_matched_characters_in_any_script(project: Path, tmp_path: Path):
    lines = ["Über die Straße: naïve café owners fetch quickly", "İstanbul tests TESTING the naïve ones",
             "日本語 テスト tests 中文"]
    service = keyword_service(project, lines, tmp_path)
    try:
        for query, marked in (("naïve café", {"naïve", "café"}), ("Straße", {"Straße"}), ("tests", {"tests", "TESTING"}),
                              ("über fetching", {"Über", "fetch"})):
            page = service.search(query, MemorySearchOptions(limit=10, mode="keyword"))
            assert page, query
            found = set()
            for r in page:
                for start, end in r.highlights:
                    assert r.content[start] == "«" and r.content[end - 1] == "»"
                    found.add(r.content[start + 1:end - 1])
                assert r.content.count("«") == len(r.highlights)
            assert found == marked, query
    finally:
        service.close()


def test_a_word_two_query_words_start_is_marked_once():
    assert make_snippet("gopher and go", ["go", "gopher"]) == "«gopher» and «go»"
    assert make_snippet("planets planet plan", ["plan", "planets"]) == "«planets» «planet» «plan»"


def test_the_exact_test_reads_whole_words_of_the_text_then_the_section():
    holds = exact_matcher(["deploy", "slow"])
    assert holds("deploy is slow", None) and holds("Deploy, SLOW!", None)
    assert not holds("deploys are slower", None) and not holds("redeploy slow", None)
    assert holds("deploy it", "Slow paths") and not holds("deploy it", "slowly")
    assert not holds("the_deploy slow", None)  # an underscore joins words


def test_a_long_query_is_ranked_and_filled(index: SearchIndex):
    words = [f"word{n}" for n in range(14)]
    ids = sync(index, [" ".join(words), "word3 word7", "word12 alone", "nothing here"])
    hits, all_words = index.ranked(words, 10)
    assert all_words == 1 and hits[0].id == ids[" ".join(words)]
    assert {h.id for h in hits[1:]} == {ids["word3 word7"], ids["word12 alone"]}
    assert all(h.text is not None and h.path == ".fusion/memory.md" for h in hits)
