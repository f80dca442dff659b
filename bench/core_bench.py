"""Core figures: appends/s on a ~1 MiB memory, atomic 1 MiB save, merging insights, parsing a big reply."""

from __future__ import annotations

import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from core import fileio
from core.entries import append_memory_entry

REAL = Path(__file__).resolve().parent.parent / "tests" / "data" / "fusion-real" / ".fusion" / "memory.md"
REL = ".fusion/memory.md"


def one_mib_text(limit: int = fileio.MAX_FILE_SIZE) -> str:
    """Repeat the real agent-written memory up to just under ``limit`` bytes."""
    base = REAL.read_text(encoding="utf-8")
    parts, size, i = [], 0, 0
    while True:
        chunk = base.replace("FN-", f"FN{i}-")
        n = len(chunk.encode("utf-8"))
        if size + n > limit:
            break
        parts.append(chunk)
        size += n
        i += 1
    text = "".join(parts)
    room = limit - size
    return text + ("- filler line to reach the size\n" * (room // 40))


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    """Run ``fn`` ``repeat`` times and return each duration in milliseconds."""
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def bench_appends(root: Path) -> None:
    text = one_mib_text(fileio.MAX_FILE_SIZE - 64 * 1024)
    fileio.atomic_write_bytes(root / REL, text.encode("utf-8"))
    n = 300
    t0 = time.perf_counter()
    for i in range(n):
        r = append_memory_entry(root, f"bench entry {i}: the lease clock must come from the database", max_lines=None)
        assert r.status == "written"
    dt = time.perf_counter() - t0
    size = (root / REL).stat().st_size
    print(f"appends_per_second_on_{size / 1048576:.2f}_MiB_file: {n / dt:.0f}")


def bench_save(root: Path) -> None:
    a = one_mib_text()
    b = a[:-40] + "- a different last line, same size......\n"
    texts = [a, b]
    counter = iter(range(10**9))
    times = timed(lambda: fileio.replace_text(root, REL, texts[next(counter) % 2], source="bench"), 20)
    print(f"save_1MiB_atomic_ms (median, incl. history + fsync): {statistics.median(times):.1f}")
    print(f"save_1MiB_atomic_ms (p95): {sorted(times)[int(len(times) * 0.95) - 1]:.1f}")


def bench_merge() -> None:
    from core.insights import MemoryInsight, merge_insights

    cats = ["pattern", "principle", "convention", "pitfall", "context"]
    existing = [MemoryInsight(cats[i % 5], f"existing insight number {i} about module {i % 97}", f"FN-{i}",
                              "2026-11-01T00:00:00Z") for i in range(5000)]
    base = merge_insights("", existing)
    new = [MemoryInsight(cats[i % 5], f"brand new insight {i} on retries", None, "2026-11-02T00:00:00Z")
           for i in range(100)]
    times = timed(lambda: merge_insights(base, new), 10)
    print(f"merge_100_into_5000_ms (median): {statistics.median(times):.1f}")


def bench_parse() -> None:
    from core.insights import parse_insight_extraction_response

    insights = [{"category": "pattern", "content": f"insight {i} " + "x" * 150, "source": f"FN-{i}"}
                for i in range(600)]
    reply = "Here is the result:\n```json\n" + json.dumps(
        {"summary": "s", "insights": insights, "prunedMemory": REAL.read_text()[:80_000]}) + "\n```\n"
    size_kb = len(reply.encode("utf-8")) / 1024
    times = timed(lambda: parse_insight_extraction_response(reply), 10)
    print(f"parse_{size_kb:.0f}KB_reply_ms (median): {statistics.median(times):.1f}")


def main() -> None:
    """Print the core figures."""
    tmp = Path(tempfile.mkdtemp(prefix="memdesk-bench-"))
    try:
        (tmp / ".fusion").mkdir()
        bench_appends(tmp)
        bench_save(tmp)
        bench_merge()
        bench_parse()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
