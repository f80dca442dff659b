"""``memdesk serve``'s ``GET/PUT /api/settings``: Fusion's shapes (Runfusion/Fusion
``packages/dashboard/src/routes/register-settings-memory-routes.ts``), from the same store as the app and CLI."""

from __future__ import annotations

import json
import shutil
import sqlite3
import stat
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SEED = REPO / "tests" / "data" / "fusion-seed-db"


def _seed(tmp_path: Path) -> Path:
    root = tmp_path / "seed"
    shutil.copytree(SEED, root)
    for path in [root, *root.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    return root


def _row(root: Path) -> dict:
    conn = sqlite3.connect(root / ".fusion" / "fusion.db")
    try:
        return json.loads(conn.execute("SELECT settings FROM config WHERE id = 1").fetchone()[0])
    finally:
        conn.close()


def test_get_answers_the_merged_settings_and_names_the_store(serve, token, tmp_path: Path):
    root = _seed(tmp_path)
    client = serve(root, mcp=False).client(token)
    resp = client.get("/api/settings")
    assert resp.status_code == 200
    body = resp.json()
    assert body["taskPrefix"] == "FN" and body["maxConcurrent"] == 2  # Fusion's keys memdesk does not know
    assert body["insightExtractionSchedule"] == "30 3 * * 1-5" and body["memoryDreamsSchedule"] == "0 4 * * *"
    assert body["settingsStore"] == {"kind": "fusion-db", "name": "Fusion's database .fusion/fusion.db",
                                     "path": ".fusion/fusion.db", "readOnly": None}


def test_put_is_a_patch_where_null_deletes_and_it_lands_in_fusions_row(serve, token, tmp_path: Path):
    root = _seed(tmp_path)
    client = serve(root, mcp=False).client(token)
    resp = client.put("/api/settings", json={"memoryEnabled": False, "insightExtractionSchedule": None,
                                             "prAuthAvailable": True, "settingsStore": {"kind": "x"}})
    assert resp.status_code == 200, resp.text
    assert resp.json()["memoryEnabled"] is False and resp.json()["insightExtractionSchedule"] == "0 2 * * *"
    row = _row(root)
    assert row["memoryEnabled"] is False and "insightExtractionSchedule" not in row and "prAuthAvailable" not in row
    assert row["taskPrefix"] == "FN"


def test_a_refused_setting_is_400_with_the_field_and_nothing_changes(serve, token, tmp_path: Path):
    root = _seed(tmp_path)
    before = _row(root)
    client = serve(root, mcp=False).client(token)
    resp = client.put("/api/settings", json={"memoryDreamsSchedule": "every night"})
    assert resp.status_code == 400
    assert resp.json()["details"]["field"] == "memoryDreamsSchedule" and "cron" in resp.json()["error"]
    assert _row(root) == before
    assert client.put("/api/settings", json={"bogus": 1}).status_code == 400


def test_a_store_that_cannot_take_changes_is_409(serve, token, tmp_path: Path):
    root = _seed(tmp_path)
    conn = sqlite3.connect(root / ".fusion" / "fusion.db", isolation_level=None)
    conn.execute("UPDATE config SET settings = '[]' WHERE id = 1")
    conn.close()
    client = serve(root, mcp=False).client(token)
    resp = client.put("/api/settings", json={"memoryEnabled": False})
    assert resp.status_code in (400, 409) and "fusion.db" in resp.json()["error"]
    assert client.get("/api/settings", headers={"Authorization": "Bearer nope"}).status_code == 401
