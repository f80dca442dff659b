"""Workspace benchmark (``python -m bench workspace``): a big layered project, as current Fusion keeps one.

The project: a 1 MiB long-term ``MEMORY.md``, 365 daily notes, ``DREAMS.md``, and 20 agents each with
a long-term file and 10 daily notes; one agent's ``MEMORY.md`` is 1 MiB too. Figures, each beside
its floor measured in the same run:

- list the documents (``Project.documents``) — floor: ``os.scandir`` of the same folders;
- open the project in the window (offscreen Qt) until the editor shows the long-term file;
- switch the editor between the two 1 MiB documents — floor: reading both files;
- the longest GUI-thread stall while switching (a 5 ms timer's largest gap);
- index every document for search (memdesk's derived index, first search) — floor: raw FTS5 inserts.

Targets: list < 100 ms, switch < 150 ms, no GUI stall over 50 ms.
"""

from __future__ import annotations

import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REAL = REPO / "tests" / "data" / "fusion-real" / ".fusion" / "memory.md"
TARGETS = {"list_ms": 100.0, "switch_ms": 150.0, "stall_ms": 50.0}
MIB = 1_048_576


def _mib_text(seed: int) -> str:
    """Just under 1 MiB of real agent memory, with a different tail each time."""
    base = REAL.read_text(encoding="utf-8")
    out, rnd = [], random.Random(seed)
    size = 0
    while size < MIB - 120_000:
        out.append(base)
        size += len(base.encode())
    out.append("".join(f"- note {rnd.random():.12f}\n" for _ in range(200)))
    return "".join(out)


def build(root: Path) -> None:
    """Write the layered project under ``root``."""
    from core.documents.layout import DREAMS_SCAFFOLD, daily_scaffold

    mem = root / ".fusion" / "memory"
    mem.mkdir(parents=True)
    (mem / "MEMORY.md").write_text(_mib_text(1), encoding="utf-8")
    (mem / "DREAMS.md").write_text(DREAMS_SCAFFOLD, encoding="utf-8")
    start = date(2025, 1, 1)
    for i in range(365):
        day = (start + timedelta(days=i)).isoformat()
        (mem / f"{day}.md").write_text(daily_scaffold(day) + f"\n- observation {i} about lease {i * 7}\n")
    for a in range(20):
        folder = root / ".fusion" / "agent-memory" / f"agent-{a:02d}"
        folder.mkdir(parents=True)
        body = _mib_text(2) if a == 0 else f"# Project Memory\n\n## Pitfalls\n\n- agent {a} pitfall\n"
        (folder / "MEMORY.md").write_text(body, encoding="utf-8")
        for d in range(10):
            day = (start + timedelta(days=d)).isoformat()
            (folder / f"{day}.md").write_text(daily_scaffold(day) + f"\n- agent {a} note {d}\n")


def _stats(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return statistics.median(samples), samples[max(0, int(len(samples) * 0.95) - 1)]


def bench_list(root: Path) -> dict[str, float]:
    from core.project import Project

    project = Project(root)
    times, floors = [], []
    for _ in range(30):
        t = time.perf_counter()
        docs = project.documents()
        times.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        for folder in [root / ".fusion/memory", *(root / ".fusion/agent-memory").iterdir()]:
            for entry in os.scandir(folder):
                entry.stat()
        floors.append((time.perf_counter() - t) * 1000)
    med, p95 = _stats(times)
    fmed, _ = _stats(floors)
    return {"documents": len(docs), "list_ms": med, "list_p95_ms": p95, "list_floor_ms": fmed}


def bench_gui(root: Path) -> dict[str, float]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QElapsedTimer, QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from gui.main_window import MainWindow
    from gui.recent import RecentProjects

    window = MainWindow(recent=RecentProjects(persist=False))
    window.show()
    app.processEvents()
    t = time.perf_counter()
    window.open_project(root)
    app.processEvents()
    open_ms = (time.perf_counter() - t) * 1000
    a, b = ".fusion/memory/MEMORY.md", ".fusion/agent-memory/agent-00/MEMORY.md"
    gaps: list[float] = []
    clock = QElapsedTimer()
    clock.start()
    last = [clock.elapsed()]

    def tick() -> None:
        now = clock.elapsed()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(tick)
    timer.start()
    switches, floors = [], []
    for i in range(12):
        target = b if i % 2 == 0 else a
        t = time.perf_counter()
        window.open_document(target)
        switches.append((time.perf_counter() - t) * 1000)
        deadline = time.perf_counter() + 0.3
        while time.perf_counter() < deadline:  # let the preview and highlighter settle, as a user waits
            app.processEvents()
        t = time.perf_counter()
        (root / target).read_text(encoding="utf-8")
        floors.append((time.perf_counter() - t) * 1000)
    timer.stop()
    window._close_project()
    med, p95 = _stats(switches)
    return {"open_ms": open_ms, "switch_ms": med, "switch_p95_ms": p95, "switch_floor_ms": statistics.median(floors),
            "stall_ms": max(gaps) if gaps else 0.0}


def bench_index(root: Path) -> dict[str, float]:
    from core.backends.base import MemorySearchOptions
    from core.project import Project

    os.environ["MEMDESK_CACHE_DIR"] = tempfile.mkdtemp(prefix="md-cache-")
    project = Project(root)
    t = time.perf_counter()
    hits = project.search("lease", MemorySearchOptions(limit=20))
    index_ms = (time.perf_counter() - t) * 1000
    texts = [(root / d.path).read_text(encoding="utf-8") for d in project.documents()]
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter')")
    t = time.perf_counter()
    with conn:
        for text in texts:
            conn.executemany("INSERT INTO t(body) VALUES (?)", [(p,) for p in text.split("\n\n") if p.strip()])
    floor_ms = (time.perf_counter() - t) * 1000
    return {"index_ms": index_ms, "index_floor_ms": floor_ms, "hits": len(hits)}


def main() -> None:
    """Build the workspace, run every figure, print each beside its floor and target."""
    with tempfile.TemporaryDirectory(prefix="md-workspace-") as tmp:
        root = Path(tmp) / "project"
        build(root)
        total = sum(f.stat().st_size for f in root.rglob("*.md"))
        print(f"workspace: {total / MIB:.1f} MiB in {sum(1 for _ in root.rglob('*.md'))} documents; "
              f"load {os.getloadavg()[0]:.2f}")
        r = bench_list(root)
        print(f"list documents ({r['documents']:.0f}): median {r['list_ms']:.2f} ms, p95 {r['list_p95_ms']:.2f} ms "
              f"(floor scandir+stat {r['list_floor_ms']:.2f} ms, ×{r['list_ms'] / max(r['list_floor_ms'], 1e-6):.1f}; "
              f"target < {TARGETS['list_ms']:.0f} ms)")
        g = bench_gui(root)
        print(f"open in the window: {g['open_ms']:.0f} ms")
        print(f"switch between two 1 MiB documents: median {g['switch_ms']:.1f} ms, p95 {g['switch_p95_ms']:.1f} ms "
              f"(floor read {g['switch_floor_ms']:.1f} ms; target < {TARGETS['switch_ms']:.0f} ms)")
        print(f"longest GUI stall while switching: {g['stall_ms']:.0f} ms (target < {TARGETS['stall_ms']:.0f} ms)")
        i = bench_index(root)
        print(f"index every document (first search): {i['index_ms']:.0f} ms (floor raw FTS5 inserts "
              f"{i['index_floor_ms']:.0f} ms, ×{i['index_ms'] / max(i['index_floor_ms'], 1e-6):.1f}); {i['hits']:.0f} hits")


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    main()
