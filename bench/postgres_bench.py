"""PostgreSQL backend benchmark: ``python -m bench postgres``.

Starts a throwaway PostgreSQL 15 cluster with default settings (fsync and synchronous commit on), as
the tests do, and prints each figure beside the same figure for the ``sqlite`` backend, measured in the
same run on the same machine, and beside its floor:

- append p95: one dated entry (different text each time) appended to the real 100 KB agent memory,
  with the file mirror on (the default: the commit, then the file written and fsynced) and off
  (postgres: ``append_document``; sqlite: locked read-modify-write through the backend);
- replacing write p95 of a 1 MiB memory of list entries: one more entry edited each time, an early
  entry pruned each time (every later entry moves up), and every entry new each time (the whole index
  rewritten); the text is made by the timed call;
- keyword search p95 at 10,000 and 100,000 entries (queries of 2-3 words from random entries);
- NOTIFY-to-callback delay: another host appends, this host's watcher has refreshed its mirror and
  called back (sqlite has no notifications: its figure is the file watcher's delay after a write);
- NOTIFY-to-editor delay: another host appends to the real 100 KB memory while this host's main window
  has it open; timed from the append's start to the entry being in the editor's text (the window's
  subscription, the relay to the GUI thread, the re-read and the merge), with the mirror on and off
  (sqlite: another writer's append through its own project, seen by the window's file watcher).

Floors: a ``SELECT 1`` round trip and a one-row committed insert (the WAL flush) on the same server;
for sqlite, a one-row committed insert into a WAL database on the same disk; for searches, a fixed CPU
loop (the machine's own stalls).
"""

from __future__ import annotations

import random
import shutil
import sqlite3
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from bench.search_bench import _entry, make_queries, sentence_pool
from bench.timing import timed
from core.backends import MemorySearchOptions
from core.backends.postgres import PostgresMemoryBackend
from core.backends.sqlite import SqliteMemoryBackend
from core.search.chunking import chunk_markdown
from core.settings.connections import set_connection
from core.storage import fileio
from core.storage.fileio import MAX_FILE_SIZE
from gui.watcher import COALESCE_MS

REPO = Path(__file__).resolve().parent.parent
REAL = REPO / "tests" / "data" / "fusion-real" / ".fusion" / "memory.md"
APPENDS = 200
WRITES = 30
QUERIES = 300
NOTIFIES = 50
EDITOR_APPENDS = 40
PER_DOC = 2_000  # entries per document: about 500 KB, under the 1 MiB limit


def p95(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[max(0, int(len(ordered) * 0.95) - 1)]


def row(name: str, pg: list[float], lite: list[float] | None, floor: str, target: float | None = None) -> None:
    lite_s = f"sqlite p95 {p95(lite):7.2f} ms (median {statistics.median(lite):.2f})" if lite else "sqlite  n/a"
    verdict = ""
    if target is not None:
        verdict = f"  [target <= {target:g} ms: {'met' if p95(pg) <= target else 'NOT met'}]"
    print(f"{name:<34} postgres p95 {p95(pg):7.2f} ms (median {statistics.median(pg):.2f})   {lite_s}{verdict}")
    print(f"{'':<34} floor: {floor}")


def corpus(entries: int, seed: int) -> dict[str, str]:
    """``entries`` realistic entries in daily documents of :data:`PER_DOC` entries each."""
    rng = random.Random(seed)
    pool = sentence_pool()
    docs: dict[str, str] = {}
    day = 0
    left = entries
    while left > 0:
        n = min(PER_DOC, left)
        day += 1
        name = f".fusion/memory/20{10 + day // 365:02d}-{1 + (day // 28) % 12:02d}-{1 + day % 28:02d}.md"
        body = "\n".join(_entry(rng, pool) for _ in range(n))
        text = f"# Daily Memory\n\n## Context\n\n{body}\n"
        assert len(text.encode("utf-8")) <= MAX_FILE_SIZE
        docs[name] = text
        left -= n
    return docs


def open_pg(root: Path, key: str, mirror: bool = True) -> PostgresMemoryBackend:
    b = PostgresMemoryBackend()
    b.initialize({"connection": "bench", "projectKey": key, "mirror": mirror}, root)
    return b


def open_sqlite(root: Path) -> SqliteMemoryBackend:
    b = SqliteMemoryBackend()
    b.initialize({}, root)
    return b


def floors(server_dsn: str, tmp: Path) -> tuple[str, str]:
    import psycopg

    with psycopg.connect(server_dsn, autocommit=True) as conn:
        conn.execute("CREATE TEMP TABLE t (x int)")
        rt = timed(lambda _i: conn.execute("SELECT 1").fetchone(), 200)
        conn.execute("CREATE TABLE IF NOT EXISTS bench_floor (x int)")
        ins = timed(lambda i: conn.execute("INSERT INTO bench_floor VALUES (%s)", (i,)), 200)
    db = sqlite3.connect(tmp / "floor.db", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE t (x int)")
    lite = timed(lambda i: db.execute("INSERT INTO t VALUES (?)", (i,)), 200)
    db.close()
    cpu = timed(lambda _i: sum(range(20_000)), 300)
    return (f"SELECT 1 round trip p95 {p95(rt):.2f} ms, one-row committed INSERT p95 {p95(ins):.2f} ms",
            f"sqlite one-row committed INSERT (WAL, synchronous=FULL) p95 {p95(lite):.2f} ms",
            f"a fixed CPU loop: median {statistics.median(cpu):.2f} ms, p95 {p95(cpu):.2f} ms (p95s include such stalls)")


def bench_append(tmp: Path, mirror: bool) -> tuple[list[float], list[float]]:
    real = REAL.read_text(encoding="utf-8")
    roots = {k: tmp / f"append-{k}-{mirror}" for k in ("pg", "sqlite")}
    for r in roots.values():
        (r / ".fusion").mkdir(parents=True)
        (r / ".fusion" / "memory.md").write_text(real, encoding="utf-8")
    pg = open_pg(roots["pg"], f"bench-append-{mirror}", mirror=mirror)
    if not mirror:
        pg.write(real)
    lite = SqliteMemoryBackend()
    lite.initialize({"mirror": mirror}, roots["sqlite"])

    def entry(i: int) -> str:
        return f"\n\n<!-- 2026-12-01 -->\nbench entry {i} {random.random():.12f}"

    def pg_append(i: int) -> None:
        e = entry(i)
        pg.append_document(pg.primary, lambda cur: None if e.strip() in cur else e)

    def lite_append(i: int) -> None:
        e = entry(i)
        with fileio.file_lock(roots["sqlite"], ".fusion/memory.md"):
            cur = lite.read()
            if e.strip() not in cur:
                lite.write(cur + e, expected_hash=fileio.content_hash(cur), source="append")

    try:
        return timed(pg_append, APPENDS), timed(lite_append, APPENDS)
    finally:
        pg.shutdown()
        lite.shutdown()


def bench_big_write(tmp: Path, mode: str) -> tuple[list[float], list[float]]:
    """1 MiB of list entries replaced: ``edit`` one more entry each time, ``prune`` an early entry (every
    later entry moves up a line), or ``new``: every entry new."""
    rng = random.Random(5)
    pool = sentence_pool()
    roots = {k: tmp / f"write-{k}-{mode}" for k in ("pg", "sqlite")}
    for r in roots.values():
        r.mkdir()
    pg = open_pg(roots["pg"], f"bench-write-{mode}")
    lite = open_sqlite(roots["sqlite"])

    def fresh() -> list[str]:
        out, size = [], 40
        while size < MAX_FILE_SIZE - 400:
            item = f"- {rng.choice(pool)} ({rng.randint(1, 99999)})\n"
            out.append(item)
            size += len(item.encode("utf-8"))
        return out

    current = fresh()

    def text(i: int) -> str:
        nonlocal current
        if mode == "new":
            current = fresh()
        elif mode == "prune":
            del current[rng.randrange(len(current) // 10)]
        else:
            current[rng.randrange(len(current))] = f"- edited entry {i} {rng.random():.10f}\n"
        return "# Project Memory\n\n## Context\n\n" + "".join(current)

    try:
        n = WRITES // 2 if mode == "new" else WRITES
        pg_t = timed(lambda i: pg.write(text(i), source="bench"), n, warm=2)
        lite_t = timed(lambda i: lite.write(text(i), source="bench"), n, warm=2)
        return pg_t, lite_t
    finally:
        pg.shutdown()
        lite.shutdown()


def bench_search(tmp: Path, entries: int) -> tuple[list[float], list[float], float, float]:
    docs = corpus(entries, seed=entries)
    pg_root, lite_root = tmp / f"search-pg-{entries}", tmp / f"search-sqlite-{entries}"
    for rel, text in docs.items():
        p = lite_root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    pg_root.mkdir()
    pg = open_pg(pg_root, f"bench-search-{entries}", mirror=False)
    start = time.perf_counter()
    for rel, text in docs.items():
        pg.write_document(rel, text, source="bench")
    load_s = time.perf_counter() - start
    lite = open_sqlite(lite_root)
    start = time.perf_counter()
    lite.search("warm up the index")
    index_s = time.perf_counter() - start
    texts = [e.text for rel, text in docs.items() for e in chunk_markdown(text, rel)]
    queries = make_queries(random.Random(entries), texts, QUERIES)
    opts = MemorySearchOptions(limit=10)
    try:
        # Warmed on the last ten queries (timed() warms with fn(-1), fn(-2), ...), then every query timed.
        pg_times = timed(lambda i: pg.search(queries[i], opts), len(queries), warm=10)
        lite_times = timed(lambda i: lite.search(queries[i], opts), len(queries), warm=10)
        return pg_times, lite_times, load_s, index_s
    finally:
        pg.shutdown()
        lite.shutdown()


def bench_notify(tmp: Path) -> tuple[list[float], list[float] | None]:
    host_a, host_b = tmp / "notify-a", tmp / "notify-b"
    host_a.mkdir()
    host_b.mkdir()
    a, b = open_pg(host_a, "bench-notify"), open_pg(host_b, "bench-notify")
    a.write("# Project Memory\n")
    arrived = threading.Event()
    stamp: list[float] = []

    def on_change(change) -> None:
        if not change.own:
            stamp.append(time.perf_counter())
            arrived.set()

    handle = a.watch(on_change)
    times = []
    try:
        for i in range(NOTIFIES):
            arrived.clear()
            start = time.perf_counter()
            b.append_document(b.primary, lambda cur, i=i: f"\n\n<!-- 2026-12-01 -->\nfrom host B {i} {random.random()}")
            if not arrived.wait(10):
                raise RuntimeError("a notification did not arrive")
            times.append((stamp[-1] - start) * 1000)
    finally:
        handle.stop()
        a.shutdown()
        b.shutdown()
    return times, bench_file_watch(tmp)


def bench_file_watch(tmp: Path) -> list[float] | None:
    """sqlite's equivalent: a write to the mirror file, seen by a watchdog observer."""
    try:
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer
    except ImportError:
        return None
    root = tmp / "watch-sqlite"
    root.mkdir()
    lite = open_sqlite(root)
    lite.write("# Project Memory\n")
    seen = threading.Event()
    stamp: list[float] = []

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event) -> None:  # noqa: ANN001
            if str(event.src_path).endswith("memory.md") or str(getattr(event, "dest_path", "")).endswith("memory.md"):
                stamp.append(time.perf_counter())
                seen.set()

    obs = Observer()
    obs.schedule(Handler(), str(root / ".fusion"), recursive=False)
    obs.start()
    times = []
    try:
        time.sleep(0.2)
        for i in range(NOTIFIES):
            seen.clear()
            start = time.perf_counter()
            lite.write(lite.read() + f"\n\n<!-- 2026-12-01 -->\nentry {i} {random.random()}")
            if not seen.wait(10):
                return None
            times.append((stamp[0 if len(stamp) == 1 else -1] - start) * 1000)
            stamp.clear()
            time.sleep(0.02)
    finally:
        obs.stop()
        obs.join()
        lite.shutdown()
    return times


def _editor_delays(tmp: Path, name: str, config: dict, other_append: Callable[[Path, str], None]) -> list[float]:
    """Open ``config``'s project (the real memory) in a main window; time ``other_append`` to the editor's text."""
    import json
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("QT_LOGGING_RULES", "qt.qpa.*=false")
    from PySide6.QtCore import QEventLoop, QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    from core.project import Project
    from gui.main_window import MainWindow
    from gui.recent import RecentProjects

    app = QApplication.instance() or QApplication([])
    root = tmp / f"editor-{name}"
    (root / ".fusion").mkdir(parents=True)
    (root / ".fusion" / "config.json").write_text(json.dumps(config), encoding="utf-8")
    seed = Project(root)
    seed.write(None, REAL.read_text(encoding="utf-8"))
    seed.close()
    win = MainWindow(root, recent=RecentProjects(QSettings(str(tmp / f"{name}.ini"), QSettings.Format.IniFormat)))
    win.confirm_discard = lambda: "discard"
    win.show()
    app.processEvents()
    text_edit = win.editor.text_edit  # type: ignore[union-attr]
    times: list[float] = []
    try:
        for i in range(-3, EDITOR_APPENDS):  # three warm-up appends
            marker = f"entry {i} for the editor {random.random()}"
            loop = QEventLoop()
            seen: list[float] = []
            started: list[float] = []

            def check(marker: str = marker, loop: QEventLoop = loop, seen: list[float] = seen) -> None:
                if not seen and marker in text_edit.toPlainText():
                    seen.append(time.perf_counter())
                    loop.quit()

            text_edit.textChanged.connect(check)
            QTimer.singleShot(10_000, loop.quit)

            def append(marker: str = marker, started: list[float] = started) -> None:
                started.append(time.perf_counter())
                other_append(root, marker)

            worker = threading.Thread(target=append)  # the GUI thread keeps running its event loop
            worker.start()
            loop.exec()
            worker.join()
            text_edit.textChanged.disconnect(check)
            if not seen:
                raise RuntimeError(f"{name}: the entry did not reach the editor within 10 s")
            if i >= 0:
                times.append((seen[0] - started[0]) * 1000)
            time.sleep(0.05)  # apart, so the file watcher's debounce does not merge two appends
            app.processEvents()
    finally:
        win.close()
        app.processEvents()
    return times


def bench_editor(tmp: Path) -> tuple[list[float], list[float], list[float] | None]:
    """Another host's append to the entry in this host's open editor: postgres mirror on, off; sqlite."""
    out: list[list[float]] = []
    for mirror in (True, False):
        key = f"bench-editor-{mirror}"
        host_b = tmp / f"editor-host-b-{mirror}"
        host_b.mkdir()
        b = open_pg(host_b, key, mirror)
        try:
            out.append(_editor_delays(
                tmp, f"pg-{mirror}", {"memoryBackend": "postgres",
                                      "memoryBackendConfig": {"connection": "bench", "projectKey": key,
                                                              "mirror": mirror}},
                lambda _root, text, b=b: b.append_document(b.primary, lambda cur: f"\n\n<!-- 2026-12-01 -->\n{text}")))
        finally:
            b.shutdown()

    def lite_append(root: Path, text: str) -> None:
        from core.project import Project

        other = Project(root)  # another writer: its own project and backend over the same files
        try:
            other.append(text)
        finally:
            other.close()

    try:
        lite: list[float] | None = _editor_delays(tmp, "sqlite", {"memoryBackend": "sqlite"}, lite_append)
    except RuntimeError:
        lite = None
    return out[0], out[1], lite


def main() -> None:
    """Start a cluster, run every figure, stop the cluster."""
    import os

    from tests.core.pg_server import binaries_missing, start_server, stop_server

    reason = binaries_missing()
    if reason:
        print(f"postgres benchmark skipped: {reason}")
        return
    tmp = Path(tempfile.mkdtemp(prefix="memdesk-pgbench-"))
    os.environ["MEMDESK_CONFIG_DIR"] = str(tmp / "user-config")
    server = start_server()
    try:
        set_connection("bench", server.dsn())
        pg_floor, lite_floor, cpu_floor = floors(server.dsn(), tmp)
        print(f"PostgreSQL 15 on 127.0.0.1 (default settings, fsync on); {os.cpu_count()} CPUs, "
              f"load average {os.getloadavg()[0]:.1f}")
        print(f"floors: postgres {pg_floor}; {lite_floor}; {cpu_floor}")
        for mirror in (True, False):
            pg_t, lite_t = bench_append(tmp, mirror)
            row(f"append (100 KB memory, mirror {'on' if mirror else 'off'})", pg_t, lite_t, pg_floor, target=10)
        for mode, label in (("edit", "1 entry edited"), ("prune", "early entry pruned"), ("new", "all entries new")):
            pg_t, lite_t = bench_big_write(tmp, mode)
            row(f"1 MiB write, {label}", pg_t, lite_t, pg_floor)
        for n in (10_000, 100_000):
            pg_t, lite_t, load_s, index_s = bench_search(tmp, n)
            row(f"keyword search, {n:,} entries", pg_t, lite_t,
                f"{cpu_floor}; corpus loaded into postgres in {load_s:.1f} s, sqlite indexed it in {index_s:.1f} s",
                target=10 if n == 100_000 else None)
        pg_t, watch_t = bench_notify(tmp)
        row("another host's append -> callback", pg_t, watch_t,
            "from the append's start (commit included) to the watcher's callback, its mirror refreshed; "
            "sqlite: write to a watchdog event on the mirror file")
        on_t, off_t, lite_t = bench_editor(tmp)
        for label, t in (("mirror on", on_t), ("mirror off", off_t)):
            row(f"NOTIFY -> editor text, {label}", t, lite_t,
                f"the append -> callback p95 above ({p95(pg_t):.2f} ms) plus the window's {COALESCE_MS} ms "
                "coalescing; timed from the append's start (commit included) to the entry in the open editor's "
                "text; sqlite: another writer's append, the window's file watcher (150 ms debounce)", target=300)
    finally:
        stop_server(server)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
