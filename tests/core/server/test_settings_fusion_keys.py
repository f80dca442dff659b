"""Issue 23 item 5: Fusion's dashboard changes Fusion's *other* project settings (``autoMerge``, …) through
``memdesk serve``'s ``PUT /api/settings``, each checked by the JSON type Fusion gives it
(:mod:`core.settings.fusion_keys`, read at Runfusion/Fusion ``packages/core/src/config/settings-schema.ts``
``00982d1c``), written through the project's settings store; anything else refused in one line, nothing changed.

Real ``memdesk serve`` app on loopback (the ``serve`` fixture), a config-json project (the layered fixture's
``.fusion/config.json``) and a seed-era ``fusion.db``; the CLI as a child process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.settings.fusion_keys import (
    FUSION_COMMIT,
    GLOBAL_ONLY_KEYS,
    MAX_VALUE_BYTES,
    PROJECT_KEY_TYPES,
    fusion_key_type,
)
from tests.core.server.conftest import cli_env
from tests.core.server.test_server_settings import _row, _seed  # the seeded Fusion database and its row


def _bytes(root: Path) -> dict[str, bytes]:
    """Every file under the project's ``.fusion`` folder, byte for byte."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / ".fusion").rglob("*")) if p.is_file()}


def test_the_table_pins_fusions_keys_and_types():
    """A few keys of Fusion's project settings with the type of their default at 00982d1c (read, not copied)."""
    assert FUSION_COMMIT.startswith("00982d1c")
    assert PROJECT_KEY_TYPES["autoMerge"] == "boolean"  # autoMerge: true
    assert PROJECT_KEY_TYPES["maxConcurrent"] == "number"  # maxConcurrent: 2
    assert PROJECT_KEY_TYPES["mergeStrategy"] == "string"  # mergeStrategy: "direct"
    assert PROJECT_KEY_TYPES["prerebaseHotFiles"] == "array"
    assert PROJECT_KEY_TYPES["merger"] == "object"  # { mode: "ai", maxReviewPasses: 3, … }
    assert PROJECT_KEY_TYPES["worktreeLimitEnabled"] == "boolean"  # new since d0665e98
    assert PROJECT_KEY_TYPES["executionModelId"] == "string"  # a project lane at 00982d1c
    assert "taskPopupsBoardListOnly" not in PROJECT_KEY_TYPES  # removed by FN-392
    assert fusion_key_type("experimentalFeatures") == "flags"
    assert {"themeMode", "daemonToken", "ntfyTopic", "cliAgents", "executionGlobalModelId"} <= GLOBAL_ONLY_KEYS
    assert not set(PROJECT_KEY_TYPES) & GLOBAL_ONLY_KEYS


@pytest.fixture
def config_json_project(layered_project: Path) -> Path:
    assert (layered_project / ".fusion" / "config.json").is_file()
    return layered_project


def _config(root: Path) -> dict:
    return json.loads((root / ".fusion" / "config.json").read_text(encoding="utf-8"))["settings"]


def test_auto_merge_round_trips_on_a_config_json_project(serve, token, config_json_project: Path):
    root = config_json_project
    client = serve(root, mcp=False).client(token)
    assert client.get("/api/settings").json()["settingsStore"]["kind"] == "config-json"
    resp = client.put("/api/settings", json={"autoMerge": False, "maxConcurrent": 3,
                                             "prerebaseHotFiles": ["AGENTS.md"]})
    assert resp.status_code == 200, resp.text
    assert resp.json()["autoMerge"] is False and resp.json()["maxConcurrent"] == 3
    body = client.get("/api/settings").json()
    assert body["autoMerge"] is False and body["prerebaseHotFiles"] == ["AGENTS.md"]
    stored = _config(root)
    assert stored["autoMerge"] is False and stored["maxConcurrent"] == 3 and stored["memoryEnabled"] is True
    assert client.put("/api/settings", json={"autoMerge": True}).json()["autoMerge"] is True
    assert _config(root)["autoMerge"] is True
    assert client.put("/api/settings", json={"autoMerge": None}).status_code == 200  # null deletes, as in Fusion
    assert "autoMerge" not in _config(root) and "autoMerge" not in client.get("/api/settings").json()


def test_auto_merge_round_trips_on_a_fusion_db_project(serve, token, tmp_path: Path):
    root = _seed(tmp_path)
    client = serve(root, mcp=False).client(token)
    assert _row(root)["autoMerge"] is False
    resp = client.put("/api/settings", json={"autoMerge": True, "mergeStrategy": "pull-request"})
    assert resp.status_code == 200, resp.text
    assert client.get("/api/settings").json()["autoMerge"] is True
    row = _row(root)
    assert row["autoMerge"] is True and row["mergeStrategy"] == "pull-request" and row["taskPrefix"] == "FN"
    # Fusion's config.json copy follows the row, as Fusion's own writeConfig does.
    copy = json.loads((root / ".fusion" / "config.json").read_text(encoding="utf-8"))
    assert copy["settings"]["autoMerge"] is True


@pytest.mark.parametrize(("patch", "field", "words"), [
    ({"noSuchSetting": 1}, "noSuchSetting", "unknown setting 'noSuchSetting'"),
    ({"themeMode": "dark"}, "themeMode", "/api/settings/global"),
    ({"autoMerge": "yes"}, "autoMerge", "is a boolean"),
    ({"maxConcurrent": True}, "maxConcurrent", "is a number"),
    ({"prerebaseHotFiles": "AGENTS.md"}, "prerebaseHotFiles", "is an array"),
    ({"experimentalFeatures": {"memoryView": "off"}}, "experimentalFeatures", "boolean"),
    ({"experimentalFeatures": ["memoryView"]}, "experimentalFeatures", "an object of booleans"),
    ({"merger": {"x": "a" * (1024 * 1024)}}, "merger", f"more than the {MAX_VALUE_BYTES}"),
    ({"autoMerge": False, "bogus": 1}, "bogus", "unknown setting"),  # one bad key: none of the patch is saved
])
def test_a_refusal_is_400_in_fusions_shape_and_changes_no_byte(serve, token, tmp_path: Path, config_json_project,
                                                               patch, field, words):
    for root in (config_json_project, _seed(tmp_path)):
        before = _bytes(root)
        client = serve(root, mcp=False).client(token)
        resp = client.put("/api/settings", json=patch)
        assert resp.status_code == 400, resp.text
        body = resp.json()
        assert set(body) >= {"error", "details"} and body["details"]["field"] == field
        assert set(body["details"]) >= {"code", "backend", "field"}
        assert words in body["error"] and "\n" not in body["error"]
        assert _bytes(root) == before


def test_the_cli_takes_the_same_keys(user_config_dir: Path, config_json_project: Path):
    root = config_json_project

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "core.cli", "settings", *args, "-p", str(root)],
                              env=cli_env(user_config_dir), capture_output=True, text=True, timeout=120)

    done = cli("set", "autoMerge", "false")
    assert done.returncode == 0, done.stderr
    assert "autoMerge = false" in done.stdout and _config(root)["autoMerge"] is False
    assert cli("get", "autoMerge").stdout.strip() == "false"
    before = _bytes(root)
    bad = cli("set", "autoMerge", "sometimes")
    assert bad.returncode == 2 and "autoMerge" in bad.stderr and "boolean" in bad.stderr
    glob = cli("set", "daemonToken", "x")
    assert glob.returncode == 2 and "global" in glob.stderr
    assert _bytes(root) == before


def test_a_hostile_key_is_named_in_one_short_line(serve, token, config_json_project: Path):
    root = config_json_project
    before = _bytes(root)
    client = serve(root, mcp=False).client(token)
    for key in ("x" * 10_000, "auto\nMerge", "__proto__", "constructor", ""):
        resp = client.put("/api/settings", json={key: True})
        assert resp.status_code == 400, key[:20]
        error = resp.json()["error"]
        assert "\n" not in error and len(error) < 400 and "unknown setting" in error
    assert _bytes(root) == before


def test_the_dashboards_global_save_takes_only_its_memory_view_flags(serve, tokens, token,
                                                                     config_json_project: Path):
    """Fusion's dashboard saves global settings with ``PUT /api/settings/global`` and no ``projectId``
    (``packages/dashboard/app/api/global-and-pi-settings.ts`` ``updateGlobalSettings`` at 776e90bf); there memdesk
    takes Fusion's global settings (``experimentalFeatures`` and the others, by type: tests/core/server/
    test_dashboard_global_settings.py), into the project's store (the first served when none is named), and
    refuses the rest in one line; a token that may not change settings gets 403, nothing written."""
    root = config_json_project
    running = serve(root, mcp=False)
    client = running.client(token)
    resp = client.put("/api/settings/global", json={"experimentalFeatures": {"memoryView": False}})
    assert resp.status_code == 200, resp.text
    assert client.get("/api/settings").json()["experimentalFeatures"] == {"memoryView": False}
    assert _config(root)["experimentalFeatures"] == {"memoryView": False}
    before = _bytes(root)
    for patch, words in (({"noSuchGlobal": "dark"}, "not one of Fusion's global settings"),
                         ({"autoMerge": False}, "PUT /api/settings"), ({"themeMode": 7}, "is a string"),
                         ({"experimentalFeatures": {"memoryView": 1}}, "boolean")):
        refused = client.put("/api/settings/global", json=patch)
        assert refused.status_code == 400 and words in refused.json()["error"], refused.text
        assert refused.json()["details"]["field"] == next(iter(patch))
    reader = running.client(tokens.create("reader", scope="read"))
    assert reader.put("/api/settings/global", json={"experimentalFeatures": {"memoryView": True}}).status_code == 403
    assert _bytes(root) == before
