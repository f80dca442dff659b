"""Seed-era Fusion's settings store, both directions, on a real ``fusion.db`` made with Fusion's schema.

Fusion's side is written from its code as read (Runfusion/Fusion, ``packages/core/src/store.ts``:
``readConfig`` = ``SELECT * FROM config WHERE id = 1`` with ``fromJson(row.settings)``; ``writeConfig`` =
``INSERT OR REPLACE INTO config (id, nextId, nextWorkflowStepId, settings, workflowSteps, updatedAt)``
then ``bumpLastModified`` (``packages/core/src/db.ts``: ``max(Date.now(), current + 1)``) then
``config.json`` as ``JSON.stringify({nextId, settings}, null, 2)``; ``updateSettings`` deletes the keys a
patch sets to ``null``). The fixture ``shared/fixtures/fusion-seed-db`` was made with the schema at
commit ``4579e38bd`` (schema version 36, WAL); its database and config copy are in
``tests/data/fusion-seed-db`` (the memory file is the same as ``tests/data/fusion-real``'s).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import SettingsError
from core.settings import load_settings, read_settings, update_settings
from core.settings.store import detect_store, fusion_db
from core.settings.store.own import OWN_PATH

REPO = Path(__file__).resolve().parents[3]
FIXTURE = REPO / "tests" / "data" / "fusion-seed-db"
DB = ".fusion/fusion.db"
CONFIG = ".fusion/config.json"


@pytest.fixture
def seed(tmp_path: Path) -> Path:
    root = tmp_path / "seed"
    shutil.copytree(FIXTURE, root)
    for path in [root, *root.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR | (stat.S_IXUSR if path.is_dir() else 0))
    (root / CONFIG).chmod(0o644)
    return root


# -- Fusion's side, as its code does it ----------------------------------------------------------------
def fusion_read_config(root: Path) -> dict:
    """``readConfig``: the row, ``settings`` parsed with ``fromJson``."""
    conn = sqlite3.connect(root / DB)
    conn.row_factory = sqlite3.Row
    try:
        row = conn.execute("SELECT * FROM config WHERE id = 1").fetchone()
    finally:
        conn.close()
    return {"nextId": row["nextId"] or 1, "settings": json.loads(row["settings"]) if row["settings"] else None,
            "workflowSteps": row["workflowSteps"], "nextWorkflowStepId": row["nextWorkflowStepId"] or 1,
            "updatedAt": row["updatedAt"]}


def fusion_update_settings(root: Path, patch: dict) -> None:
    """``updateSettings`` → ``writeConfig`` → ``bumpLastModified`` → the ``config.json`` copy."""
    conn = sqlite3.connect(root / DB, isolation_level=None)
    try:
        row = conn.execute("SELECT nextId, nextWorkflowStepId, settings, workflowSteps FROM config WHERE id = 1").fetchone()
        settings = json.loads(row[2])
        for key, value in patch.items():
            if value is None:
                settings.pop(key, None)
        settings.update({k: v for k, v in patch.items() if v is not None})
        conn.execute("INSERT OR REPLACE INTO config (id, nextId, nextWorkflowStepId, settings, workflowSteps, updatedAt) "
                     "VALUES (1, ?, ?, ?, ?, ?)", (row[0] or 1, row[1] or 1, json.dumps(settings, separators=(",", ":")),
                                                   row[3], "2026-04-18T10:00:00.000Z"))
        current = int(conn.execute("SELECT value FROM __meta WHERE key = 'lastModified'").fetchone()[0])
        conn.execute("UPDATE __meta SET value = ? WHERE key = 'lastModified'",
                     (str(max(int(time.time() * 1000), current + 1)),))
    finally:
        conn.close()
    (root / CONFIG).write_text(json.dumps({"nextId": row[0], "settings": settings}, indent=2))


def last_modified(root: Path) -> int:
    conn = sqlite3.connect(root / DB)
    try:
        return int(conn.execute("SELECT value FROM __meta WHERE key = 'lastModified'").fetchone()[0])
    finally:
        conn.close()


# -- the tests ---------------------------------------------------------------------------------------
def test_the_store_is_fusions_database_and_is_named(seed: Path):
    info = detect_store(seed).info
    assert (info.kind, info.path) == ("fusion-db", ".fusion/fusion.db")
    assert info.name == "Fusion's database `.fusion/fusion.db`" and info.read_only is None
    s = load_settings(seed)
    assert (s.memory_enabled, s.insight_extraction_enabled, s.insight_extraction_schedule) == (True, True, "30 3 * * 1-5")
    assert s.memory_backend == "file" and s.memory_backend_type == "file"  # Fusion's key, read as memdesk's backend


def test_switching_memory_off_is_what_fusions_readconfig_returns(seed: Path):
    before = fusion_read_config(seed)
    stamp = last_modified(seed)
    update_settings(seed, {"memoryEnabled": False})
    after = fusion_read_config(seed)
    expected = dict(before["settings"], memoryEnabled=False)
    assert after["settings"] == expected and list(after["settings"]) == list(expected)  # key order kept
    assert (after["nextId"], after["nextWorkflowStepId"], after["workflowSteps"]) == (1478, 3, "[]")
    assert after["updatedAt"] != before["updatedAt"] and after["updatedAt"].endswith("Z") and len(after["updatedAt"]) == 24
    assert last_modified(seed) > stamp
    # The raw column is compact JSON as JSON.stringify writes it.
    conn = sqlite3.connect(seed / DB)
    raw = conn.execute("SELECT settings FROM config WHERE id = 1").fetchone()[0]
    conn.close()
    assert raw == ('{"taskPrefix":"FN","memoryEnabled":false,"insightExtractionEnabled":true,'
                   '"insightExtractionSchedule":"30 3 * * 1-5","memoryBackendType":"file","maxConcurrent":2,'
                   '"autoMerge":false}')


def test_the_config_json_copy_is_refreshed_exactly_as_fusion_writes_it(seed: Path):
    mode = (seed / CONFIG).stat().st_mode & 0o777
    update_settings(seed, {"insightExtractionSchedule": "0 5 * * *"})
    assert (seed / CONFIG).read_bytes() == (
        b'{\n  "nextId": 1478,\n  "settings": {\n    "taskPrefix": "FN",\n    "memoryEnabled": true,\n'
        b'    "insightExtractionEnabled": true,\n    "insightExtractionSchedule": "0 5 * * *",\n'
        b'    "memoryBackendType": "file",\n    "maxConcurrent": 2,\n    "autoMerge": false\n  }\n}')
    assert (seed / CONFIG).stat().st_mode & 0o777 == mode  # Fusion's file keeps Fusion's permissions


def test_null_deletes_the_key_in_fusions_row_and_unknown_keys_stay(seed: Path):
    update_settings(seed, {"insightExtractionSchedule": None})
    settings = fusion_read_config(seed)["settings"]
    assert "insightExtractionSchedule" not in settings
    assert settings["taskPrefix"] == "FN" and settings["maxConcurrent"] == 2 and settings["autoMerge"] is False
    assert load_settings(seed).insight_extraction_schedule == "0 2 * * *"


def test_every_fusion_memory_key_round_trips_key_by_key(seed: Path):
    values = {"memoryDreamsEnabled": True, "memoryDreamsSchedule": "15 4 * * *", "memoryAutoSummarizeEnabled": True,
              "memoryAutoSummarizeThresholdChars": 70000, "memoryAutoSummarizeSchedule": "0 6 * * 1",
              "memoryBackupEnabled": True, "memoryBackupSchedule": "0 1 * * *", "memoryBackupRetention": 30,
              "memoryBackupDir": ".fusion/backups/m", "memoryBackupScope": "agents", "agentMemoryInclusionMode": "index",
              "insightExtractionMinIntervalMs": 3_600_000, "memoryBackendType": "qmd"}
    for key, value in values.items():
        update_settings(seed, {key: value})
        assert fusion_read_config(seed)["settings"][key] == value, key
    dumped = load_settings(seed).model_dump(by_alias=True)
    assert {k: dumped[k] for k in values} == values


def test_a_value_fusions_writeconfig_wrote_is_what_memdesk_shows(seed: Path):
    fusion_update_settings(seed, {"memoryEnabled": False, "memoryDreamsEnabled": True, "someNewFusionKey": [1, 2]})
    s = load_settings(seed)
    assert s.memory_enabled is False and s.memory_dreams_enabled is True
    fusion_update_settings(seed, {"memoryDreamsEnabled": None})
    assert load_settings(seed).memory_dreams_enabled is False
    update_settings(seed, {"memoryBackupEnabled": True})
    assert fusion_read_config(seed)["settings"]["someNewFusionKey"] == [1, 2]  # kept as it was


def test_memdesk_only_settings_never_reach_fusions_store(seed: Path):
    before = fusion_read_config(seed)
    update_settings(seed, {"memoryBackend": "sqlite", "historyRetentionDays": 10,
                           "memdeskBudgetConsumers": {".fusion/memory.md": ["fusion"]}})
    assert fusion_read_config(seed) == before
    assert json.loads((seed / OWN_PATH).read_text())["historyRetentionDays"] == 10
    assert "historyRetentionDays" not in (seed / CONFIG).read_text()
    assert load_settings(seed).memory_backend == "sqlite"


def test_the_cli_names_the_store_and_changes_fusions_row(seed: Path, tmp_path: Path):
    env = {**os.environ, "PYTHONPATH": str(REPO), "MEMDESK_CONFIG_DIR": str(tmp_path / "cfg"),
           "MEMDESK_FUSION_HOME": str(tmp_path / "no-fusion")}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "core.cli", *args, "--project", str(seed)], env=env,
                              capture_output=True, text=True, timeout=60)

    out = cli("settings", "set", "memoryEnabled", "false")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "memoryEnabled = false  (saved in Fusion's database .fusion/fusion.db)"
    assert fusion_read_config(seed)["settings"]["memoryEnabled"] is False
    got = cli("settings", "get", "--json")
    doc = json.loads(got.stdout)
    assert doc["store"] == {"kind": "fusion-db", "name": "Fusion's database .fusion/fusion.db",
                            "path": ".fusion/fusion.db", "readOnly": None}
    assert doc["settings"]["memoryEnabled"] is False
    text = cli("settings", "get")
    assert text.stdout.splitlines()[0] == "# Fusion's settings: Fusion's database .fusion/fusion.db"
    assert cli("settings", "unset", "memoryEnabled").returncode == 0
    assert "memoryEnabled" not in fusion_read_config(seed)["settings"]


def test_a_busy_database_is_retried_within_a_bound_then_named_in_one_line(seed: Path, monkeypatch):
    monkeypatch.setattr(fusion_db, "BUSY_BOUND_S", 0.6)
    before = fusion_read_config(seed)
    holder = sqlite3.connect(seed / DB, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        with pytest.raises(SettingsError) as info:
            update_settings(seed, {"memoryEnabled": False})
        assert time.monotonic() - started < 5
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    message = str(info.value)
    assert "\n" not in message and ".fusion/fusion.db is locked" in message and "nothing was changed" in message
    if Path("/proc/locks").exists():  # the holder named (here: this very process's other connection)
        assert f"pid {os.getpid()}" in message
    assert fusion_read_config(seed) == before


def test_a_lock_held_by_another_process_names_it(seed: Path, monkeypatch):
    if not Path("/proc/locks").exists():
        pytest.skip("/proc/locks is Linux's")
    monkeypatch.setattr(fusion_db, "BUSY_BOUND_S", 0.3)
    code = ("import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
            "c.execute('BEGIN IMMEDIATE'); print('held', flush=True); time.sleep(30)")
    holder = subprocess.Popen([sys.executable, "-c", code, str(seed / DB)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(SettingsError) as info:
            update_settings(seed, {"memoryEnabled": False})
        assert f"process {holder.pid} (python" in str(info.value)
    finally:
        holder.kill()
        holder.wait()


def test_a_busy_database_that_frees_up_in_time_takes_the_change(seed: Path, monkeypatch):
    import threading

    monkeypatch.setattr(fusion_db, "BUSY_BOUND_S", 5.0)
    holder = sqlite3.connect(seed / DB, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    timer = threading.Timer(0.4, lambda: (holder.execute("COMMIT"), holder.close()))
    timer.start()
    update_settings(seed, {"memoryEnabled": False})
    timer.join()
    assert fusion_read_config(seed)["settings"]["memoryEnabled"] is False


def test_a_damaged_database_is_read_only_with_the_reason_and_untouched(seed: Path):
    for extra in ("-wal", "-shm"):
        (seed / (DB + extra)).unlink(missing_ok=True)
    (seed / DB).write_bytes(b"this is not a SQLite database" * 100)
    before = (seed / DB).read_bytes(), (seed / CONFIG).read_bytes()
    info = detect_store(seed).info
    assert info.kind == "fusion-db" and info.read_only and "fusion.db" in info.read_only
    with pytest.raises(SettingsError) as err:
        update_settings(seed, {"memoryEnabled": False})
    assert "fusion.db is damaged" in str(err.value) and "changes nothing" in str(err.value)
    assert "\n" not in str(err.value)
    assert ((seed / DB).read_bytes(), (seed / CONFIG).read_bytes()) == before


def test_an_unreadable_settings_row_is_read_only(seed: Path):
    conn = sqlite3.connect(seed / DB, isolation_level=None)
    conn.execute("UPDATE config SET settings = '[1, 2]' WHERE id = 1")
    conn.close()
    info = detect_store(seed).info
    assert info.read_only and "not a JSON object" in info.read_only
    with pytest.raises(SettingsError):
        update_settings(seed, {"memoryEnabled": False})


def test_earlier_memdesk_keys_in_fusions_copy_move_out_and_the_copy_is_fusions_again(seed: Path):
    doc = json.loads((seed / CONFIG).read_text())
    doc["settings"]["memdeskBudgetConsumers"] = {".fusion/memory.md": ["claude-code"]}
    (seed / CONFIG).write_text(json.dumps(doc, indent=2) + "\n")
    assert read_settings(seed).settings.memdesk_budget_consumers == {".fusion/memory.md": ["claude-code"]}
    update_settings(seed, {"historyMinVersions": 5})
    assert "memdeskBudgetConsumers" not in (seed / CONFIG).read_text()
    assert not (seed / CONFIG).read_text().endswith("\n")  # Fusion's own formatting again
    own = json.loads((seed / OWN_PATH).read_text())
    assert own == {"memdeskBudgetConsumers": {".fusion/memory.md": ["claude-code"]}, "historyMinVersions": 5}


KEYS = ["memoryEnabled", "insightExtractionEnabled", "memoryDreamsEnabled", "memoryBackupEnabled",
        "memoryAutoSummarizeEnabled"]


@settings(deadline=None, max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.dictionaries(st.sampled_from(KEYS), st.one_of(st.none(), st.booleans()), min_size=1),
                min_size=1, max_size=4))
def test_any_sequence_of_patches_is_what_fusions_update_settings_would_store(seed: Path, patches: list[dict]):
    conn = sqlite3.connect(seed / DB, isolation_level=None)
    conn.execute("UPDATE config SET settings = ? WHERE id = 1",
                 ('{"taskPrefix":"FN","memoryEnabled":true,"someFusionKey":{"nested":[1,2.5,"é"]}}',))
    conn.close()
    expected = {"taskPrefix": "FN", "memoryEnabled": True, "someFusionKey": {"nested": [1, 2.5, "é"]}}
    for patch in patches:
        update_settings(seed, patch)
        for key, value in patch.items():  # Fusion's updateSettings: null deletes, the rest merges over
            if value is None:
                expected.pop(key, None)
            else:
                expected[key] = value
        row = fusion_read_config(seed)
        assert row["settings"] == expected and list(row["settings"]) == list(expected)
        assert (row["nextId"], row["nextWorkflowStepId"], row["workflowSteps"]) == (1478, 3, "[]")
        copy = json.loads((seed / CONFIG).read_text())
        assert copy == {"nextId": 1478, "settings": expected}
