"""review7: with Fusion running, ``PUT /api/settings/global`` (d6e122a) goes to Fusion's own global settings, which
every Fusion project uses: the CLI binaries Fusion runs (``cursorCliBinaryPath``…), its remote access, its custom
providers' URLs. A memdesk token limited to one served project changed them for all: ``?projectId=`` its own
project was enough. Global settings are no one project's: only a write token limited to no project and no path
may change them (403 ``SCOPE`` in one line otherwise, nothing sent to Fusion). Through a real ``memdesk serve``
over a project connected to a Fusion contract server and a second project.
"""

from __future__ import annotations

from tests.core.settings.test_settings_fusion_api import connected, current, fusion_server  # noqa: F401


def test_a_project_limited_token_never_changes_fusions_global_settings(serve, tokens, connected,  # noqa: F811
                                                                      sample_project):
    root, fusion = connected
    limited = tokens.create("current-only", scope="write", projects=["current"])
    owner = tokens.create("owner")
    srv = serve(root, sample_project, mcp=False)
    fusion.state.requests.clear()
    for route in ("/api/settings/global?projectId=current", "/api/settings/global"):
        got = srv.client(limited).put(route, json={"cursorCliBinaryPath": "/tmp/evil"})
        assert got.status_code == 403, (route, got.text)
        body = got.json()
        assert body["details"]["code"] == "SCOPE" and "global" in body["error"] and "\n" not in body["error"]
    assert not [r for r in fusion.state.requests if r[0] == "PUT"]
    # It still reads them, as GET /api/settings answers them to it.
    assert srv.client(limited).get("/api/settings/global?projectId=current").status_code == 200
    # A token limited to nothing changes them, in Fusion.
    done = srv.client(owner).put("/api/settings/global?projectId=current", json={"themeMode": "dark"})
    assert done.status_code == 200, done.text
    assert [(p, b) for m, p, b in fusion.state.requests if m == "PUT"] == [("/api/settings/global", {"themeMode": "dark"})]


def test_with_fusion_stopped_a_global_change_goes_to_its_home_file_and_is_answered_over_its_last_answer(
        serve, tokens, connected, monkeypatch, tmp_path):  # noqa: F811
    """globalhome: current Fusion stopped (``fusion-readonly``, its last answer kept): Fusion's global settings
    are changed in ``~/.fusion/settings.json``, where it reads them when it starts, and answered from there over
    the last answer's copy (which the dashboard would otherwise snap back to)."""
    import json
    from pathlib import Path

    from core.settings import read_settings

    root, fusion = connected
    fusion.state.projects["proj_1"]["settings"]["themeMode"] = "light"
    assert read_settings(root).fusion_raw["themeMode"] == "light"  # Fusion's answer, kept as its last
    fusion.stop()
    assert read_settings(root).store.kind == "fusion-readonly"
    before = {p: p.read_bytes() for p in (root / ".fusion").rglob("*") if p.is_file() and "memdesk" not in p.parts}
    srv = serve(root, mcp=False)
    owner = srv.client(tokens.create("owner"))
    put = owner.put("/api/settings/global", json={"themeMode": "dark", "ntfyAccessToken": "tok-9c"})
    assert put.status_code == 200, put.text
    home = Path(__import__("os").environ["MEMDESK_FUSION_HOME"]) / "settings.json"
    assert json.loads(home.read_text(encoding="utf-8")) == {"themeMode": "dark", "ntfyAccessToken": "tok-9c"}
    assert owner.get("/api/settings").json()["themeMode"] == "dark"
    assert owner.get("/api/settings/global").json()["themeMode"] == "dark"
    assert {p: p.read_bytes() for p in before} == before
    assert not [r for r in fusion.state.requests if r[0] == "PUT"]
