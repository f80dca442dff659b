"""Issue 23 item 5: Fusion's global settings other than ``experimentalFeatures`` were refused on ``memdesk serve``,
so the dashboard's auto-reload switch snapped back.

Fusion's ``useAppSettings`` (Runfusion/Fusion ``packages/dashboard/app/hooks/useAppSettings.ts`` at a1cac3a6)
flips the switch with ``updateGlobalSettings({autoReloadOnVersionChange: next})`` → ``PUT /api/settings/global``
with no ``projectId`` (``app/api/global-and-pi-settings.ts`` at 776e90bf), reverts it when that fails, and reads
``settings.autoReloadOnVersionChange !== false`` from ``GET /api/settings`` on the next load. memdesk now takes
Fusion's global keys there, each checked by its type (``packages/core/src/config/settings-schema.ts`` at 00982d1c,
core/settings/fusion_global_keys.py). With Fusion not running they go where Fusion reads them, its
``~/.fusion/settings.json`` (Runfusion/Fusion ``packages/core/src/config/global-settings.ts`` at 34e0e664;
core/settings/fusion_home.py), never into a project's ``.fusion/config.json`` (design §3b).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from core.server.tokens import TokenStore
from tests.core.server.conftest import cli_env
from tests.core.server.test_fusion_dashboard import _api, memdesk_serve  # noqa: F401  (the real server fixture)


def _home():
    return json.loads((Path(os.environ["MEMDESK_FUSION_HOME"]) / "settings.json").read_text(encoding="utf-8"))


def _config(root):
    data = json.loads((root / ".fusion/config.json").read_text(encoding="utf-8"))
    return data.get("settings", data)


def test_the_auto_reload_switch_and_other_global_settings_stay(memdesk_serve, layered_project,  # noqa: F811
                                                               sample_project, user_config_dir):
    base, token = memdesk_serve
    with _api(base, token) as api:
        assert api.get("/settings").json().get("autoReloadOnVersionChange", True) is not False
        off = api.put("/settings/global", json={"autoReloadOnVersionChange": False})
        assert off.status_code == 200, off.text
        assert off.json()["autoReloadOnVersionChange"] is False
        assert api.get("/settings").json()["autoReloadOnVersionChange"] is False  # what the hook reads next load
        assert api.get("/settings?projectId=layered").json()["autoReloadOnVersionChange"] is False
        # The other served project's view reads the same switch (its own store holds none), as in Fusion.
        assert api.get("/settings?projectId=sample").json()["autoReloadOnVersionChange"] is False
        assert api.get("/settings/global?projectId=sample").json()["autoReloadOnVersionChange"] is False
        assert "autoReloadOnVersionChange" not in _config(sample_project)
        assert "autoReloadOnVersionChange" not in _config(layered_project)
        assert _home() == {"autoReloadOnVersionChange": False}
        assert api.put("/settings/global", json={"autoReloadOnVersionChange": True}).status_code == 200
        assert api.get("/settings").json()["autoReloadOnVersionChange"] is True

        saved = api.put("/settings/global", json={"themeMode": "dark", "dashboardFontScalePct": 110,
                                                  "ntfyEvents": ["merged"], "executionGlobalModelId": "m-1"})
        assert saved.status_code == 200, saved.text
        glob = api.get("/settings/global").json()
        assert {k: glob[k] for k in ("themeMode", "dashboardFontScalePct", "ntfyEvents", "executionGlobalModelId",
                                     "autoReloadOnVersionChange")} == {
            "themeMode": "dark", "dashboardFontScalePct": 110, "ntfyEvents": ["merged"],
            "executionGlobalModelId": "m-1", "autoReloadOnVersionChange": True}
        assert glob["experimentalFeatures"]["memoryView"] is True
        assert api.put("/settings/global", json={"themeMode": None}).status_code == 200  # null deletes, as Fusion
        assert "themeMode" not in _home() and "dashboardFontScalePct" in _home()
        assert not set(_config(layered_project)) & {"themeMode", "dashboardFontScalePct", "ntfyEvents"}

        before = (layered_project / ".fusion/config.json").read_bytes()
        home_before = (Path(os.environ["MEMDESK_FUSION_HOME"]) / "settings.json").read_bytes()
        for patch, words in (({"autoReloadOnVersionChange": "no"}, "is a boolean"),
                             ({"dashboardFontScalePct": True}, "is a number"),
                             ({"themeMode": "dark", "autoMerge": False}, "a project setting"),
                             ({"noSuchGlobal": 1}, "not one of Fusion's global settings")):
            refused = api.put("/settings/global", json=patch)
            assert refused.status_code == 400, refused.text
            body = refused.json()
            assert words in body["error"] and "\n" not in body["error"]
            assert body["details"]["code"] == "INVALID_CONFIG" and body["details"]["field"] in patch
        # The project route still refuses a global key, as Fusion's does.
        project = api.put("/settings", json={"autoReloadOnVersionChange": False})
        assert project.status_code == 400 and "/api/settings/global" in project.json()["error"]
        assert (layered_project / ".fusion/config.json").read_bytes() == before

    with _api(base, TokenStore().create("globals-reader", scope="read")) as api:
        assert api.put("/settings/global", json={"themeMode": "light"}).status_code == 403
    assert (layered_project / ".fusion/config.json").read_bytes() == before
    assert (Path(os.environ["MEMDESK_FUSION_HOME"]) / "settings.json").read_bytes() == home_before
    # The project's settings still read everywhere else (the CLI), with the global key kept.
    got = subprocess.run([sys.executable, "-m", "core.cli", "settings", "get", "autoMerge", "-p",
                          str(layered_project)], env=cli_env(user_config_dir), capture_output=True, text=True,
                         timeout=120)
    assert got.returncode == 0, got.stderr
