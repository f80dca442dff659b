"""The memory firewall's figures: ``python -m bench firewall``.

* secrets recall over the provider formats of tests/data/firewall/secrets.txt (floor 0.95, ≥ 15 formats);
* injection recall over the phrasings of tests/data/firewall/injection.txt (floor 0.90, ≥ 60 phrasings),
  and the near misses of both sets flagged (should be none);
* near-duplicates: precision and recall on tests/data/firewall/near_duplicates.txt, pairs taken from the
  real memory (fusion-real);
* false positives: secret and injection flags on every document of fusion-real and fusion-layered
  (floor: zero), with the near-duplicate and contradiction flags there counted and sampled;
* speed: an append on a 1 MiB memory (the real memory repeated to size) with the firewall's screen and
  with the pass-all screen, interleaved in the same run; the screen's cost is the difference (floor: 2 ms
  at p95), beside the append's own time.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from pathlib import Path

from bench.firewall_sets import read_labelled
from core.firewall.injection import scan_injection
from core.firewall.rules import Deadline
from core.firewall.scan import scan_document
from core.firewall.secrets import scan_secrets
from core.firewall.similarity import NEAR_DUPLICATE_THRESHOLD, jaccard, normalise, tokens

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
REAL = DATA / "fusion-real" / ".fusion" / "memory.md"
APPENDS = 300


def line(name: str, value: float, floor: float, unit: str = "", better: str = ">=") -> None:
    """One figure beside its floor, and whether it holds."""
    ok = value >= floor if better == ">=" else value <= floor
    print(f"  {name:<58} {value:>9.3f}{unit}   floor {better} {floor}{unit}   {'ok' if ok else 'BELOW FLOOR'}")


def bench_secrets() -> None:
    pairs = read_labelled("secrets.txt")
    hits = [(label, text) for label, text in pairs if label != "miss"]
    found = [bool(scan_secrets(text, Deadline())) for _, text in hits]
    formats = sorted({label for label, _ in hits})
    missed = [text for (_, text), ok in zip(hits, found, strict=True) if not ok]
    false = sum(1 for label, text in pairs if label == "miss" and scan_secrets(text, Deadline()))
    print(f"secrets: {len(hits)} examples of {len(formats)} formats ({', '.join(formats)})")
    line("recall", sum(found) / len(hits), 0.95)
    line("formats", len(formats), 15)
    line("near misses flagged", false, 0, better="<=")
    for text in missed:
        print(f"    missed: {text[:70]}")


def bench_injection() -> None:
    pairs = read_labelled("injection.txt")
    hits = [text for label, text in pairs if label == "hit"]
    missed = [text for text in hits if not scan_injection(text, Deadline())]
    false = [text for label, text in pairs if label == "miss" and scan_injection(text, Deadline())]
    print(f"injection: {len(hits)} phrasings, {len(pairs) - len(hits)} near misses")
    line("recall", 1 - len(missed) / len(hits), 0.90)
    line("phrasings", len(hits), 60)
    line("near misses flagged", len(false), 0, better="<=")
    for text in missed:
        print(f"    missed: {text[:70]!r}")


def near_duplicate(a: str, b: str) -> bool:
    """The near-duplicate rule's decision on one pair (as :func:`core.firewall.similarity.scan_similar`)."""
    ta, tb = frozenset(tokens(a)), frozenset(tokens(b))
    return normalise(a) == normalise(b) or jaccard(ta, tb) >= NEAR_DUPLICATE_THRESHOLD


def bench_near_duplicates() -> None:
    pairs = read_labelled("near_duplicates.txt")
    tp = fp = fn = tn = 0
    for label, text in pairs:
        a, b = text.split("\t", 1)
        said = near_duplicate(a, b)
        same = label == "dup"
        tp += said and same
        fp += said and not same
        fn += same and not said
        tn += not said and not same
    print(f"near-duplicates: {len(pairs)} labelled pairs from fusion-real ({tp + fn} duplicates, {fp + tn} distinct)")
    line("precision", tp / max(1, tp + fp), 0.90)
    line("recall", tp / max(1, tp + fn), 0.80)


def bench_fixtures() -> None:
    docs = sorted(p for name in ("fusion-real", "fusion-layered") for p in (DATA / name).rglob("*.md"))
    kinds: dict[str, int] = {}
    samples: list[str] = []
    for path in docs:
        text = path.read_text(encoding="utf-8")
        for f in scan_document(text):
            kinds[f.kind] = kinds.get(f.kind, 0) + 1
            if f.kind in ("near-duplicate", "contradiction") and len(samples) < 4:
                first = text[f.span[0]:f.span[1]].splitlines()[0][:90]
                samples.append(f"{path.relative_to(DATA)}:{f.line} {f.kind}: “{first}” — {f.message[:140]}")
    print(f"real memory: {len(docs)} documents of fusion-real and fusion-layered")
    line("secret flags", kinds.get("secret", 0), 0, better="<=")
    line("injection flags", kinds.get("injection", 0), 0, better="<=")
    print(f"  near-duplicate flags {kinds.get('near-duplicate', 0)}, contradiction flags {kinds.get('contradiction', 0)}"
          " (warned, never blocked); sample:")
    for s in samples:
        print(f"    {s}")


def real_mebibyte() -> str:
    """The real memory repeated to 0.9 MiB (the appends take it to 1 MiB), each copy's entries dated apart."""
    real = REAL.read_text(encoding="utf-8")
    parts, size, n = [real], len(real.encode()), 0
    while size + len(real.encode()) + 32 < 960_000:
        n += 1
        chunk = f"\n\n<!-- 2026-09-{n:02d} -->\n" + real
        parts.append(chunk)
        size += len(chunk.encode())
    return "".join(parts)


def bench_speed() -> None:
    from core.project import Project
    from core.storage.pipeline import PASS_ALL, Writer

    rng = random.Random(20)
    pool = [ln.strip("- ").strip() for ln in REAL.read_text(encoding="utf-8").splitlines() if len(ln) > 60]
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        root = Path(tmp)
        (root / ".fusion").mkdir()
        (root / ".fusion" / "memory.md").write_text(real_mebibyte(), encoding="utf-8")
        project = Project(root)
        firewall = project.screen
        inside: list[float] = []
        inside_cpu: list[float] = []  # the writing thread's CPU time: what the screen costs, whatever else runs

        def timed_firewall(request):  # the firewall, timed where the pipeline calls it
            start, start_cpu = time.perf_counter(), time.thread_time()
            try:
                return firewall(request)
            finally:
                inside.append((time.perf_counter() - start) * 1000)
                inside_cpu.append((time.thread_time() - start_cpu) * 1000)

        writer = Writer("token", "bench")
        project.append("warm-up: the firewall's rules compiled and the index built", writer=writer, max_lines=0)
        inside.clear()
        inside_cpu.clear()
        with_fw, without, screen_only = [], [], []
        for i in range(APPENDS):
            words = rng.choice(pool).split()
            rng.shuffle(words)
            for screen, times in ((timed_firewall, with_fw), (PASS_ALL, without)):
                project.screen = screen
                entry = f"bench {i} {'fw' if screen is timed_firewall else 'pass'}: " + " ".join(words)
                start = time.perf_counter()
                result = project.append(entry, writer=writer, max_lines=0)
                times.append((time.perf_counter() - start) * 1000)
                assert result.status == "written", result
        project.screen = firewall
        engine = firewall.firewall.engine  # the installed screen's engine
        current = project.read()
        for i in range(APPENDS):
            entry = f"probe {i}: " + rng.choice(pool)
            start = time.perf_counter()
            engine.scan(entry, current=current, key=".fusion/memory.md")
            screen_only.append((time.perf_counter() - start) * 1000)
        size = (root / ".fusion" / "memory.md").stat().st_size
        project.close()
    p95 = lambda v: sorted(v)[int(len(v) * 0.95)]  # noqa: E731
    print(f"speed: {APPENDS} appends each way, interleaved, to a {size / 1_048_576:.2f} MiB memory (fusion-real "
          "repeated), as an agent (token)")
    print(f"  append with the pass-all screen: median {statistics.median(without):.2f} ms, p95 {p95(without):.2f} ms")
    print(f"  append with the firewall:        median {statistics.median(with_fw):.2f} ms, p95 {p95(with_fw):.2f} ms")
    print(f"  machine load while measuring (1-minute average, 2 CPUs): {__import__('os').getloadavg()[0]:.1f}")
    line("screen inside an append, CPU time of the writer, p95 ms", p95(inside_cpu), 2.0, better="<=")
    line("screen inside an append (policy, rules, index, verdict), p95 ms", p95(inside), 2.0, better="<=")
    line("screen inside an append, median ms", statistics.median(inside), 2.0, better="<=")
    line("the engine alone on a constant 1 MiB document, p95 ms", p95(screen_only), 2.0, better="<=")
    print(f"  difference of the two appends' p95 (noisy: both include the disk): {p95(with_fw) - p95(without):.2f} ms; "
          f"of their medians: {statistics.median(with_fw) - statistics.median(without):.2f} ms")


ONE_SHOT = """
import sys, time
from core.project import Project
from core.storage.pipeline import PASS_ALL, Writer
p = Project(sys.argv[1])
fw, inside = p.screen, []
def timed(request):
    start = time.perf_counter()
    try:
        return fw(request)
    finally:
        inside.append((time.perf_counter() - start) * 1000)
p.screen = PASS_ALL if sys.argv[2] == "pass" else timed
start = time.perf_counter()
assert p.append(sys.argv[3], writer=Writer("cli"), max_lines=0).status == "written"
print((time.perf_counter() - start) * 1000, inside[0] if inside else 0.0)
"""


def bench_one_shot(runs: int = 10) -> None:
    """The screen in a process that writes once (``memdesk append``): rules compiled and the document
    looked up without an index, beside the same append with the pass-all screen."""
    import os
    import subprocess
    import sys

    rng = random.Random(21)
    pool = [ln.strip("- ").strip() for ln in REAL.read_text(encoding="utf-8").splitlines() if len(ln) > 60]
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        root = Path(tmp) / "p"
        (root / ".fusion").mkdir(parents=True)
        (root / ".fusion" / "memory.md").write_text(real_mebibyte(), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # bytecode cached, as installed
        env.update(PYTHONPATH=str(REPO), MEMDESK_CONFIG_DIR=str(Path(tmp) / "cfg"))
        subprocess.run([sys.executable, "-c", ONE_SHOT, str(root), "fw", "warm-up: writes the bytecode caches"],
                       env=env, check=True, capture_output=True)
        appends: dict[str, list[float]] = {"pass": [], "fw": []}
        inside: list[float] = []
        for i in range(runs):
            for mode in ("pass", "fw"):
                out = subprocess.run([sys.executable, "-c", ONE_SHOT, str(root), mode,
                                      f"one-shot {i} {mode}: {rng.choice(pool)}"], env=env, check=True,
                                     capture_output=True, text=True).stdout.split()
                appends[mode].append(float(out[0]))
                if mode == "fw":
                    inside.append(float(out[1]))
    print(f"one-shot processes: {runs} each way (the memdesk append case: nothing compiled or indexed before)")
    print(f"  append in a fresh process, pass-all screen: median {statistics.median(appends['pass']):.1f} ms; "
          f"firewall: median {statistics.median(appends['fw']):.1f} ms")
    print(f"  the screen in a fresh process (imports, RE2 compiles, look-up without an index): median "
          f"{statistics.median(inside):.1f} ms, max {max(inside):.1f} ms (no floor in the issue; the in-process "
          "figure above is the 2 ms one)")


def main() -> None:
    """Run every firewall figure."""
    bench_secrets()
    bench_injection()
    bench_near_duplicates()
    bench_fixtures()
    bench_speed()
    from bench.firewall_save_bench import main as bench_saves  # the save path (a 1 MiB replacement)

    bench_saves()
    bench_one_shot()
