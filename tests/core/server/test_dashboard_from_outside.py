"""Issue 23 item 5: what running Fusion's dashboard code against a real ``memdesk serve`` from outside found.

Fusion's dashboard client and hooks (Runfusion/Fusion ``packages/dashboard/app/api/memory.ts`` at c81144c7,
``app/api/client/client.ts`` at 34e0e664, ``app/api/settings/settings.ts`` at fb741739,
``app/api/global-and-pi-settings.ts`` at 776e90bf, ``app/hooks/useMemoryData.ts`` at b1f6740b,
``app/hooks/useAppSettings.ts`` at a1cac3a6) were run in headless Chromium against ``memdesk serve`` on the
fixtures, outside this repository (nothing of Fusion's is here; docs/servers.md, "Fusion's dashboard").
Each test sends the exact request that code sent and asserts the shape that code reads.
"""

from __future__ import annotations

import httpx

from core.server.tokens import TokenStore
from tests.core.server.test_fusion_dashboard import _api, memdesk_serve  # noqa: F401  (the real server fixture)


def test_the_dashboards_global_settings_are_answered(memdesk_serve, layered_project):  # noqa: F811
    """``fetchGlobalSettings`` sends ``GET /api/settings/global`` with no ``projectId``
    (``global-and-pi-settings.ts`` at 776e90bf) and reads a ``GlobalSettings`` object; memdesk answered 405, so
    the dashboard's settings screen failed to load. It now answers the global settings it serves
    (``experimentalFeatures``), from the store ``PUT /api/settings/global`` writes (the first served project, or
    the one ``?projectId=`` names); any token that may read may ask."""
    base, token = memdesk_serve
    with _api(base, token) as api:
        got = api.get("/settings/global")
        assert got.status_code == 200, got.text
        assert got.headers["content-type"].startswith("application/json")
        assert got.json() == {"experimentalFeatures": {"memoryView": True}}

        saved = api.put("/settings/global", json={"experimentalFeatures": {"memoryView": False, "insights": True}})
        assert saved.status_code == 200, saved.text
        assert api.get("/settings/global").json() == {"experimentalFeatures": {"memoryView": False, "insights": True}}
        # The same flags GET /api/settings answers for that project; the other project keeps its own.
        assert api.get("/settings?projectId=layered").json()["experimentalFeatures"] == {"memoryView": False,
                                                                                         "insights": True}
        assert api.get("/settings/global?projectId=sample").json() == {"experimentalFeatures": {"memoryView": True}}
        unknown = api.get("/settings/global?projectId=nowhere")
        assert unknown.status_code == 404 and unknown.json()["details"]["code"] == "PROJECT_NOT_SERVED"

    reader = TokenStore().create("dash-global-reader", scope="read")
    with _api(base, reader) as api:
        assert api.get("/settings/global").json()["experimentalFeatures"]["memoryView"] is False
    assert httpx.get(f"{base}/api/settings/global").status_code == 401
