"""memdesk against Fusion's settings API, through a local server speaking Fusion's routes, shapes, auth and
errors as read in Fusion's dashboard code (see ``tests/core/fusion_contract_server.py`` for each source).

What Fusion answers decides what memdesk shows; a change is a minimal patch (``null`` deletes) that Fusion
validates and records; every failure is one line and falls back to the last values read, read-only.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.errors import SettingsError
from core.settings import load_settings, read_settings, update_settings
from core.settings.store import StoreReadOnlyError, detect_store
from core.settings.store.connections import save_connection
from tests.core.fusion_contract_server import FusionState, RunningFusion, start_fusion

REPO = Path(__file__).resolve().parents[3]
LAYERED = REPO / "tests" / "data" / "fusion-layered"



@pytest.fixture
def fusion_server() -> Iterator[RunningFusion]:
    running = start_fusion(FusionState())
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def current(tmp_path: Path, user_config_dir: Path) -> Path:
    """A current-Fusion project (layered layout) with nothing of memdesk in it."""
    root = tmp_path / "current"
    shutil.copytree(LAYERED, root)
    return root


@pytest.fixture
def connected(current: Path, fusion_server):
    fusion_server.state.projects["proj_1"] = {"path": str(current.resolve()),
                                              "settings": {"taskPrefix": "FN", "memoryEnabled": True}}
    fusion_server.state.projects["proj_other"] = {"path": "/somewhere/else", "settings": {}}
    save_connection(current, fusion_server.url, fusion_server.state.token)
    return current, fusion_server


def project_files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_running_fusion_is_the_store_and_is_named(connected):
    root, fusion = connected
    info = detect_store(root).info
    assert (info.kind, info.url, info.read_only) == ("fusion-api", fusion.url, None)
    assert info.name == f"Fusion, running, at {fusion.url}"
    s = load_settings(root)
    assert s.memory_backend_type == "qmd" and s.memory_backend == "qmd"  # Fusion's default backend, as Fusion says
    assert ("GET", "/api/projects", None) in fusion.state.requests  # the project found by its path


def test_a_change_is_a_minimal_patch_fusion_records_and_nothing_is_written_in_the_project(connected):
    root, fusion = connected
    before = project_files(root)
    fusion.state.requests.clear()
    update_settings(root, {"memoryEnabled": False})
    puts = [(path, body) for method, path, body in fusion.state.requests if method == "PUT"]
    assert puts == [("/api/settings", {"memoryEnabled": False})]
    assert fusion.state.projects["proj_1"]["settings"] == {"taskPrefix": "FN", "memoryEnabled": False}
    assert fusion.state.revisions[-1] == {"before": {"taskPrefix": "FN", "memoryEnabled": True},
                                          "after": {"taskPrefix": "FN", "memoryEnabled": False}}
    assert load_settings(root).memory_enabled is False
    assert project_files(root) == before  # never a copy Fusion would ignore


def test_null_deletes_and_a_global_memory_setting_goes_to_fusions_global_route(connected):
    root, fusion = connected
    update_settings(root, {"memoryDreamsEnabled": True, "memoryDreamsSchedule": "30 4 * * *"})
    fusion.state.requests.clear()
    update_settings(root, {"memoryDreamsSchedule": None})
    assert [(m, p, b) for m, p, b in fusion.state.requests if m == "PUT"] == [
        ("PUT", "/api/settings", {"memoryDreamsSchedule": None})]
    assert "memoryDreamsSchedule" not in fusion.state.projects["proj_1"]["settings"]
    update_settings(root, {"agentMemoryInclusionMode": "index"})
    assert fusion.state.global_settings == {"agentMemoryInclusionMode": "index"}
    assert load_settings(root).agent_memory_inclusion_mode == "index"


def test_memdesk_only_settings_never_go_to_fusion(connected):
    root, fusion = connected
    fusion.state.requests.clear()
    update_settings(root, {"historyRetentionDays": 7, "memoryBackend": "sqlite"})
    assert not [r for r in fusion.state.requests if r[0] == "PUT"]
    assert json.loads((root / ".fusion/memdesk/settings.json").read_text()) == {
        "historyRetentionDays": 7, "memoryBackend": "sqlite"}


def test_a_rejection_is_fusions_message_at_its_field(connected):
    root, fusion = connected
    with pytest.raises(SettingsError) as info:
        update_settings(root, {"memoryBackupRetention": 101})  # memdesk's model checks Fusion's bound first
    assert info.value.field == "memoryBackupRetention"
    fusion.state.projects["proj_1"]["settings"]["memoryBackupRetention"] = 14
    # A value memdesk's model accepts but this Fusion refuses: Fusion's own words, at the field.
    from tests.core import fusion_contract_server as srv

    old = srv.GLOBAL_ONLY
    srv.GLOBAL_ONLY = frozenset({*old, "memoryBackupScope"})
    try:
        with pytest.raises(SettingsError) as info:
            update_settings(root, {"memoryBackupScope": "agents"})
    finally:
        srv.GLOBAL_ONLY = old
    assert info.value.field == "memoryBackupScope"
    assert "Cannot update global settings via this endpoint" in str(info.value) and "\n" not in str(info.value)
    assert "memoryBackupScope" not in fusion.state.projects["proj_1"]["settings"]


def test_a_refused_token_is_one_line_and_the_view_falls_back_to_read_only(connected, fusion_server):
    root, fusion = connected
    load_settings(root)  # read once: kept as the last values read
    save_connection(root, fusion.url, "fn_wrong")
    store = detect_store(root)
    assert store.info.kind == "fusion-readonly"
    assert "refused memdesk's token (HTTP 401: Valid bearer token required)" in store.info.read_only
    assert store.info.read_only.endswith("start Fusion to change its settings")
    with pytest.raises(StoreReadOnlyError) as info:
        update_settings(root, {"memoryEnabled": False})
    assert "\n" not in str(info.value)
    assert fusion.state.revisions == []


def test_fusion_stopped_shows_the_last_values_read_read_only(connected):
    root, fusion = connected
    update_settings(root, {"memoryEnabled": False})
    fusion.stop()
    read = read_settings(root)
    assert read.store.kind == "fusion-readonly" and "unreachable" in read.store.read_only
    assert "start Fusion to change its settings" in read.store.read_only
    assert read.settings.memory_enabled is False  # the last values read
    before = project_files(root)
    with pytest.raises(StoreReadOnlyError):
        update_settings(root, {"memoryEnabled": True})
    assert project_files(root) == before


def test_an_answer_that_is_not_a_settings_object_is_named(connected):
    root, fusion = connected
    fusion.state.answer_nonsense = True
    store = detect_store(root)
    assert store.info.kind == "fusion-readonly"
    assert "answered" in store.info.read_only and "not a list of projects" in store.info.read_only


def test_discovered_from_fusions_own_global_settings_without_guessing(current: Path, tmp_path: Path, monkeypatch):
    state = FusionState()
    state.projects["proj_1"] = {"path": str(current.resolve()), "settings": {"memoryEnabled": False}}
    running = start_fusion(state)
    try:
        home = tmp_path / "fusion-home"
        home.mkdir()
        port = int(running.url.rsplit(":", 1)[1])
        (home / "settings.json").write_text(json.dumps({"daemonToken": state.token, "daemonPort": port}))
        monkeypatch.setenv("MEMDESK_FUSION_HOME", str(home))
        info = detect_store(current).info
        assert (info.kind, info.url) == ("fusion-api", running.url)
        assert load_settings(current).memory_enabled is False
        other = tmp_path / "other"
        other.mkdir()
        assert detect_store(other).info.kind == "config-json"  # this Fusion does not run that project
    finally:
        running.stop()


def test_no_fusion_settings_means_no_request_at_all(current: Path, fusion_server):
    assert detect_store(current).info.kind == "config-json"
    assert fusion_server.state.requests == []


def test_cli_connect_keeps_the_connection_in_the_user_config_and_settings_name_the_api(current: Path, fusion_server,
                                                                                      user_config_dir: Path):
    fusion_server.state.projects["proj_1"] = {"path": str(current.resolve()), "settings": {}}
    env = {**os.environ, "PYTHONPATH": str(REPO), "MEMDESK_CONFIG_DIR": str(user_config_dir)}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "core.cli", *args, "--project", str(current)], env=env,
                              capture_output=True, text=True, timeout=60)

    bad = cli("fusion", "connect", "--url", fusion_server.url, "--token", "nope")
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "refused memdesk's token" in bad.stderr
    ok = cli("fusion", "connect", "--url", fusion_server.url, "--token", fusion_server.state.token)
    assert ok.returncode == 0, ok.stderr
    kept = user_config_dir / "fusion.json"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert json.loads(kept.read_text())["projects"][str(current.resolve())]["projectId"] == "proj_1"
    got = json.loads(cli("settings", "get", "--json").stdout)
    assert got["store"] == {"kind": "fusion-api", "name": f"Fusion, running, at {fusion_server.url}",
                            "url": fusion_server.url, "readOnly": None}
    out = cli("settings", "set", "memoryDreamsEnabled", "true")
    assert out.stdout.strip() == f"memoryDreamsEnabled = true  (saved in Fusion, running, at {fusion_server.url})"
    assert fusion_server.state.projects["proj_1"]["settings"] == {"memoryDreamsEnabled": True}
    assert not (current / ".fusion" / "memdesk").exists()
    fusion_server.stop()
    down = cli("settings", "set", "memoryDreamsEnabled", "false")
    assert down.returncode == 1 and down.stderr.count("\n") == 1 and "start Fusion" in down.stderr


def test_the_last_values_read_are_rewritten_only_when_they_change(connected, user_config_dir: Path):
    root, fusion = connected
    load_settings(root)
    [cache] = list((user_config_dir / "fusion-cache").iterdir())
    stamp = cache.stat().st_mtime_ns, cache.stat().st_ino
    for _ in range(3):
        load_settings(root)
    assert (cache.stat().st_mtime_ns, cache.stat().st_ino) == stamp
    update_settings(root, {"memoryEnabled": False})
    assert json.loads(cache.read_text())["settings"]["memoryEnabled"] is False


def test_a_fusion_kept_for_every_project_leaves_the_projects_it_does_not_run_alone(current: Path, fusion_server,
                                                                                    tmp_path: Path):
    fusion_server.state.projects["proj_1"] = {"path": str(current.resolve()), "settings": {}}
    save_connection(None, fusion_server.url, fusion_server.state.token)  # memdesk fusion connect --all-projects
    assert detect_store(current).info.kind == "fusion-api"
    other = tmp_path / "other"
    other.mkdir()
    assert detect_store(other).info.kind == "config-json"  # not read-only: that Fusion does not run it


def test_fusions_other_project_settings_go_to_its_api_and_its_flags_to_the_global_route(connected):
    """Issue 23 item 5: a key of Fusion's project settings memdesk does not model (``autoMerge``) is sent as a
    minimal patch to ``PUT /api/settings``; the dashboard's ``experimentalFeatures`` (global-only in Fusion,
    ``settings-schema.ts`` at 00982d1c) to ``PUT /api/settings/global``; a key Fusion does not have, or a
    wrong type, is refused before any request."""
    root, fusion = connected
    fusion.state.requests.clear()
    update_settings(root, {"autoMerge": False})
    update_settings(root, {"experimentalFeatures": {"memoryView": False}})
    assert [(p, b) for m, p, b in fusion.state.requests if m == "PUT"] == [
        ("/api/settings", {"autoMerge": False}),
        ("/api/settings/global", {"experimentalFeatures": {"memoryView": False}})]
    assert fusion.state.projects["proj_1"]["settings"]["autoMerge"] is False
    assert read_settings(root).fusion_raw["experimentalFeatures"] == {"memoryView": False}
    fusion.state.requests.clear()
    for patch in ({"noSuchSetting": 1}, {"autoMerge": "no"}, {"themeMode": "dark"}):
        with pytest.raises(SettingsError) as info:
            update_settings(root, patch)
        assert info.value.field == next(iter(patch))
    assert not [r for r in fusion.state.requests if r[0] == "PUT"]
