"""The MCP server through a real MCP client session (the ``mcp`` SDK): ``memdesk mcp`` as a subprocess over
stdio, and the same tools over streamable HTTP under ``memdesk serve``."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import types
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from core.storage.fileio import content_hash
from tests.core.server.conftest import cli_env

MEMORY = ".fusion/memory.md"
Session = Callable[[ClientSession], Awaitable[Any]]


def run_stdio(root: Path, user_config_dir: Path, body: Session, client: str = "test-agent") -> Any:
    """Start ``memdesk mcp --project root`` and run ``body`` in an initialised client session."""

    async def main() -> Any:
        params = StdioServerParameters(command=sys.executable, args=["-m", "core.cli", "mcp", "--project", str(root)],
                                       env=cli_env(user_config_dir))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, client_info=types.Implementation(name=client, version="1")) as s:
                await s.initialize()
                return await body(s)

    return anyio.run(main)


def run_http(url: str, token: str | None, body: Session, client: str = "http-agent") -> Any:
    """Connect to ``url``/mcp with ``token`` and run ``body`` in an initialised client session."""

    async def main() -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            async with streamable_http_client(f"{url}/mcp", http_client=http) as streams:
                async with ClientSession(streams[0], streams[1],
                                         client_info=types.Implementation(name=client, version="1")) as s:
                    await s.initialize()
                    return await body(s)

    return anyio.run(main)


def _text(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


def test_tools_are_listed_with_descriptions_and_output_schemas(sample_project, user_config_dir):
    async def body(s: ClientSession) -> list[types.Tool]:
        return (await s.list_tools()).tools

    tools = {t.name: t for t in run_stdio(sample_project, user_config_dir, body)}
    assert set(tools) == {"memory_projects", "memory_files", "memory_get", "memory_search", "memory_recent",
                          "memory_history", "memory_append", "memory_write", "memory_edit", "memory_remove_entry",
                          "memory_inbox"}  # the firewall's inbox, read-only (issue 20)
    for t in tools.values():
        assert t.description and len(t.description) > 60, t.name
        assert t.output_schema and t.output_schema.get("type") == "object", t.name
        hints = t.annotations
        assert hints is not None and hints.open_world_hint is False, t.name
        assert hints.read_only_hint is not None and hints.idempotent_hint is not None, t.name
        read_only = t.name in {"memory_projects", "memory_files", "memory_get", "memory_search", "memory_recent",
                               "memory_history", "memory_inbox"}
        assert hints.read_only_hint is read_only, t.name
        # all three hints said on every tool (destructiveHint defaults to true in MCP when left out)
        assert hints.destructive_hint is (not read_only and t.name != "memory_append"), t.name
    assert tools["memory_write"].input_schema["required"] == ["path", "content", "expectedHash"]
    assert set(tools["memory_get"].input_schema["properties"]) == {"path", "startLine", "lineCount", "project"}
    assert set(tools["memory_search"].input_schema["properties"]) == {"query", "mode", "limit", "project", "includeSuperseded"}
    assert {"content", "layer", "agent"} <= set(tools["memory_append"].input_schema["properties"])


def test_read_tools_return_structured_content(layered_project, user_config_dir):
    disk = (layered_project / ".fusion/memory/MEMORY.md").read_text(encoding="utf-8")

    async def body(s: ClientSession) -> dict[str, Any]:
        out = {}
        out["files"] = await s.call_tool("memory_files", {})
        out["whole"] = await s.call_tool("memory_get", {})
        out["rest"] = await s.call_tool("memory_get", {"startLine": out["whole"].structured_content["nextStartLine"]})
        out["max"] = await s.call_tool("memory_get", {"lineCount": 400})
        out["over"] = await s.call_tool("memory_get", {"lineCount": 401})
        out["window"] = await s.call_tool("memory_get", {"path": "MEMORY.md", "startLine": 2, "lineCount": 3})
        out["missing"] = await s.call_tool("memory_get", {"path": "2001-01-01.md"})
        out["escape"] = await s.call_tool("memory_get", {"path": "../../etc/passwd"})
        out["search"] = await s.call_tool("memory_search", {"query": "Decisions", "limit": 2})
        return out

    out = run_stdio(layered_project, user_config_dir, body)
    files = out["files"].structured_content
    assert files["project"] == "layered"
    assert files["files"][0]["path"] == ".fusion/memory/MEMORY.md"
    # Windowed as Fusion's fn_memory_get: 120 lines by default, at most 400, then from nextStartLine.
    lines = disk.split("\n")
    assert len(lines) == 191
    first, rest, most = (out[k].structured_content for k in ("whole", "rest", "max"))
    assert first["content"] == "\n".join(lines[:120]) and first["hash"] == content_hash(disk)
    assert (first["startLine"], first["endLine"], first["totalLines"], first["nextStartLine"]) == (1, 120, 191, 121)
    assert first["content"] + "\n" + rest["content"] == disk and rest["nextStartLine"] is None
    assert most["content"] == disk and most["nextStartLine"] is None  # a small document: one call away
    # Past 400 reads 400, as fn_memory_get clamps (tests/core/server/test_memory_get_window.py).
    assert not out["over"].is_error and out["over"].structured_content["content"] == disk
    window = out["window"].structured_content
    assert window["content"] == "\n".join(disk.split("\n")[1:4])
    assert (window["startLine"], window["endLine"]) == (2, 4) and window["hash"] == content_hash(disk)
    assert out["missing"].is_error and "NOT_FOUND" in _text(out["missing"])
    assert out["escape"].is_error and "root:" not in _text(out["escape"])
    hits = out["search"].structured_content["results"]
    assert hits and len(hits) <= 2 and all(h["path"].startswith(".fusion/") for h in hits)


def test_memory_append_follows_seed_002_and_records_the_client(sample_project, user_config_dir):
    before = (sample_project / MEMORY).read_text(encoding="utf-8")

    async def body(s: ClientSession) -> list[types.CallToolResult]:
        return [await s.call_tool("memory_append", {"content": "  Pin the lease clock to now().  "}),
                await s.call_tool("memory_append", {"content": "Pin the lease clock to now()."}),
                await s.call_tool("memory_append", {"content": "   "}),
                await s.call_tool("memory_append", {"content": "a daily note", "layer": "daily"})]

    written, dup, empty, daily = run_stdio(sample_project, user_config_dir, body, client="claude-desktop")
    assert written.structured_content["status"] == "written"
    assert written.structured_content["message"].startswith("Memory written to project scope (")
    assert dup.structured_content["status"] == "skipped_duplicate"
    # An empty entry is a tool error with a stable code and the tool to use next (issue 23).
    assert empty.is_error and _text(empty).startswith("EMPTY_ENTRY: ") and "Next: memory_append" in _text(empty)
    assert empty.meta["memdesk/error"]["code"] == "EMPTY_ENTRY"
    assert "memory_write" not in _text(empty)
    assert daily.is_error and _text(daily).startswith("INVALID_ARGUMENT: ")
    assert str(sample_project) not in written.structured_content["message"]
    after = (sample_project / MEMORY).read_text(encoding="utf-8")
    assert after.startswith(before) and after.endswith("-->\nPin the lease clock to now().")
    assert after.count("Pin the lease clock to now().") == 1


def test_memory_write_needs_the_current_hash(sample_project, user_config_dir):
    async def body(s: ClientSession) -> dict[str, Any]:
        doc = (await s.call_tool("memory_get", {"path": MEMORY})).structured_content
        out = {"doc": doc}
        out["nohash"] = await s.call_tool("memory_write", {"path": MEMORY, "content": "x"})
        out["stale"] = await s.call_tool("memory_write", {"path": MEMORY, "content": "lost", "expectedHash": "0" * 64})
        out["ok"] = await s.call_tool("memory_write", {"path": MEMORY, "content": doc["content"] + "\nnew line\n",
                                                       "expectedHash": doc["hash"]})
        out["outside"] = await s.call_tool("memory_write", {"path": "../x.md", "content": "x",
                                                            "expectedHash": content_hash("")})
        return out

    before = (sample_project / MEMORY).read_text(encoding="utf-8")
    out = run_stdio(sample_project, user_config_dir, body)
    assert out["nohash"].is_error and "expectedHash" in _text(out["nohash"])
    assert out["stale"].is_error and "CONFLICT" in _text(out["stale"])
    assert content_hash(before) in _text(out["stale"])  # the current hash, to merge and retry
    assert out["ok"].structured_content["success"] is True
    assert (sample_project / MEMORY).read_text(encoding="utf-8") == before + "\nnew line\n"
    assert out["outside"].is_error and not (sample_project.parent / "x.md").exists()


def test_readonly_backend_refuses_mcp_writes(sample_project, user_config_dir):
    (sample_project / ".fusion/config.json").write_text(json.dumps({"memoryBackend": "readonly"}), encoding="utf-8")
    before = (sample_project / MEMORY).read_bytes()

    async def body(s: ClientSession) -> list[types.CallToolResult]:
        doc = (await s.call_tool("memory_get", {})).structured_content
        return [await s.call_tool("memory_append", {"content": "refused"}),
                await s.call_tool("memory_write", {"path": MEMORY, "content": "x", "expectedHash": doc["hash"]})]

    for result in run_stdio(sample_project, user_config_dir, body):
        assert result.is_error and "READ_ONLY" in _text(result)
    assert (sample_project / MEMORY).read_bytes() == before


def test_each_document_is_a_resource(layered_project, user_config_dir):
    async def body(s: ClientSession) -> tuple[list[types.Resource], str, Any]:
        listed = (await s.list_resources()).resources
        text = (await s.read_resource("memdesk://layered/.fusion/memory/MEMORY.md")).contents[0].text
        try:
            await s.read_resource("memdesk://layered/../../etc/passwd")
            bad = None
        except Exception as exc:  # the SDK raises the server's error
            bad = exc
        return listed, text, bad

    listed, text, bad = run_stdio(layered_project, user_config_dir, body)
    uris = [str(r.uri) for r in listed]
    docs = [p for p in layered_project.glob(".fusion/memory/*.md")]
    assert "memdesk://layered/.fusion/memory/MEMORY.md" in uris
    assert len([u for u in uris if u.startswith("memdesk://layered/.fusion/memory/")]) == len(docs)
    assert all(r.mime_type == "text/markdown" for r in listed)
    assert text == (layered_project / ".fusion/memory/MEMORY.md").read_text(encoding="utf-8")
    assert bad is not None


def test_mcp_over_http_under_serve_needs_a_token_and_names_it(serve, tokens, sample_project):
    token = tokens.create("ci-bot")
    srv = serve(sample_project)

    async def body(s: ClientSession) -> types.CallToolResult:
        return await s.call_tool("memory_append", {"content": "written over streamable HTTP"})

    result = run_http(srv.url, token, body, client="codex")
    assert result.structured_content["status"] == "written"
    assert (sample_project / MEMORY).read_text(encoding="utf-8").endswith("written over streamable HTTP")
    r = httpx2.post(f"{srv.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=30)
    assert r.status_code == 401
    r = httpx2.post(f"{srv.url}/mcp", json={}, headers={"Authorization": f"Bearer {token}", "Host": "evil.example"},
                    timeout=30)
    assert r.status_code == 421
