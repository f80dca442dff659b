"""Who wrote what: each write through the servers reaches the project model with its author (the token's name
over HTTP, the MCP client's name over stdio, both over MCP-on-HTTP) and its source."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from mcp import types
from mcp.client import Client

from core.backends import default_registry
from core.backends.file import FileMemoryBackend
from core.server.mcp_server import build_mcp_server
from core.server.service import ServedProjects
from tests.core.server.test_server_mcp import run_http


class RecordingBackend(FileMemoryBackend):
    """The file backend, keeping a log of who asked for each write (as a team backend keeps its audit trail)."""

    id = "recording"
    name = "Recording"
    log: list[tuple[str, str | None, str]] = []

    def write_document(self, relpath, content, *, expected_hash=None, source="write", author=None):
        type(self).log.append((relpath, author, source))
        super().write_document(relpath, content, expected_hash=expected_hash, source=source, author=author)

    def append_document(self, relpath: str, build: Callable[[str], str | None], *, author=None, source="append"):
        type(self).log.append((relpath, author, source))
        return super().append_document(relpath, build, author=author, source=source)


@pytest.fixture
def recording(sample_project: Path):
    """A registry with the recording backend, and the sample project set to use it."""
    RecordingBackend.log = []
    registry = default_registry()
    registry.register(RecordingBackend)
    (sample_project / ".fusion/config.json").write_text(json.dumps({"memoryBackend": "recording"}), encoding="utf-8")
    return registry


def test_http_writes_carry_the_token_name(serve, tokens, sample_project, recording):
    token = tokens.create("release-bot")
    c = serve(sample_project, registry=recording).client(token)
    doc = c.get("/api/memory").json()
    assert c.post("/api/memory/append", json={"content": "entry by the release bot"}).status_code == 200
    assert c.put("/api/memory", json={"content": doc["content"] + "\nedit\n"}).status_code == 200
    assert c.put("/api/memory/file", json={"path": ".fusion/memory.md", "content": "whole\n"}).status_code == 200
    assert c.put("/api/memory/insights", json={"content": "# Memory Insights\n"}).status_code == 200
    assert {(a, s) for _p, a, s in RecordingBackend.log} == {
        ("release-bot", "http-append"), ("release-bot", "http-write"), ("release-bot", "http-insights")}
    assert {p for p, _a, _s in RecordingBackend.log} == {".fusion/memory.md", ".fusion/memory-insights.md"}


def test_mcp_over_http_names_the_token_and_the_client(serve, tokens, sample_project, recording):
    token = tokens.create("ci-bot")
    srv = serve(sample_project, registry=recording)

    async def body(s):
        appended = await s.call_tool("memory_append", {"content": "an entry from codex"})
        doc = (await s.call_tool("memory_get", {})).structured_content
        written = await s.call_tool("memory_write", {"path": doc["path"], "content": "whole\n",
                                                     "expectedHash": doc["hash"]})
        return appended, written

    appended, written = run_http(srv.url, token, body, client="codex")
    assert appended.structured_content["status"] == "written" and written.structured_content["success"] is True
    assert (sample_project / ".fusion/memory.md").read_text(encoding="utf-8") == "whole\n"
    authors = [(a, s) for _p, a, s in RecordingBackend.log]
    assert ("ci-bot (codex)", "mcp-append") in authors and ("ci-bot (codex)", "mcp-write") in authors


def test_mcp_over_stdio_names_the_client(sample_project, recording):
    server = build_mcp_server(ServedProjects([sample_project], registry=recording))

    async def main() -> types.CallToolResult:
        async with Client(server, client_info=types.Implementation(name="claude-desktop", version="1"),
                          mode="legacy") as client:
            return await client.call_tool("memory_append", {"content": "noted by the desktop host"})

    result = anyio.run(main)
    assert result.structured_content["status"] == "written"
    assert RecordingBackend.log == [(".fusion/memory.md", "claude-desktop", "mcp-append")]
