"""Issue 23, scoped tokens: a ``--scope read --path GLOB`` token sees nothing of documents outside its paths.

Found from outside: such a token (``--path '.fusion/agent-memory/bot/**'``) was refused the project's MEMORY.md,
yet ``GET /api/memory/inbox`` and the ``memory_inbox`` tool listed the writes held for MEMORY.md (document,
writer, rules), and ``GET /api/memory/audit`` / ``/stats`` gave MEMORY.md's section names and sizes.
"""

from __future__ import annotations

from typing import Any

from mcp.client import ClientSession

from tests.core.server.test_server_mcp import run_http

SECRET = "- deploy key ghp_4kT9wQz7LmP2xR8vN3bY6cJ1hF5dS0aG7uE2 for ci"
BOT = ".fusion/agent-memory/bot/**"


def test_a_path_limited_read_token_sees_no_held_write_audit_or_stats_outside_its_paths(serve, tokens,
                                                                                      layered_project):
    full = tokens.create("operator-bot")
    reader = tokens.create("bot-reader", scope="read", paths=(BOT,))
    srv = serve(layered_project)
    held = srv.client(full).post("/api/memory/append", json={"content": SECRET, "layer": "long-term"})
    assert held.status_code == 200 and held.json()["status"] == "held", held.text
    item = held.json()["inboxId"]
    assert [i["id"] for i in srv.client(full).get("/api/memory/inbox").json()["items"]] == [item]

    limited = srv.client(reader)
    assert limited.get("/api/memory/inbox").json() == {"items": []}
    one = limited.get("/api/memory/inbox", params={"id": item})
    assert one.status_code == 400 and "MEMORY.md" not in one.text
    for route in ("/api/memory/audit", "/api/memory/stats"):
        r = limited.get(route)
        assert r.status_code == 403 and r.json()["code"] == "SCOPE", (route, r.text)
    assert srv.client(full).get("/api/memory/audit").status_code == 200
    # an append-scoped token with the same glob still reads everything (globs limit what it changes)
    writer = tokens.create("bot-writer", scope="append", paths=(BOT,))
    assert [i["id"] for i in srv.client(writer).get("/api/memory/inbox").json()["items"]] == [item]
    assert srv.client(writer).get("/api/memory/stats").status_code == 200

    async def inbox(s: ClientSession) -> Any:
        return (await s.call_tool("memory_inbox", {})).structured_content

    assert run_http(srv.url, reader, inbox) == {"items": []}
    assert [i["id"] for i in run_http(srv.url, full, inbox)["items"]] == [item]
