"""review7: ``GET /api/settings`` answers Fusion's settings as Fusion's merged object, and with Fusion running that
object holds Fusion's global secrets (``daemonToken``, which authenticates to Fusion's daemon, the research and
notification keys) beside the project's (``githubAuthToken``, ``gitlabAuthToken``, ``stashApiKey``). A memdesk read
token was answered all of them: a token meant to read memory got the key to Fusion's daemon. A secret is answered
only to a token that may change it (project secrets: a write token limited to no path; Fusion's global ones: one
limited to no project either); to others it is left out. Through a real ``memdesk serve`` over a project connected
to the Fusion contract server.
"""

from __future__ import annotations

from tests.core.settings.test_settings_fusion_api import connected, current, fusion_server  # noqa: F401

DAEMON = "fn-daemon-secret-0c1d"
GITHUB = "ghp_project_secret_77"


def test_secrets_go_only_to_tokens_that_may_change_them(serve, tokens, connected):  # noqa: F811
    root, fusion = connected
    fusion.state.global_settings["daemonToken"] = DAEMON
    fusion.state.projects["proj_1"]["settings"]["githubAuthToken"] = GITHUB
    reader = tokens.create("reader", scope="read")
    project_writer = tokens.create("current-writer", scope="write", projects=["current"])
    owner = tokens.create("owner")
    srv = serve(root, mcp=False)
    for route in ("/api/settings?projectId=current", "/api/settings/global?projectId=current"):
        seen = {}
        for name, token in (("reader", reader), ("current-writer", project_writer), ("owner", owner)):
            got = srv.client(token).get(route)
            assert got.status_code == 200, (name, got.text)
            seen[name] = got.text
        assert DAEMON not in seen["reader"] and GITHUB not in seen["reader"], route
        assert DAEMON not in seen["current-writer"], route
        assert DAEMON in seen["owner"], route
        if "global" not in route:
            assert GITHUB in seen["current-writer"] and GITHUB in seen["owner"]
    # What is left out is left out of the answer only: Fusion still holds it.
    assert fusion.state.global_settings["daemonToken"] == DAEMON


def test_a_change_answer_holds_no_secret_the_token_may_not_change(serve, tokens, connected):  # noqa: F811
    """``PUT /api/settings`` answers the merged settings: an empty patch from a token limited to one project was
    another way to read Fusion's daemon token."""
    root, fusion = connected
    fusion.state.global_settings["daemonToken"] = DAEMON
    project_writer = tokens.create("current-writer", scope="write", projects=["current"])
    srv = serve(root, mcp=False)
    got = srv.client(project_writer).put("/api/settings?projectId=current", json={})
    assert got.status_code == 200, got.text
    assert DAEMON not in got.text
