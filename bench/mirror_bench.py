"""Appends to a database-backed project with its file mirror on: ``python -m bench mirror``.

200 in-process appends (``core.entries.append_memory_entry``, the CLI's and the servers' path) to the
real agent memory (``tests/data/fusion-real``, 102 KB) in a project on ``sqlite`` and, when PostgreSQL
binaries are there, on ``postgres``, both with the mirror on (the default: every append also reaches
the file and the mirror ledger notes it). Each append is timed beside its floor from the same run: an
``O_APPEND`` write + ``fsync`` of the same bytes to a copy of the same size, in turn.
"""

from __future__ import annotations

import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench.core_bench import append_floor, ms
from core.entries import append_memory_entry
from core.settings.model import update_settings

REPO = Path(__file__).resolve().parent.parent
REAL = REPO / "tests" / "data" / "fusion-real" / ".fusion" / "memory.md"
APPENDS = int(os.environ.get("MEMDESK_BENCH_APPENDS", "200"))


def run(root: Path, backend: str, config: dict[str, object]) -> tuple[float, float, float]:
    """Medians and p95 of ``APPENDS`` appends, and the median floor beside them."""
    (root / ".fusion").mkdir(parents=True, exist_ok=True)
    (root / ".fusion" / "memory.md").write_bytes(REAL.read_bytes())
    update_settings(root, {"memoryBackend": backend, "memoryBackendConfig": config})
    floor_file = root / "floor-append.md"
    floor_file.write_bytes(REAL.read_bytes())
    rng = random.Random(7)
    times, floors = [], []
    for i in range(-5, APPENDS):
        entry = f"bench entry {i}: {rng.random():.12f}"
        start = time.perf_counter()
        result = append_memory_entry(root, entry)
        took = (time.perf_counter() - start) * 1000
        assert result.status == "written", result
        floor = ms(lambda e=entry: append_floor(floor_file, f"\n\n<!-- 2026-12-01 -->\n{e}".encode()))
        if i >= 0:
            times.append(took)
            floors.append(floor)
    ordered = sorted(times)
    return statistics.median(times), ordered[int(len(ordered) * 0.95) - 1], statistics.median(floors)


def show(name: str, figures: tuple[float, float, float]) -> None:
    med, p95, floor = figures
    print(f"{name:<40} median {med:7.2f} ms  p95 {p95:7.2f} ms   floor (O_APPEND+fsync) {floor:5.2f} ms"
          f"   ratio {med / floor:5.1f}x")


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="memdesk-bench-mirror-"))
    os.environ["MEMDESK_CONFIG_DIR"] = str(tmp / "user-config")
    try:
        print(f"{APPENDS} appends to the real memory (102 KB), mirror on; load {os.getloadavg()[0]:.2f}")
        show("sqlite, mirror on", run(tmp / "sqlite", "sqlite", {"mirror": True}))
        from tests.core.pg_server import binaries_missing, start_server, stop_server

        if binaries_missing():
            print("postgres: skipped (no PostgreSQL binaries)")
            return
        from core.settings.bindings import confirm
        from core.settings.connections import set_connection

        server = start_server()
        try:
            set_connection("bench", server.dsn())
            (tmp / "postgres").mkdir()
            confirm(tmp / "postgres", "bench", "bench-mirror")
            show("postgres, mirror on", run(tmp / "postgres", "postgres",
                                            {"connection": "bench", "projectKey": "bench-mirror", "mirror": True}))
        finally:
            stop_server(server)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
