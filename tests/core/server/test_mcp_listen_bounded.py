"""A client cannot make the server watch without bound (found by the round-5 review).

Every ``memdesk://KEY/PATH`` a ``subscriptions/listen`` stream names or ``resources/subscribe`` asks for is
``stat``-ed on the server's event loop every :data:`core.server.notify.POLL_SECONDS`. Any agent id and any date
is a valid document path, so one request of ~1 MB named ~20,000 distinct documents, and the hub kept each
one after its stream closed: listens opened and closed again and again grew the table (and the event loop's
work each half second) with no end. Now the hub forgets a document nobody follows any more, and watches at
most :data:`core.server.notify.MAX_WATCHED` at once.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from core.server import notify


@pytest.fixture
def hubs(monkeypatch) -> list[notify.ResourceHub]:
    made: list[notify.ResourceHub] = []
    original = notify.ResourceHub.__init__

    def init(self: notify.ResourceHub, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(notify.ResourceHub, "__init__", init)
    return made


def _uris(start: int, count: int) -> list[str]:
    return [f"memdesk://layered/.fusion/agent-memory/bot{n}/MEMORY.md" for n in range(start, start + count)]


def test_listens_that_close_leave_nothing_watched_and_one_listen_is_capped(serve, tokens, layered_project, hubs,
                                                                           monkeypatch):
    monkeypatch.setattr(notify, "MAX_WATCHED", 500)
    token = tokens.create("listener")
    srv = serve(layered_project)
    follow = "memdesk://layered/.fusion/memory/MEMORY.md"

    async def main() -> list[tuple[int, int]]:
        sizes: list[tuple[int, int]] = []
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as h:
            async with Client(streamable_http_client(f"{srv.url}/mcp", http_client=h)) as c:
                for round_ in range(3):
                    async with c.listen(resource_subscriptions=[follow, *_uris(round_ * 2000, 2000)]):
                        await anyio.sleep(0.3)
                        (hub,) = hubs
                        sizes.append((len(hub._files), len(hub._stamps)))
                    with anyio.fail_after(15):  # the stream's end reaches the server
                        while hub._files:
                            await anyio.sleep(0.05)
                    sizes.append((len(hub._files), len(hub._stamps)))
        return sizes

    sizes = anyio.run(main)
    assert sizes == [(500, 500), (0, 0)] * 3, sizes


def test_a_document_followed_within_the_cap_is_still_heard(serve, tokens, layered_project, hubs, monkeypatch):
    monkeypatch.setattr(notify, "MAX_WATCHED", 10)
    token = tokens.create("listener")
    srv = serve(layered_project)
    follow = "memdesk://layered/.fusion/memory/MEMORY.md"

    async def main() -> str:
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as h:
            async with Client(streamable_http_client(f"{srv.url}/mcp", http_client=h)) as c, \
                    c.listen(resource_subscriptions=[follow, *_uris(0, 50)]) as sub:
                r = await c.call_tool("memory_append", {"content": "Heard within the cap.", "layer": "long-term"})
                assert not r.is_error
                with anyio.fail_after(15):
                    async for event in sub:
                        return str(event.uri)
        raise AssertionError("the listen stream ended")

    assert anyio.run(main) == follow
