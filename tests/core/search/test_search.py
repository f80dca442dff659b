"""Search: every searched file named in results, outside changes picked up, query parsing, fusion, MMR."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from core.backends import MemorySearchOptions
from core.backends.hybrid import HybridMemoryBackend
from core.search import fusion
from core.search.embeddings import Embedder, semantic_installed
from core.search.fts import build_match, query_terms
from tests.conftest import SAMPLE


def keyword_only() -> HybridMemoryBackend:
    return HybridMemoryBackend(embedder=Embedder(installed=lambda: False))


@pytest.fixture
def hybrid(sample_project: Path):
    b = keyword_only()
    b.initialize({}, sample_project)
    yield b
    b.shutdown()


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_every_searched_file_is_named_with_section_and_line(hybrid: HybridMemoryBackend, sample_project: Path):
    fusion_dir = sample_project / ".fusion"
    write(fusion_dir / "memory-archive.md", "# Memory Archive\n\n## Old\n\n- archived walrus note\n")
    write(fusion_dir / "memory" / "MEMORY.md", "# Long term\n\n## Facts\n\n- long-term walrus fact\n")
    write(fusion_dir / "memory" / "2026-11-02.md", "## Daily\n\nA daily walrus paragraph.\n")
    write(fusion_dir / "memory" / "DREAMS.md", "## Dreams\n\n- dreamt of a walrus\n")
    write(fusion_dir / "memory" / "notes.md", "- walrus in a file that is not searched\n")
    write(fusion_dir / "agent-memory" / "agent-7" / "2026-11-01.md", "## Notes\n\n- the agent saw a walrus\n")
    write(fusion_dir / "memory" / "memory-insights.md", "# Memory Insights\n\n## Patterns\n\n- walrus insight\n")
    write(fusion_dir / "memory.md", "## Legacy\n\n- legacy walrus\n")  # now layered: the legacy file
    results = hybrid.search("walrus", MemorySearchOptions(limit=10, mode="keyword"))
    found = {(r.file, r.line_number, r.section) for r in results}
    assert found == {
        (".fusion/memory-archive.md", 5, "Old"),
        (".fusion/memory/MEMORY.md", 5, "Facts"),
        (".fusion/memory/2026-11-02.md", 3, "Daily"),
        (".fusion/memory/DREAMS.md", 3, "Dreams"),
        (".fusion/agent-memory/agent-7/2026-11-01.md", 3, "Notes"),
        (".fusion/memory/memory-insights.md", 5, "Patterns"),
        (".fusion/memory.md", 3, "Legacy"),
    }
    # The seed layout's insights file is not a document of a layered project.
    assert not hybrid.search("Elect a single scheduler leader", MemorySearchOptions(limit=3, mode="keyword"))


def test_results_carry_snippet_score_and_explain(hybrid: HybridMemoryBackend):
    results = hybrid.search("PgBouncer LISTEN", MemorySearchOptions(limit=5, mode="keyword"))
    assert results[0].score == 1.0
    assert all(0 <= r.score <= 1 for r in results)
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    assert "«PgBouncer»" in results[0].content or "«LISTEN»" in results[0].content
    assert set(results[0].scores) >= {"keyword", "fused", "bm25"}


def test_paging(hybrid: HybridMemoryBackend):
    everything = hybrid.search("job", MemorySearchOptions(limit=6, mode="keyword"))
    page2 = hybrid.search("job", MemorySearchOptions(limit=3, offset=3, mode="keyword"))
    assert [(r.file, r.line_number) for r in page2] == [(r.file, r.line_number) for r in everything[3:]]


def test_outside_changes_are_picked_up_on_search_and_read(hybrid: HybridMemoryBackend, sample_project: Path):
    memory = sample_project / ".fusion" / "memory.md"
    assert hybrid.search("narwhal") == []
    with memory.open("a", encoding="utf-8") as fh:  # an agent appends while memdesk runs
        fh.write("\n\n<!-- 2026-11-30 -->\nThe narwhal migration finished.")
    hit = hybrid.search("narwhal", MemorySearchOptions(mode="keyword"))
    assert hit[0].file == ".fusion/memory.md" and hit[0].line_number == len(memory.read_text().splitlines())
    # A same-size rewrite within the same timestamp tick is still seen (content hash, racy window).
    text = memory.read_text(encoding="utf-8").replace("narwhal", "walrusz")
    memory.write_text(text, encoding="utf-8")
    assert hybrid.search("narwhal", MemorySearchOptions(mode="keyword")) == []
    assert hybrid.search("walrusz", MemorySearchOptions(mode="keyword"))
    os.utime(memory, ns=(0, 0))
    memory.write_text(text.replace("walrusz", "dugongs"), encoding="utf-8")
    hybrid.read()
    docs = hybrid.search_service.index.docs()  # type: ignore[union-attr]
    assert [e.text for e in hybrid.search_service.index.all_entries(".fusion/memory.md")  # type: ignore[union-attr]
            if "dugongs" in e.text]
    assert docs[".fusion/memory.md"].hash


def test_unreadable_file_is_skipped_not_fatal(hybrid: HybridMemoryBackend, sample_project: Path, caplog):
    (sample_project / ".fusion" / "memory-archive.md").write_bytes(b"- bad \xff byte walrus\n")
    assert hybrid.search("PgBouncer", MemorySearchOptions(mode="keyword"))
    assert "not indexing .fusion/memory-archive.md" in caplog.text


def test_keyword_only_says_so(sample_project: Path):
    b = keyword_only()
    assert b.status_note() and b.status_note().startswith("keyword-only")
    b.initialize({}, sample_project)
    try:
        results = b.search("claim jobs", MemorySearchOptions(mode="semantic"))
        assert results and all("vector" not in r.scores for r in results)
        assert "keyword-only" in (b.search_note("semantic") or "")
        assert "memdesk[semantic]" in (b.search_note("hybrid") or "")
        assert b.search_note("keyword") is None
    finally:
        b.shutdown()
    off = HybridMemoryBackend()
    off.initialize({"semantic": False}, sample_project)
    try:
        assert "switched off" in (off.status_note() or "")
        assert "switched off" in (off.search_note("hybrid") or "")
    finally:
        off.shutdown()


def test_tokenizer_setting_rebuilds_the_fts_table(sample_project: Path):
    b = keyword_only()
    b.initialize({"tokenizer": "unicode61"}, sample_project)
    try:
        assert b.search("claimed", MemorySearchOptions(mode="keyword")) == []  # no stemming
    finally:
        b.shutdown()
    b.initialize({"tokenizer": "porter"}, sample_project)
    try:
        assert b.search("claimed", MemorySearchOptions(mode="keyword"))  # claimed -> claim
    finally:
        b.shutdown()
    b.initialize({"tokenizer": "trigram"}, sample_project)
    try:
        assert b.search("ouncer", MemorySearchOptions(mode="keyword"))[0].content.count("«") >= 1
    finally:
        b.shutdown()


def test_invalid_setting_is_invalid_config(project: Path):
    from core.errors import MemoryBackendError

    with pytest.raises(MemoryBackendError) as err:
        HybridMemoryBackend().initialize({"tokenizer": "klingon"}, project)
    assert err.value.code == "INVALID_CONFIG" and "tokenizer" in str(err.value)


def test_query_parsing_is_safe():
    assert query_terms("How do the workers claim jobs?") == ["workers", "claim", "jobs"]
    assert query_terms("the") == ["the"]
    assert query_terms('"skip locked" dequeue') == ["skip locked", "dequeue"]
    assert query_terms("ab cde", "trigram") == ["cde"]
    assert build_match("   ") is None
    assert build_match('x"y') == '"x" OR "y"'
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    for nasty in ['NEAR(a b)', 'x*', '-x', 'a AND OR', '"', "col:x", "^x", "(x", "x)"]:
        match = build_match(nasty)
        if match:
            conn.execute("SELECT * FROM t WHERE t MATCH ?", (match,)).fetchall()


def test_fusion_helpers():
    assert fusion.relative({1: 2.0, 2: 1.0, 3: -1.0}) == {1: 1.0, 2: 0.5, 3: 0.0}
    assert fusion.relative({1: 0.0}) == {1: 0.0}
    assert fusion.fuse(1.0, 1.0) == pytest.approx(1.0)
    assert fusion.fuse(0.0, 1.0) == pytest.approx(0.8 / 1.8)
    assert fusion.drop_duplicates([1, 2, 3], {1: "A  b", 2: "a b", 3: "c"}) == [1, 3]


def test_mmr_sinks_near_duplicates():
    np = pytest.importorskip("numpy")
    vecs = np.array([[1, 0, 0], [0.999, 0.0447, 0], [0, 1, 0]], dtype=np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    rel = {10: 1.0, 11: 0.95, 12: 0.6}
    picked = fusion.mmr([10, 11, 12], rel, vecs, 3, lam=0.7)
    assert [p[0] for p in picked] == [10, 12, 11]
    assert [p[0] for p in fusion.mmr([10, 11, 12], rel, vecs, 3, lam=1.0)] == [10, 11, 12]


@pytest.mark.skipif(not semantic_installed(), reason="the semantic extra is not installed")
def test_hybrid_removes_exact_duplicates_and_explains(tmp_path: Path):
    root = tmp_path / "p"
    shutil.copytree(SAMPLE, root)
    b = HybridMemoryBackend()
    b.initialize({}, root)
    try:
        dup = "- Lease renewal happens every leaseMs / 3 through heartbeat()\n"
        write(root / ".fusion" / "memory-archive.md", "## Old\n\n" + dup)
        write(root / ".fusion" / "memory" / "MEMORY.md", "## Facts\n\n" + dup.upper())
        results = b.search("lease renewal heartbeat", MemorySearchOptions(limit=10, mode="hybrid"))
        texts = [" ".join(r.content.replace("«", "").replace("»", "").split()) for r in results]
        assert sum("Lease renewal happens every" in t for t in texts) == 1
        top = results[0]
        assert set(top.scores) >= {"keyword", "vector", "fused", "mmr"}
        assert top.score == pytest.approx(top.scores["fused"], abs=1e-6)
        semantic = b.search("lease renewal heartbeat", MemorySearchOptions(limit=3, mode="semantic"))
        assert semantic and all("vector" in r.scores for r in semantic)
    finally:
        b.shutdown()


def test_snippets_mark_the_query_words():
    from core.search.snippet import make_snippet

    text = "- **Dequeue (TP-31)**: workers claim the oldest job; never claim with a plain SELECT."
    assert make_snippet(text, ["claiming", "jobs"]) == (
        "- **Dequeue (TP-31)**: workers «claim» the oldest «job»; never «claim» with a plain SELECT.")
    assert make_snippet(text, ["claiming"], "unicode61").count("«") == 0
    assert make_snippet("PgBouncer", ["ounc"], "trigram") == "PgB«ounc»er"
    long = " ".join(f"w{i}" for i in range(200)) + " needle"
    snip = make_snippet(long, ["needle"], "unicode61", width=40)
    assert snip.startswith("…") and snip.endswith("«needle»") and len(snip) < 60
    assert make_snippet("no match here", ["zebra"]) == "no match here"


@pytest.mark.parametrize("kind", ["sqlite", "hybrid"])
def test_searching_on_a_thread_while_writing(kind: str, sample_project: Path):
    import threading

    from core.backends.sqlite import SqliteMemoryBackend

    b = SqliteMemoryBackend() if kind == "sqlite" else keyword_only()
    b.initialize({}, sample_project)
    errors: list[BaseException] = []
    stop = threading.Event()

    def searcher() -> None:
        while not stop.is_set():
            try:
                b.search("lease heartbeat", MemorySearchOptions(mode="keyword"))
            except BaseException as exc:  # noqa: BLE001 - collected for the assertion
                errors.append(exc)
                return

    threads = [threading.Thread(target=searcher) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        base = b.read()
        for i in range(30):
            b.write(base + f"\n- walrus note {i}\n")
    finally:
        stop.set()
        for t in threads:
            t.join()
    try:
        assert errors == []
        hits = b.search("walrus", MemorySearchOptions(mode="keyword"))
        assert len(hits) == 1 and "walrus» note 29" in hits[0].content
    finally:
        b.shutdown()
