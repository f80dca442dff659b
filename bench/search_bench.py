"""Search benchmark: ``python -m bench search``.

Builds a project with 10,000 realistic memory entries spread over the searched files (working
memory, archive, insights, layered daily files; each under the 1 MiB limit), then prints: keyword
index build time; keyword query latency (median, p95) in-process, through the hybrid backend without
its model and through the sqlite backend; semantic and hybrid latency (query embedding included; the
model load is timed apart); ripgrep's time for the same terms on the same files and the ratio; the
peak memory the indexes add (keyword alone, then with the semantic model); and recall@5 of each mode
on the labelled set (tests/data/search_labels.json over the sample project).
"""

from __future__ import annotations

import os
import random
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

from core.backends import MemorySearchOptions
from core.backends.hybrid import HybridMemoryBackend
from core.backends.sqlite import SqliteMemoryBackend
from core.fileio import MAX_FILE_SIZE
from core.search.chunking import chunk_markdown
from core.search.embeddings import Embedder, default_embedder, semantic_installed
from core.search.fts import STOPWORDS, query_terms
from core.search.relevance import load_labels, recall_at_k

ENTRIES = 10_000
QUERIES = 300
REPO = Path(__file__).resolve().parent.parent

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*])")
_SECTIONS = ["Architecture", "Conventions", "Pitfalls", "Context"]


def sentence_pool() -> list[str]:
    """Sentences of real agent-written memory (the Fusion fixture and the sample), the corpus's vocabulary."""
    pool: list[str] = []
    for path in (REPO / "tests" / "data" / "fusion-real" / ".fusion" / "memory.md",
                 REPO / "resources" / "sample" / ".fusion" / "memory.md"):
        for entry in chunk_markdown(path.read_text(encoding="utf-8"), path.name):
            for line in entry.text.splitlines():
                text = line.strip().lstrip("-*0123456789. ").strip()
                pool += [s for s in _SENTENCE.split(text) if 25 <= len(s) <= 320]
    return pool


def _entry(rng: random.Random, pool: list[str]) -> str:
    """One entry made of real sentences: a bullet (maybe with sub-bullets) or a paragraph."""
    ticket = f"TP-{rng.randint(1, 9999)}"
    body = " ".join(rng.choice(pool) for _ in range(rng.choice((1, 1, 2, 2, 3))))
    kind = rng.random()
    if kind < 0.6:
        return f"- **{ticket}**: {body}"
    if kind < 0.85:
        subs = "\n".join(f"  - {rng.choice(pool)}" for _ in range(rng.randint(1, 3)))
        return f"- {body} ({ticket})\n{subs}"
    return f"{ticket}: {body}"


def build_corpus(root: Path, entries: int = ENTRIES, seed: int = 7) -> dict[str, int]:
    """Write ``entries`` entries over the searched files of ``root``; return entries per file.

    Each file has the four standard sections of bullets and paragraphs, then dated appended
    entries at its end (one in ten), as agents leave them.
    """
    rng = random.Random(seed)
    pool = sentence_pool()
    plan = [(".fusion/memory.md", int(entries * 0.30)), (".fusion/memory-archive.md", int(entries * 0.30)),
            (".fusion/memory-insights.md", int(entries * 0.10)), (".fusion/memory/MEMORY.md", int(entries * 0.10))]
    rest = entries - sum(n for _p, n in plan)
    plan += [(f".fusion/memory/2026-10-{d:02d}.md", rest // 10 + (1 if d <= rest % 10 else 0)) for d in range(1, 11)]
    counts = {}
    for rel, count in plan:
        dated = count // 10
        undated = count - dated
        parts = ["# Project Memory\n"]
        for i in range(undated):
            if i % max(1, -(-undated // 4)) == 0:
                parts.append(f"## {_SECTIONS[min(3, i // max(1, -(-undated // 4)))]}\n")
            parts.append(_entry(rng, pool) + "\n")
        text = "\n".join(parts)
        day = date(2026, 1, 1)
        for _ in range(dated):
            day += timedelta(days=rng.randint(0, 2))
            text += f"\n\n<!-- {day.isoformat()} -->\n{rng.choice(pool)}"
        text += "\n"
        assert len(text.encode("utf-8")) <= MAX_FILE_SIZE, rel
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        counts[rel] = count
    return counts


def make_queries(rng: random.Random, root: Path, files: list[str], count: int = QUERIES) -> list[str]:
    """Two or three words someone remembers from one entry (so every query has at least one hit)."""
    entries = [e.text for rel in files for e in chunk_markdown((root / rel).read_text(encoding="utf-8"), rel)]
    queries: list[str] = []
    while len(queries) < count:
        words = [w for w in re.findall(r"[A-Za-z][A-Za-z-]{3,}", rng.choice(entries)) if w.lower() not in STOPWORDS]
        if len(words) >= 2:
            queries.append(" ".join(rng.sample(words, min(len(words), rng.choice((2, 3))))))
    return queries


def rss_kib(field: str = "VmRSS") -> int:
    """A memory figure of this process from ``/proc/self/status`` (KiB; 0 where unavailable)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def reset_peak() -> None:
    """Reset the peak-RSS mark (Linux ``clear_refs`` 5); harmless where unsupported."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def latency(fn, queries: list[str]) -> tuple[float, float]:
    """Median and p95 in milliseconds of ``fn(query)`` over ``queries`` (after a short warm-up)."""
    for q in queries[:10]:
        fn(q)
    times = []
    for q in queries:
        start = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


def ripgrep(root: Path, files: list[str], queries: list[str]) -> float | None:
    """Median ms of ``rg -i -F -n -e term ...`` over the same files for the same terms (None without rg)."""
    rg = shutil.which("rg")
    if rg is None:
        return None
    times = []
    for q in queries:
        args = [rg, "-i", "-F", "-n", "--no-config"]
        for term in query_terms(q):
            args += ["-e", term]
        start = time.perf_counter()
        subprocess.run(args + files, cwd=root, capture_output=True, check=False)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    """Run the benchmark and print its figures."""
    tmp = Path(tempfile.mkdtemp(prefix="memdesk-bench-"))
    try:
        _run(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _run(tmp: Path) -> None:
    root = tmp / "project"
    counts = build_corpus(root)
    files = list(counts)
    size = sum((root / f).stat().st_size for f in files)
    written_at = time.monotonic()
    print(f"corpus: {sum(counts.values()):,} entries in {len(files)} files, {size / 1_048_576:.1f} MiB")
    noise = latency(lambda _q: sum(range(20_000)), [""] * QUERIES)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine noise floor: a fixed CPU loop takes median {noise[0]:.2f} ms, p95 {noise[1]:.2f} ms "
          f"(load average {load:.1f} on {os.cpu_count()} CPUs; p95 figures below include such stalls)")
    queries = make_queries(random.Random(11), root, files)

    base_rss = rss_kib()
    reset_peak()
    kw = HybridMemoryBackend(embedder=Embedder(installed=lambda: False))
    kw.initialize({}, root)
    start = time.perf_counter()
    kw.search_service.rebuild()  # type: ignore[union-attr]
    build_s = time.perf_counter() - start
    print(f"keyword index build: {build_s * 1000:.0f} ms for {kw.search_service.index.count():,} entries")  # type: ignore[union-attr]
    # Files written less than 2 s before a check are re-hashed (racy timestamps); measure steady state.
    time.sleep(max(0.0, 2.1 - (time.monotonic() - written_at)))
    opts = MemorySearchOptions(limit=10, mode="keyword")
    med, p95 = latency(lambda q: kw.search(q, opts), queries)
    print(f"keyword query (backend.search, freshness check included): median {med:.2f} ms, p95 {p95:.2f} ms")
    index = kw.search_service.index  # type: ignore[union-attr]
    bmed, bp95 = latency(lambda q: index.ranked(query_terms(q), 10), queries)
    print(f"keyword query (the FTS5 queries alone): median {bmed:.2f} ms, p95 {bp95:.2f} ms")
    all_words = sum(index.ranked(query_terms(q), 10)[1] >= 10 for q in queries)
    print(f"  {all_words}/{len(queries)} queries filled their 10 results with entries holding all words")
    rg_med = ripgrep(root, files, queries)
    if rg_med is None:
        print("ripgrep: not installed (apt-get install ripgrep) — no comparison")
    else:
        print(f"ripgrep same terms, same files: median {rg_med:.2f} ms (process start included); "
              f"ripgrep / keyword = {rg_med / med:.1f}x")
    kw_peak = rss_kib("VmHWM") - base_rss
    print(f"peak memory added by the keyword index: {kw_peak / 1024:.1f} MiB")
    kw.shutdown()

    sq = SqliteMemoryBackend()
    sq.initialize({}, root)  # imports .fusion/memory.md into its database
    sq.search("warm-up", opts)  # indexes the other files
    med, p95 = latency(lambda q: sq.search(q, opts), queries)
    print(f"keyword query (sqlite backend, mirror and freshness checks included): median {med:.2f} ms, "
          f"p95 {p95:.2f} ms")
    sq.shutdown()

    if not semantic_installed():
        print("semantic: the semantic extra is not installed (pip install 'memdesk[semantic]') — skipped")
    else:
        reset_peak()
        emb = default_embedder()
        start = time.perf_counter()
        emb.get()
        print(f"semantic model load: {(time.perf_counter() - start) * 1000:.0f} ms ({emb.model_id})")
        hy = HybridMemoryBackend(embedder=emb)
        hy.initialize({}, root)
        start = time.perf_counter()
        counts_v = hy.search_service.rebuild()  # type: ignore[union-attr]
        print(f"hybrid index build (keyword + {counts_v['vectors']:,} vectors): "
              f"{(time.perf_counter() - start) * 1000:.0f} ms")
        for mode in ("semantic", "hybrid"):
            o = MemorySearchOptions(limit=10, mode=mode)  # type: ignore[arg-type]
            m, p = latency(lambda q, o=o: hy.search(q, o), queries)
            print(f"{mode} query (query embedding included): median {m:.2f} ms, p95 {p:.2f} ms")
        peak = rss_kib("VmHWM") - base_rss
        print(f"peak memory added by the indexes with the semantic model loaded: {peak / 1024:.1f} MiB")
        hy.shutdown()

    _recall()


def _recall() -> None:
    labels_path = REPO / "tests" / "data" / "search_labels.json"
    labels = load_labels(labels_path)
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


if __name__ == "__main__":
    main()
