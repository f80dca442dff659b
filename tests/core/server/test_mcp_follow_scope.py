"""Following a document is reading it: a token scoped to one project (or to some paths) cannot subscribe to, or
listen for, changes of documents outside its scope (found by the round-5 review: ``resources/subscribe`` and
``subscriptions/listen`` checked only that the URI named a served document, so a token for project ``layered``
heard every write to project ``sample``). Real server, the official ``mcp`` SDK's clients over HTTP."""

from __future__ import annotations

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

OURS = "memdesk://layered/.fusion/memory/MEMORY.md"


def test_a_token_for_one_project_cannot_follow_another_projects_document(serve, tokens, layered_project,
                                                                        sample_project):
    scoped = tokens.create("alpha-only", scope="read", projects=["layered"])
    full = tokens.create("operator")
    srv = serve(layered_project, sample_project)
    other_key = next(s.key for s in srv.served.served if s.root == sample_project.resolve())
    theirs = f"memdesk://{other_key}/.fusion/memory.md"

    async def main() -> str:
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {scoped}"}, timeout=60) as h, \
                httpx.AsyncClient(headers={"Authorization": f"Bearer {full}"}, timeout=60) as op:
            async with streamable_http_client(f"{srv.url}/mcp", http_client=h) as streams, \
                    ClientSession(streams[0], streams[1]) as old:
                await old.initialize()
                with pytest.raises(MCPError, match="SCOPE"):
                    await old.subscribe_resource(theirs)
            async with Client(streamable_http_client(f"{srv.url}/mcp", http_client=h)) as c, \
                    c.listen(resource_subscriptions=[theirs, OURS]) as sub:
                r = await op.post(f"{srv.url}/api/memory/append?project={other_key}",
                                  json={"content": "Written in the other project.", "layer": "long-term"})
                assert r.status_code == 200 and r.json()["status"] == "written", r.text
                await anyio.sleep(1.5)  # the hub's poll would have told a follower by now
                r = await op.post(f"{srv.url}/api/memory/append?project=layered",
                                  json={"content": "Written in our project.", "layer": "long-term"})
                assert r.status_code == 200 and r.json()["status"] == "written", r.text
                with anyio.fail_after(15):
                    async for event in sub:
                        return str(event.uri)
        raise AssertionError("the listen stream ended")

    assert anyio.run(main) == OURS  # the other project's write was never heard
