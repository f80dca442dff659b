"""A refusal that quotes what the caller sent says so in bounded words: a 20,000-character inbox id comes back
cut to at most 1,000 characters with how much was cut, on one line, in Fusion's error shape, over HTTP (a real
``memdesk serve``) and MCP (the ``mcp`` SDK against ``memdesk mcp``). Before, the whole id came back."""

from __future__ import annotations

from pathlib import Path

from mcp.client import ClientSession

from tests.core.server.test_server_mcp import _text, run_stdio

LONG = "x" * 20_000


def test_http_refusal_quoting_a_huge_inbox_id_is_bounded(serve, token, layered_project: Path):
    r = serve(layered_project).client(token).get("/api/memory/inbox", params={"id": LONG})
    assert 400 <= r.status_code < 500, r.text
    error = r.json()["error"]
    assert "\n" not in error and len(error) < 1100 and "characters cut" in error, error[:200]
    assert r.json()["details"]["code"] == r.json()["code"] == "INVALID_INBOX"


def test_mcp_refusal_quoting_a_huge_inbox_id_is_bounded(layered_project: Path, user_config_dir: Path):
    async def body(s: ClientSession):
        return [await s.call_tool("memory_inbox", {"id": LONG})]

    (res,) = run_stdio(layered_project, user_config_dir, body)
    text = _text(res)
    assert res.is_error and "\n" not in text and len(text) < 1300 and "characters cut" in text, text[:200]
