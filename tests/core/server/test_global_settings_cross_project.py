"""review7: Fusion's global settings (``PUT /api/settings/global``, d6e122a; read back into every served project's
``GET /api/settings`` since 66cad89; kept in ``~/.fusion/settings.json`` since globalhome, once in the first served
project's store) are no one project's: among
them are secrets Fusion keeps globally (``daemonToken``, ``ntfyAccessToken``, the research API keys). A token
limited to another served project must not read them through its own project's ``GET /api/settings`` (it was
answered the first project's ``daemonToken``), nor change them. Through a real ``memdesk serve`` over two projects.
"""

from __future__ import annotations

import json

SECRET = "daemon-token-of-layered-7f3a"


def test_a_token_of_project_b_never_sees_nor_changes_project_a_global_settings(serve, tokens, layered_project,
                                                                                sample_project):
    owner = tokens.create("owner")
    other = tokens.create("sample-only", scope="write", projects=["sample"])
    srv = serve(layered_project, sample_project, mcp=False)  # layered is the first served: the globals' home
    put = srv.client(owner).put("/api/settings/global?projectId=layered",
                                json={"daemonToken": SECRET, "themeMode": "dark"})
    assert put.status_code == 200, put.text
    # The owner sees the first project's globals in either project's view (66cad89's point).
    assert srv.client(owner).get("/api/settings?projectId=sample").json().get("daemonToken") == SECRET
    # A token limited to sample: its own project's settings, without the layered project's.
    c = srv.client(other)
    for route in ("/api/settings?projectId=sample", "/api/settings/global?projectId=sample"):
        got = c.get(route)
        assert got.status_code == 200, got.text
        assert SECRET not in got.text and "daemonToken" not in got.json(), route
    # And it may not change what layered holds: with no projectId (the first served) or naming it.
    before = {p.name: p.read_bytes() for p in (layered_project / ".fusion").rglob("*") if p.is_file()}
    for route in ("/api/settings/global", "/api/settings/global?projectId=layered"):
        refused = c.put(route, json={"daemonToken": "stolen"})
        assert refused.status_code == 403, (route, refused.text)
        assert json.loads(refused.text)["details"]["code"] == "SCOPE"
    after = {p.name: p.read_bytes() for p in (layered_project / ".fusion").rglob("*") if p.is_file()}
    assert after == before
    assert srv.client(owner).get("/api/settings?projectId=layered").json()["daemonToken"] == SECRET
    # Kept where Fusion reads it, never in a project (a committed .fusion/config.json would carry the secret).
    assert not [p for p in (layered_project / ".fusion").rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
