"""The notice watch over a year of daily notes (issue 21, must-have 3): what a scan costs, beside its floor.

A layered project with 365 daily notes made from real agent-written lines (bench.consolidation_bench.notes),
MEMORY.md and DREAMS.md. Figures, each the best of three, beside the floor from the same run:
- first look (every document read and held) beside reading every file once;
- an idle scan (nothing changed: one lstat each) beside lstat-ing every file;
- the scan after another program's dream run (3 documents rewritten, their texts before recorded in
  history) beside lstat-ing every file and reading the three.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from core.documents.layout import LONG_TERM_SCAFFOLD
from core.project import Project
from core.project.noticed_watch import NoticeWatch
from core.storage.history import worker as history_worker

MEM = ".fusion/memory"


def _project(root: Path, days: list[tuple[str, str]]) -> list[Path]:
    mem = root / MEM
    mem.mkdir(parents=True)
    (root / ".fusion" / "config.json").write_text("{}\n", encoding="utf-8")
    (mem / "MEMORY.md").write_text(LONG_TERM_SCAFFOLD + "".join(t.split("\n", 3)[-1] for _d, t in days[:40]),
                                   encoding="utf-8")
    (mem / "DREAMS.md").write_text("# Memory Dreams\n", encoding="utf-8")
    for day, text in days:
        (mem / f"{day}.md").write_text(text, encoding="utf-8")
    return sorted(mem.iterdir())


def _best(fn, n: int = 3) -> float:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return min(out)


def run(days: list[tuple[str, str]]) -> None:
    """Print the three figures beside their floors."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "year"
        files = _project(root, days)
        project = Project(root)
        size = sum(p.stat().st_size for p in files)
        read_floor = _best(lambda: [p.read_bytes() for p in files])
        first = _best(lambda: NoticeWatch(project).scan(now=0.0))
        watch = NoticeWatch(project, append_delay_s=0)
        watch.scan(now=0.0)
        stat_floor = _best(lambda: [os.lstat(p) for p in files])
        idle = _best(lambda: watch.scan(now=1.0))
        touched = [root / MEM / days[-1][0] / ".." / f"{days[-1][0]}.md", root / MEM / "DREAMS.md",
                   root / MEM / "MEMORY.md"]
        touched = [p.resolve() for p in touched]
        runs, floors = [], []
        for k in range(3):
            for p in touched:
                p.write_text(p.read_text(encoding="utf-8").replace("- ", f"- (run {k}) ", 1) + f"\n- run {k}\n",
                             encoding="utf-8")
            t0 = time.perf_counter()
            noticed = watch.scan(now=10.0 + k)
            runs.append(time.perf_counter() - t0)
            assert len(noticed.rewritten) == 3, noticed
            t0 = time.perf_counter()
            [os.lstat(p) for p in files]
            [p.read_bytes() for p in touched]
            floors.append(time.perf_counter() - t0)
        history_worker.settled()
        print(f"notice watch over {len(files)} documents ({size / 1024:.0f} KiB):")
        print(f"  first look {first * 1000:.1f} ms (floor, reading every file: {read_floor * 1000:.1f} ms)")
        print(f"  idle scan {idle * 1000:.2f} ms (floor, lstat of every file: {stat_floor * 1000:.2f} ms)")
        print(f"  scan after a 3-document run, texts before recorded: {min(runs) * 1000:.1f} ms (floor, lstat of "
              f"every file and reading the three: {min(floors) * 1000:.2f} ms)")
