"""Search benchmark, each figure beside raw SQLite FTS5 in the same run: ``python -m bench search``.

The corpus is a layered project (long-term memory, daily notes, dreams and agents' files) of real
agent-written sentences: 1,000, 10,000 and 100,000 entries in 20, 200 and 2,000 files. For each size:

* index build: memdesk's rebuild (read every document, cut entries, one transaction) against the
  floor, the same entry texts inserted into a bare FTS5 table in one transaction;
* keyword top-20 latency (median, p95) of memdesk's search (freshness check, exact-first ranking,
  snippets and highlights included) against the floor, a bare FTS5 all-words query that returns
  the top 20 rows with their text;
* recall@20 against the all-words truth: the share of each first page that holds all the query's
  words, out of as many all-words entries as exist (at most 20), averaged over the queries.

Then one ``memdesk search --mode keyword`` and one ``memdesk show`` process against a bare
``python -c pass``, and recall@5 of each mode on the labelled sample (``tests/data/search_labels.json``).
"""

from __future__ import annotations

import gc
import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from core.search import derived
from core.search.chunking import chunk_markdown
from core.search.db import Database
from core.search.fts import STOPWORDS, join_terms, query_terms
from core.search.service import SearchService
from core.search.types import MemorySearchOptions

REPO = Path(__file__).resolve().parent.parent
SIZES = ((1_000, 20), (10_000, 200), (100_000, 2_000))
QUERIES = 300
TOP = 20
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*])")
_SECTIONS = ["Decisions", "Conventions", "Pitfalls", "Context"]


def sentence_pool() -> list[str]:
    """Sentences of real agent-written memory (the Fusion fixture and the sample)."""
    pool: list[str] = []
    for path in (REPO / "tests" / "data" / "fusion-real" / ".fusion" / "memory.md",
                 REPO / "resources" / "sample" / ".fusion" / "memory.md"):
        for entry in chunk_markdown(path.read_text(encoding="utf-8"), path.name):
            for text_line in entry.text.splitlines():
                text = text_line.strip().lstrip("-*0123456789. ").strip()
                pool += [s for s in _SENTENCE.split(text) if 25 <= len(s) <= 320]
    return pool


def _entry(rng: random.Random, pool: list[str]) -> str:
    ticket = f"TP-{rng.randint(1, 99999)}"
    body = " ".join(rng.choice(pool) for _ in range(rng.choice((1, 1, 2, 2, 3))))
    if rng.random() < 0.7:
        return f"- **{ticket}**: {body}"
    return f"{ticket}: {body}"


def corpus_paths(files: int) -> list[str]:
    """``files`` document paths of a layered project: MEMORY.md, DREAMS.md, daily notes, agents' files."""
    paths = [".fusion/memory/MEMORY.md", ".fusion/memory/DREAMS.md"]
    agents = max(1, files // 50)
    day = 0
    while len(paths) < files:
        n = len(paths)
        folder = ".fusion/memory" if n % 3 else f".fusion/agent-memory/agent-{n % agents}"
        date = f"{2020 + day // 336}-{1 + day // 28 % 12:02d}-{1 + day % 28:02d}"
        candidate = f"{folder}/{date}.md"
        day += 1
        if candidate not in paths:
            paths.append(candidate)
    return paths


def build_corpus(root: Path, entries: int, files: int, seed: int = 7) -> None:
    """Write ``entries`` entries spread over ``files`` documents of a layered project."""
    rng = random.Random(seed)
    pool = sentence_pool()
    paths = corpus_paths(files)
    per = [entries // files + (1 if i < entries % files else 0) for i in range(files)]
    for rel, count in zip(paths, per, strict=True):
        parts = ["# Project Memory\n"]
        for i in range(count):
            if i % max(1, -(-count // 4)) == 0:
                parts.append(f"## {_SECTIONS[min(3, i // max(1, -(-count // 4)))]}\n")
            parts.append(_entry(rng, pool) + "\n")
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(parts), encoding="utf-8")


def make_queries(rng: random.Random, texts: list[str], count: int = QUERIES) -> list[str]:
    """Two or three words someone remembers from one entry (so every query has an all-words hit)."""
    queries: list[str] = []
    while len(queries) < count:
        words = [w for w in re.findall(r"[A-Za-z][A-Za-z-]{3,}", rng.choice(texts)) if w.lower() not in STOPWORDS]
        if len(words) >= 2:
            queries.append(" ".join(rng.sample(words, min(len(words), rng.choice((2, 3))))))
    return queries


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


class RawFts:
    """The floor: a bare FTS5 table of the entry texts (porter, as memdesk's default)."""

    def __init__(self, path: Path, rows: list[tuple[str, str]]) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("CREATE VIRTUAL TABLE fts USING fts5(text, section, "
                          "tokenize='porter unicode61 remove_diacritics 2')")
        start = time.perf_counter()
        self.conn.execute("BEGIN")
        self.conn.executemany("INSERT INTO fts(text, section) VALUES (?, ?)", rows)
        self.conn.execute("COMMIT")
        self.build_s = time.perf_counter() - start

    def top(self, query: str, limit: int = TOP) -> list[tuple[int, str]]:
        match = join_terms(query_terms(query), "AND")
        return self.conn.execute("SELECT rowid, text FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT ?",
                                 (match, limit)).fetchall()

    def all_words(self, query: str) -> set[str]:
        match = join_terms(query_terms(query), "AND")
        return {r[0] for r in self.conn.execute("SELECT text FROM fts WHERE fts MATCH ?", (match,))}


def one_size(tmp: Path, entries: int, files: int) -> dict[str, float]:
    root = tmp / f"p{entries}"
    build_corpus(root, entries, files)

    def entries_of() -> dict[tuple[str, int], str]:
        return {(e.file, e.line): e.text for p in root.rglob("*.md")
                for e in chunk_markdown(p.read_text(encoding="utf-8"), p.relative_to(root).as_posix())}

    rows = [(e.text, e.section or "") for p in root.rglob("*.md")
            for e in chunk_markdown(p.read_text(encoding="utf-8"), p.name)]
    # Builds in turn, each into a new database: the floor (texts already cut, in memory) and memdesk's
    # rebuild (read every document, cut its entries, index them in one transaction, optimize).
    builds, floors = [], []
    for trial in range(3):
        raw = RawFts(tmp / f"raw{entries}-{trial}.db", rows)
        svc = SearchService(root, Database(tmp / f"ours{entries}-{trial}.db", "bench"), embedder=None)
        start = time.perf_counter()
        svc.rebuild()
        builds.append(time.perf_counter() - start)
        floors.append(raw.build_s)
        if trial < 2:
            svc.close()
            raw.conn.close()
    queries = make_queries(random.Random(11), [t for t, _s in rows])
    count = len(rows)
    del rows  # the harness keeps no big structures while timing (the collector would scan them)
    gc.collect()
    build_s, floor_s = statistics.median(builds), statistics.median(floors)
    ratio_s = statistics.median(b / f for b, f in zip(builds, floors, strict=True))
    opts = MemorySearchOptions(limit=TOP, mode="keyword")
    svc.search(queries[0], opts)  # the first searches look at every file; then the watcher answers
    svc.search(queries[1], opts)
    # The two are timed in turn, query by query, so a busy moment of the machine hits both.
    # Wall time, and the thread's CPU time: on a shared machine a query that is descheduled waits a whole
    # 4 ms scheduler tick, which the wall-clock p95 shows and the CPU time does not.
    floor_t, ours_t, floor_c, ours_c = [], [], [], []
    for q in queries[:20]:
        raw.top(q)
        svc.search(q, opts)
    for q in queries:
        start, cpu0 = time.perf_counter(), time.thread_time()
        raw.top(q)
        mid, cpu1 = time.perf_counter(), time.thread_time()
        svc.search(q, opts)
        floor_t.append((mid - start) * 1000)
        ours_t.append((time.perf_counter() - mid) * 1000)
        floor_c.append((cpu1 - cpu0) * 1000)
        ours_c.append((time.thread_time() - cpu1) * 1000)
    texts = entries_of()
    recall = []
    for q in queries:
        truth = raw.all_words(q)  # the texts of every entry holding all the words, as FTS5 says
        page = svc.search(q, opts)
        hits = sum(1 for r in page if texts[(r.file, r.line_number)] in truth)
        recall.append(min(1.0, hits / min(TOP, len(truth))) if truth else 1.0)
    svc.close()
    return {"entries": count, "files": files, "build": build_s * 1000, "build_floor": floor_s * 1000,
            "build_ratio": ratio_s,
            "med": statistics.median(ours_t), "p95": pct(ours_t, 0.95),
            "fmed": statistics.median(floor_t), "fp95": pct(floor_t, 0.95),
            "cmed": statistics.median(ours_c), "cp95": pct(ours_c, 0.95),
            "cfmed": statistics.median(floor_c), "cfp95": pct(floor_c, 0.95),
            "recall": statistics.mean(recall)}


def cli(root: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(REPO)
    commands = {"memdesk search --mode keyword": [sys.executable, "-m", "core.cli", "search", "lease clock",
                                                  "--mode", "keyword", "-p", str(root)],
                "memdesk show": [sys.executable, "-m", "core.cli", "show", "-p", str(root)]}
    floor_cmd = [sys.executable, "-c", "pass"]
    for name, cmd in commands.items():
        subprocess.run(cmd, env=env, capture_output=True, check=True)  # compiles the bytecode, fills the index
        ours, floor = [], []
        for _ in range(15):
            start = time.perf_counter()
            subprocess.run(cmd, env=env, capture_output=True, check=True)
            mid = time.perf_counter()
            subprocess.run(floor_cmd, env=env, capture_output=True, check=True)
            ours.append((mid - start) * 1000)
            floor.append((time.perf_counter() - mid) * 1000)
        m, f = statistics.median(ours), statistics.median(floor)
        print(f"  {name:<30} median {m:7.1f} ms   floor (python -c pass) {f:6.1f} ms   ratio {m / f:5.1f}x")


def labelled_recall() -> None:
    from core.backends.hybrid import HybridMemoryBackend
    from core.search.embeddings import Embedder, default_embedder, semantic_installed
    from core.search.relevance import load_labels, recall_at_k

    labels = load_labels(REPO / "tests" / "data" / "search_labels.json")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "sample"
        shutil.copytree(REPO / "resources" / "sample", root)
        embedder = default_embedder() if semantic_installed() else Embedder(installed=lambda: False)
        backend = HybridMemoryBackend(embedder=embedder)
        backend.initialize({}, root)
        try:
            modes = ("keyword", "semantic", "hybrid") if semantic_installed() else ("keyword",)
            figures = [f"{m} {recall_at_k(backend, root, labels, m).recall:.3f}" for m in modes]
        finally:
            backend.shutdown()
    print(f"recall@5 on {len(labels)} labelled queries (sample project): " + ", ".join(figures))


def main() -> None:
    """Run the benchmark and print its figures."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"machine: {os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    tmp = Path(tempfile.mkdtemp(prefix="memdesk-bench-"))
    old_cache = os.environ.get(derived.CACHE_DIR_ENV)
    os.environ[derived.CACHE_DIR_ENV] = str(tmp / "cache")
    sizes = SIZES if "--quick" not in sys.argv else SIZES[:2]
    try:
        print(f"{'entries':>8} {'files':>6} | {'build ms':>9} {'floor':>8} {'ratio':>6} | "
              f"{'top-20 median':>13} {'floor':>6} | {'p95 ms':>7} {'floor':>6} {'ratio':>6} | recall@20")
        results = []
        for entries, files in sizes:
            r = one_size(tmp, entries, files)
            results.append(r)
            print(f"{r['entries']:>8,} {r['files']:>6} | {r['build']:>9.0f} {r['build_floor']:>8.0f} "
                  f"{r['build_ratio']:>5.1f}x | {r['med']:>13.3f} {r['fmed']:>6.3f} | "
                  f"{r['p95']:>7.3f} {r['fp95']:>6.3f} {r['p95'] / r['fp95']:>5.1f}x | {r['recall']:.3f}")
        print("the same queries in CPU time (what a query costs without waiting for the processor):")
        for r in results:
            print(f"{r['entries']:>8,} {r['files']:>6} | top-20 CPU median {r['cmed']:.3f} ms, floor {r['cfmed']:.3f} "
                  f"({r['cmed'] / r['cfmed']:.1f}x) | p95 {r['cp95']:.3f} ms, floor {r['cfp95']:.3f} "
                  f"({r['cp95'] / r['cfp95']:.1f}x)")
        if len(results) == 3:
            growth = results[2]["p95"] / results[1]["p95"]
            print(f"p95 growth 10k -> 100k entries: {growth:.2f}x for 10x the entries "
                  f"(floor {results[2]['fp95'] / results[1]['fp95']:.2f}x); in CPU time "
                  f"{results[2]['cp95'] / results[1]['cp95']:.2f}x (floor {results[2]['cfp95'] / results[1]['cfp95']:.2f}x)")
        derived.close_all()
        sample = tmp / "sample"
        shutil.copytree(REPO / "resources" / "sample", sample)
        for label, root in (("the sample project", sample), (f"{sizes[1][0]:,} entries", tmp / f"p{sizes[1][0]}")):
            print(f"one process, {label}:")
            cli(root)
        labelled_recall()
    finally:
        derived.close_all()
        if old_cache is None:
            os.environ.pop(derived.CACHE_DIR_ENV, None)
        else:
            os.environ[derived.CACHE_DIR_ENV] = old_cache
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
