"""Issue 23 item 4, attacked: MCP sessions over HTTP. The SDK keeps at most 10,000 sessions (each ~38 KB) for 30
idle minutes and refuses new ones with 503 past that; any token, a read-only one included, opening sessions
in a loop (2,000 took 18 s here) shut every other client out of MCP for half an hour. A token may now hold 64
open sessions; past that its initialize is 429 ``SESSION_LIMIT`` naming the way out, and other tokens are
unaffected. A closed session frees its place."""

from __future__ import annotations

import httpx

from core.server.http import _Dispatch

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "loop", "version": "1"}}}


def _open(c: httpx.Client) -> httpx.Response:
    return c.post("/mcp", json=INIT, headers=HEADERS)


def test_one_token_cannot_take_every_mcp_session(serve, tokens, sample_project):
    srv = serve(sample_project)
    greedy = srv.client(tokens.create("greedy", scope="read"))
    other = srv.client(tokens.create("other", scope="read"))

    opened = [_open(greedy) for _ in range(_Dispatch.PER_TOKEN)]
    assert {r.status_code for r in opened} == {200}
    refused = _open(greedy)
    assert refused.status_code == 429 and refused.json()["code"] == "SESSION_LIMIT", refused.text
    assert "token 'greedy' holds 64 open MCP sessions" in refused.json()["error"]
    assert _open(other).status_code == 200  # another client still gets its session

    # A session closed by its client frees its place.
    sid = opened[0].headers["mcp-session-id"]
    closed = greedy.delete("/mcp", headers={**HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"})
    assert closed.status_code in (200, 204), closed.text
    assert _open(greedy).status_code == 200
    # Sessions in use keep working.
    sid2 = opened[1].headers["mcp-session-id"]
    listed = greedy.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                         headers={**HEADERS, "mcp-session-id": sid2, "mcp-protocol-version": "2025-06-18"})
    assert listed.status_code == 200 and "memory_get" in listed.text
