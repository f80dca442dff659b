"""Clients on the newer MCP protocol (2026-07-28) follow documents with ``subscriptions/listen`` instead of
``resources/subscribe``. They hear every change of a document they follow, whoever made it: a real second
process appending with ``>>``, memdesk's own tools, the HTTP API; over stdio and over HTTP; and subscribers
on the older protocol hear the same outside change. The official ``mcp`` SDK's ``Client`` on both ends."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp import Client
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated

from tests.core.server.conftest import cli_env

LONG = ".fusion/memory/MEMORY.md"
DREAMS = ".fusion/memory/DREAMS.md"


def _shell_append(path: Path, line: str) -> None:
    """Another program: ``printf ... >> FILE`` in its own process."""
    subprocess.run(["sh", "-c", 'printf "%s" "$1" >> "$2"', "sh", line, str(path)], check=True, timeout=60)


async def _next(sub: Any, seconds: float = 15.0) -> ResourceUpdated:
    with anyio.fail_after(seconds):
        async for event in sub:
            return event
    raise AssertionError("the listen stream ended")


async def _quiet(sub: Any, seconds: float) -> bool:
    """No event arrives on ``sub`` for ``seconds``."""
    with anyio.move_on_after(seconds):
        async for _event in sub:
            return False
    return True


def test_a_stdio_listener_hears_an_outside_append_an_editors_save_and_a_tools_write_once_each(layered_project, user_config_dir):
    uri = f"memdesk://layered/{LONG}"
    params = StdioServerParameters(command=sys.executable, args=["-m", "core.cli", "mcp", "--project",
                                                                 str(layered_project)], env=cli_env(user_config_dir))

    async def main() -> list[str]:
        got: list[str] = []
        async with Client(params) as c:
            assert c.session.protocol_version == "2026-07-28"
            async with c.listen(resource_subscriptions=[uri, "memdesk://layered/../../etc/passwd"]) as sub:
                _shell_append(layered_project / LONG, "\n- an agent's >> around memdesk\n")
                got.append((await _next(sub)).uri)
                # An editor's save: a second process writes a new file beside it and renames it over.
                subprocess.run(["sh", "-c", 'sed "s/Pitfalls/Traps/" "$1" > "$1.tmp" && mv "$1.tmp" "$1"', "sh",
                                str(layered_project / LONG)], check=True, timeout=60)
                got.append((await _next(sub)).uri)
                r = await c.call_tool("memory_append", {"content": "Through the tool.", "layer": "long-term"})
                assert not r.is_error
                got.append((await _next(sub)).uri)
                assert await _quiet(sub, 1.5)  # once: not again from the watch
                _shell_append(layered_project / DREAMS, "\n- a document nobody follows\n")
                assert await _quiet(sub, 1.5)
        return got

    assert anyio.run(main) == [uri, uri, uri]


def test_an_http_listener_and_an_http_subscriber_both_hear_an_outside_append(serve, tokens, layered_project):
    token = tokens.create("listener")
    srv = serve(layered_project)
    uri = f"memdesk://layered/{LONG}"
    seen_by_subscriber: list[str] = []

    async def on_message(message: Any) -> None:
        if getattr(message, "method", None) == "notifications/resources/updated":
            seen_by_subscriber.append(str(message.params.uri))

    async def main() -> list[str]:
        got: list[str] = []
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(headers=headers, timeout=60) as h1, httpx.AsyncClient(headers=headers,
                                                                                             timeout=60) as h2:
            async with Client(streamable_http_client(f"{srv.url}/mcp", http_client=h1)) as c, \
                    streamable_http_client(f"{srv.url}/mcp", http_client=h2) as streams, \
                    ClientSession(streams[0], streams[1], message_handler=on_message) as old:
                assert c.session.protocol_version == "2026-07-28"
                await old.initialize()
                await old.subscribe_resource(uri)
                async with c.listen(resource_subscriptions=[uri]) as sub:
                    _shell_append(layered_project / LONG, "\n- an agent's >> while a server runs\n")
                    got.append((await _next(sub)).uri)
                    with anyio.fail_after(15):
                        while uri not in seen_by_subscriber:
                            await anyio.sleep(0.05)
                    r = await h1.post(f"{srv.url}/api/memory/append",
                                      json={"content": "Through the HTTP API.", "layer": "long-term"})
                    assert r.status_code == 200 and r.json()["status"] == "written"
                    got.append((await _next(sub)).uri)
        return got

    assert anyio.run(main) == [uri, uri]
    assert seen_by_subscriber[0] == uri


def test_a_listener_following_the_list_hears_a_new_document_and_not_a_write(layered_project, user_config_dir):
    """``resourcesListChanged``: an agent's new daily note, made by a second process, changes the list; a write to an
    existing document does not."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "core.cli", "mcp", "--project",
                                                                 str(layered_project)], env=cli_env(user_config_dir))
    note = ".fusion/agent-memory/new-bot/2026-12-02.md"

    async def main() -> tuple[Any, list[str]]:
        async with Client(params) as c:
            async with c.listen(resources_list_changed=True) as sub:
                r = await c.call_tool("memory_append", {"content": "A write, not a new document.",
                                                        "layer": "long-term"})
                assert not r.is_error
                assert await _quiet(sub, 1.5)
                subprocess.run(["sh", "-c", 'mkdir -p "$(dirname "$1")" && printf "# Agent Daily Memory\\n" > "$1"',
                                "sh", str(layered_project / note)], check=True, timeout=60)
                event = await _next(sub)
                listed = [str(r.uri) for r in (await c.list_resources()).resources]
        return event, listed

    event, listed = anyio.run(main)
    assert isinstance(event, ResourcesListChanged)
    assert f"memdesk://layered/{note}" in listed
