"""Settings where the agents read them (issue 18): reading and changing seed-era Fusion's ``fusion.db``, and
the watcher's look, each beside its floor from the same run on the real fixture (``tests/data/fusion-seed-db``).

Floors: what Fusion's own code does for the same job, as SQL on the same database (``readConfig``: the
``config`` row parsed; ``writeConfig``: ``INSERT OR REPLACE`` of the row, ``bumpLastModified``, the
``config.json`` copy through a temporary file), so a figure far above its floor is memdesk's overhead.
The watcher looks every 600 ms: its look must stay a small part of that.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench import timing

REPO = Path(__file__).resolve().parents[1]
SEED = REPO / "tests" / "data" / "fusion-seed-db"
N = 200


def timed(fn: Callable[[int], object], n: int = N) -> list[float]:
    """Milliseconds of ``fn(i)`` for ``n`` calls after ten warm-up calls (:func:`bench.timing.timed`)."""
    return timing.timed(fn, n, warm=10)


def row(name: str, ms: list[float], floor: list[float], floor_name: str) -> None:
    med, p95 = statistics.median(ms), sorted(ms)[int(len(ms) * 0.95) - 1]
    fmed = statistics.median(floor)
    print(f"{name:<46} median {med:7.3f} ms  p95 {p95:7.3f} ms | floor ({floor_name}) {fmed:7.3f} ms "
          f"= x{med / fmed:.1f}")


def main() -> None:
    os.environ.setdefault("MEMDESK_FUSION_HOME", tempfile.mkdtemp(prefix="no-fusion-"))
    os.environ.setdefault("MEMDESK_CONFIG_DIR", tempfile.mkdtemp(prefix="bench-cfg-"))
    from core.settings import read_settings, update_settings
    from core.settings.poll import poll_settings

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "seed"
        shutil.copytree(SEED, root)
        for path in [root, *root.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
        db = root / ".fusion" / "fusion.db"

        def fusion_read(_i: int) -> object:
            conn = sqlite3.connect(db)
            try:
                return json.loads(conn.execute("SELECT * FROM config WHERE id = 1").fetchone()[3])
            finally:
                conn.close()

        def fusion_write(i: int) -> None:
            conn = sqlite3.connect(db, isolation_level=None)
            try:
                r = conn.execute("SELECT nextId, nextWorkflowStepId, settings, workflowSteps FROM config WHERE id = 1").fetchone()
                settings = {**json.loads(r[2]), "maxConcurrent": 2 + i % 3}
                conn.execute("INSERT OR REPLACE INTO config (id, nextId, nextWorkflowStepId, settings, workflowSteps, "
                             "updatedAt) VALUES (1, ?, ?, ?, ?, ?)",
                             (r[0], r[1], json.dumps(settings, separators=(",", ":")), r[3], "2026-12-01T00:00:00.000Z"))
                cur = int(conn.execute("SELECT value FROM __meta WHERE key = 'lastModified'").fetchone()[0])
                conn.execute("UPDATE __meta SET value = ? WHERE key = 'lastModified'",
                             (str(max(int(time.time() * 1000), cur + 1)),))
            finally:
                conn.close()
            tmp_copy = root / ".fusion" / "config.json.tmp"
            tmp_copy.write_text(json.dumps({"nextId": r[0], "settings": settings}, indent=2))
            os.replace(tmp_copy, root / ".fusion" / "config.json")

        print(f"fixture: {SEED.relative_to(REPO)} ({db.stat().st_size:,} bytes, schema 36, WAL); {N} runs each")
        row("read_settings (detect + row + own file)", timed(lambda _i: read_settings(root)), timed(fusion_read),
            "Fusion's readConfig SQL")
        row("update_settings one key (txn + config.json copy)",
            timed(lambda i: update_settings(root, {"insightExtractionMinIntervalMs": 3_600_000 * (1 + i % 5)})),
            timed(fusion_write), "Fusion's writeConfig SQL + copy")
        stamp = poll_settings(root, None).stamp
        row("watcher look, nothing changed", timed(lambda _i: poll_settings(root, stamp)), timed(fusion_read),
            "Fusion's readConfig SQL")
        api(Path(tmp))


def api(tmp: Path) -> None:
    """The same through Fusion's settings API (the local server speaking its routes, tests/core/
    fusion_contract_server.py); floor: one authenticated ``GET /api/settings`` with the same client."""
    import httpx

    from core.settings import read_settings, update_settings
    from core.settings.poll import poll_settings
    from core.settings.store.connections import save_connection
    from tests.core.fusion_contract_server import FusionState, start_fusion

    os.environ["MEMDESK_CONFIG_DIR"] = str(tmp / "cfg")
    root = tmp / "current"
    shutil.copytree(REPO / "tests" / "data" / "fusion-layered", root)
    running = start_fusion(FusionState())
    try:
        running.state.projects["proj_1"] = {"path": str(root.resolve()), "settings": {"memoryEnabled": True}}
        save_connection(root, running.url, running.state.token)
        client = httpx.Client(headers={"Authorization": f"Bearer {running.state.token}"})

        def floor(_i: int) -> object:
            return client.get(running.url + "/api/settings", params={"projectId": "proj_1"}).json()

        row("API: read_settings (projects + settings)", timed(lambda _i: read_settings(root), 100), timed(floor, 100),
            "one GET /api/settings")
        row("API: update_settings one key (GET + PUT + GET)",
            timed(lambda i: update_settings(root, {"memoryDreamsEnabled": i % 2 == 0}), 100), timed(floor, 100),
            "one GET /api/settings")
        stamp = poll_settings(root, None).stamp
        row("API: watcher look, nothing changed", timed(lambda _i: poll_settings(root, stamp), 100), timed(floor, 100),
            "one GET /api/settings")
        client.close()
    finally:
        running.stop()


if __name__ == "__main__":
    main()
