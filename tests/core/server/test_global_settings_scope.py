"""Issue 23's leftover 4, its scope: ``GET /api/settings/global`` (served since ddac298, the shape Fusion's
dashboard's ``fetchGlobalSettings`` reads: Runfusion/Fusion ``packages/dashboard/app/api/global-and-pi-settings.ts``
at 776e90bf, ``packages/dashboard/app/hooks/useAppSettings.ts`` at a1cac3a6) answers each token as
``GET /api/settings`` does and is refused where ``PUT /api/settings/global`` is: a token limited to another
project gets 403 ``SCOPE`` naming it, a token limited to some documents reads but may not change, and no token
is 401. Through a real ``memdesk serve`` over two projects.
"""

from __future__ import annotations


def test_global_settings_are_scoped_like_the_project_settings(serve, tokens, layered_project, sample_project):
    owner = tokens.create("owner")
    other = tokens.create("sample-only", scope="write", projects=["sample"])
    narrow = tokens.create("narrow", scope="write", paths=[".fusion/agent-memory/bot/**"])
    reader = tokens.create("reader", scope="read")
    srv = serve(layered_project, sample_project, mcp=False)
    for name, token in (("owner", owner), ("sample-only", other), ("narrow", narrow), ("reader", reader)):
        c = srv.client(token)
        for project in ("layered", "sample"):
            project_read = c.get(f"/api/settings?projectId={project}")
            global_read = c.get(f"/api/settings/global?projectId={project}")
            assert global_read.status_code == project_read.status_code, (name, project, global_read.text)
            if global_read.status_code == 200:
                got = global_read.json()
                assert got["experimentalFeatures"] == project_read.json()["experimentalFeatures"], (name, project)
                assert "settingsStore" not in got and "memoryBackendConfig" not in got  # global keys only
            else:
                body = global_read.json()
                assert global_read.status_code == 403 and body["details"]["code"] == "SCOPE", (name, body)
                assert "project 'layered' is not one of them" in body["error"] and "\n" not in body["error"]
    refused = srv.client(other).get("/api/settings/global?projectId=layered")
    assert refused.status_code == 403
    # Changing: only a write token without --path globs, on its own projects.
    change = {"experimentalFeatures": {"memoryView": False}}
    assert srv.client(narrow).put("/api/settings/global?projectId=layered", json=change).status_code == 403
    assert srv.client(reader).put("/api/settings/global?projectId=layered", json=change).status_code == 403
    assert srv.client(other).put("/api/settings/global?projectId=layered", json=change).status_code == 403
    kept = srv.client(owner).get("/api/settings/global?projectId=layered").json()
    assert kept["experimentalFeatures"] == {"memoryView": True}  # none of the refused changes landed
    assert srv.client(None).get("/api/settings/global").status_code == 401
