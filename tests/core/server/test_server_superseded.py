"""Search over real HTTP and MCP sessions leaves entries marked ``[superseded DATE]`` out unless
``includeSuperseded`` (as ``memdesk search --include-superseded``); see docs/firewall.md."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
from mcp import types
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.core.server.conftest import cli_env

MEMORY = ".fusion/memory.md"
TEXT = ("# Project Memory\n\n## Context\n\n"
        "- [superseded 2026-11-30] Lease expiry uses the worker clock\n"
        "- Lease expiry uses the DB clock, never the worker clock\n")


def _project(root: Path) -> Path:
    (root / ".fusion").mkdir(parents=True)
    (root / MEMORY).write_text(TEXT, encoding="utf-8")
    return root


def _lines(results: list[dict]) -> list[int]:
    return sorted(r["lineStart"] for r in results)


def test_http_search_leaves_superseded_out_unless_asked(serve, token, project):
    root = _project(project / "p")
    c = serve(root).client(token)
    default = c.post("/api/memory/search", json={"query": "lease expiry clock", "derived": True})
    assert default.status_code == 200, default.text
    assert _lines(default.json()["results"]) == [6]
    assert "superseded" not in default.text
    both = c.post("/api/memory/search", json={"query": "lease expiry clock", "derived": True,
                                               "includeSuperseded": True})
    assert both.status_code == 200, both.text
    assert _lines(both.json()["results"]) == [5, 6]
    assert "[superseded 2026-11-30]" in both.text
    bad = c.post("/api/memory/search", json={"query": "lease", "derived": True, "includeSuperseded": "maybe"})
    assert bad.status_code in (400, 422)
    assert (root / MEMORY).read_text(encoding="utf-8") == TEXT


def test_mcp_search_leaves_superseded_out_unless_asked(project, user_config_dir):
    root = _project(project / "p")

    async def main_() -> list[types.CallToolResult]:
        params = StdioServerParameters(command=sys.executable, args=["-m", "core.cli", "mcp", "--project", str(root)],
                                       env=cli_env(user_config_dir))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, client_info=types.Implementation(name="claude", version="1")) as s:
                await s.initialize()
                default = await s.call_tool("memory_search", {"query": "lease expiry clock"})
                both = await s.call_tool("memory_search", {"query": "lease expiry clock", "includeSuperseded": True})
                return [default, both]

    default, both = anyio.run(main_)
    assert not default.is_error and not both.is_error
    assert _lines(default.structured_content["results"]) == [6]
    assert _lines(both.structured_content["results"]) == [5, 6]
    assert "[superseded 2026-11-30]" in str(both.structured_content)
