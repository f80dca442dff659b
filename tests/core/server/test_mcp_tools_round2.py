"""Issue 23, MCP: the server's version, the new tools (memory_projects, memory_edit, memory_remove_entry,
memory_recent, memory_history), refusals as tool errors without server paths, resource-change
notifications and an HTTP session tied to its token: through the real ``mcp`` SDK client over stdio
(``memdesk mcp`` as a subprocess) and streamable HTTP (``memdesk serve`` in a thread)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import types
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from core.storage.fileio import content_hash
from core.storage.history.versions import list_versions
from tests.core.server.conftest import cli_env
from tests.core.server.test_server_mcp import MEMORY, _text, run_http, run_stdio

LONG = ".fusion/memory/MEMORY.md"


def _all_text(results: list[types.CallToolResult]) -> str:
    return "\n".join(_text(r) + json.dumps(r.structured_content or {}) + json.dumps(r.meta or {}) for r in results)


def test_server_reports_its_version_and_lists_projects(layered_project, user_config_dir):
    from importlib.metadata import version

    async def body(s: ClientSession) -> Any:
        return s.initialize_result, await s.call_tool("memory_projects", {})

    init, projects = run_stdio(layered_project, user_config_dir, body)
    assert init.server_info.name == "memdesk" and init.server_info.version == version("memdesk") != ""
    listed = projects.structured_content["projects"]
    assert [p["key"] for p in listed] == ["layered"]
    assert listed[0]["layout"] == "layered" and listed[0]["memoryPath"] == LONG and listed[0]["writable"] is True
    assert str(layered_project) not in _text(projects)


def test_memory_edit_replaces_one_span_or_one_section_under_the_hash(layered_project, user_config_dir):
    disk = layered_project / LONG
    before = disk.read_text(encoding="utf-8")
    assert "## Pitfalls" in before

    async def body(s: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        doc = (await s.call_tool("memory_get", {"path": "MEMORY.md"})).structured_content
        out["stale"] = await s.call_tool("memory_edit", {"path": "MEMORY.md", "expectedHash": "0" * 64,
                                                         "oldText": "## Decisions", "newText": "## Choices"})
        out["missing"] = await s.call_tool("memory_edit", {"path": "MEMORY.md", "expectedHash": doc["hash"],
                                                           "oldText": "no such text anywhere", "newText": "x"})
        out["both"] = await s.call_tool("memory_edit", {"path": "MEMORY.md", "expectedHash": doc["hash"],
                                                        "oldText": "a", "section": "Pitfalls", "newText": "x"})
        out["span"] = await s.call_tool("memory_edit", {"path": "MEMORY.md", "expectedHash": doc["hash"],
                                                        "oldText": "## Decisions", "newText": "## Choices"})
        out["section"] = await s.call_tool("memory_edit", {
            "path": "MEMORY.md", "expectedHash": out["span"].structured_content["hash"], "section": "## Pitfalls",
            "newText": "- Never trust the app clock."})
        return out

    out = run_stdio(layered_project, user_config_dir, body, client="editor-agent")
    assert out["stale"].is_error and _text(out["stale"]).startswith("CONFLICT: ")
    assert out["stale"].meta["memdesk/error"]["currentHash"] == content_hash(before)
    assert out["missing"].is_error and _text(out["missing"]).startswith("SPAN_NOT_FOUND: ")
    assert "Next: memory_get" in _text(out["missing"])
    assert out["both"].is_error and _text(out["both"]).startswith("INVALID_ARGUMENT: ")
    after = disk.read_text(encoding="utf-8")
    assert out["section"].structured_content["hash"] == content_hash(after)
    assert "## Choices" in after and "## Decisions" not in after
    pit = after.index("## Pitfalls")
    nxt = after.find("\n## ", pit + 1)
    assert after[pit:nxt if nxt >= 0 else None].strip() == "## Pitfalls\n\n- Never trust the app clock."
    # Everything outside the two changes is byte for byte as before.
    assert after.replace("## Choices", "## Decisions", 1).split("## Pitfalls")[0] == before.split("## Pitfalls")[0]
    # Each change kept the text before it in history, with the agent as author.
    versions = list_versions(layered_project, LONG)
    assert [v.source for v in versions[:2]] == ["edit", "edit"]
    assert versions[-1].hash == content_hash(before) and "editor-agent" in (versions[0].author or "")


def test_memory_remove_entry_by_text_or_line_keeps_it_in_history(sample_project, user_config_dir):
    disk = sample_project / MEMORY

    async def body(s: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for entry in ("Leases use the DB clock.", "Retry uploads twice.", "Keep the cache warm."):
            await s.call_tool("memory_append", {"content": entry})
        doc = (await s.call_tool("memory_get", {"path": MEMORY, "lineCount": 400})).structured_content
        out["before"] = doc["content"]
        out["by_text"] = await s.call_tool("memory_remove_entry", {"path": MEMORY, "expectedHash": doc["hash"],
                                                                   "text": "Retry uploads twice."})
        h = out["by_text"].structured_content["hash"]
        lines = disk.read_text(encoding="utf-8").split("\n")
        out["by_line"] = await s.call_tool("memory_remove_entry", {
            "path": MEMORY, "expectedHash": h, "line": lines.index("Keep the cache warm.") + 1})
        out["gone"] = await s.call_tool("memory_remove_entry", {
            "path": MEMORY, "expectedHash": out["by_line"].structured_content["hash"], "text": "Retry uploads twice."})
        out["history"] = await s.call_tool("memory_history", {"path": MEMORY})
        return out

    out = run_stdio(sample_project, user_config_dir, body)
    before = out["before"]
    after = disk.read_text(encoding="utf-8")
    assert "Leases use the DB clock." in after
    assert "Retry uploads twice." not in after and "Keep the cache warm." not in after
    assert out["by_text"].structured_content["removed"].endswith("-->\nRetry uploads twice.")
    # Each entry went with its date marker and the blank line before it: the two removals undo the last two
    # appends byte for byte.
    assert after == before[:before.index("\n\n<!-- ", before.index("Leases use the DB clock."))]
    assert out["gone"].is_error and _text(out["gone"]).startswith("ENTRY_NOT_FOUND: ")
    versions = out["history"].structured_content["versions"]
    assert [v["source"] for v in versions[:2]] == ["remove-entry", "remove-entry"]
    assert versions[1]["hash"] == content_hash(before)
    assert out["history"].structured_content["currentHash"] == content_hash(after)


def test_memory_recent_says_what_changed_and_by_whom(layered_project, user_config_dir):
    async def body(s: ClientSession) -> dict[str, Any]:
        await s.call_tool("memory_append", {"content": "Deploys freeze on Fridays.", "layer": "long-term"})
        doc = (await s.call_tool("memory_get", {"path": "MEMORY.md"})).structured_content
        await s.call_tool("memory_edit", {"path": "MEMORY.md", "expectedHash": doc["hash"],
                                          "oldText": "Deploys freeze on Fridays.", "newText": "Deploys freeze on "
                                          "Thursdays."})
        return {"recent": await s.call_tool("memory_recent", {"since": "1h"}),
                "future": await s.call_tool("memory_recent", {"since": "2999-01-01T00:00:00Z"}),
                "bad": await s.call_tool("memory_recent", {"since": "yesterday-ish"})}

    out = run_stdio(layered_project, user_config_dir, body, client="recent-agent")
    changes = out["recent"].structured_content["changes"]
    kinds = [(c["kind"], c["path"]) for c in changes[:2]]
    assert kinds == [("replace", LONG), ("append", LONG)]
    assert changes[1]["text"] == "Deploys freeze on Fridays." and changes[1]["author"] == "recent-agent"
    assert changes[0]["author"] == "recent-agent" and changes[0]["source"] == "edit"
    assert out["future"].structured_content["changes"] == []
    assert out["bad"].is_error and _text(out["bad"]).startswith("INVALID_ARGUMENT: since")


def test_refusals_are_tool_errors_with_a_code_and_no_server_path(sample_project, user_config_dir):
    (sample_project / ".fusion/config.json").write_text(json.dumps({"memoryBackend": "readonly"}), encoding="utf-8")

    async def body(s: ClientSession) -> list[types.CallToolResult]:
        doc = (await s.call_tool("memory_get", {})).structured_content
        return [await s.call_tool("memory_append", {"content": "refused"}),
                await s.call_tool("memory_append", {"content": ""}),
                await s.call_tool("memory_append", {"content": 42}),
                await s.call_tool("memory_get", {"path": "/etc/passwd"}),
                await s.call_tool("memory_get", {"path": "../outside.md"}),
                await s.call_tool("memory_get", {"project": "elsewhere"}),
                await s.call_tool("memory_write", {"path": MEMORY, "content": "x", "expectedHash": doc["hash"]}),
                await s.call_tool("memory_write", {"path": MEMORY}),
                await s.call_tool("memory_nonexistent", {}),
                await s.call_tool("memory_get", {"path": "notes/todo.md"})]

    results = run_stdio(sample_project, user_config_dir, body)
    codes = [_text(r).split(":", 1)[0] for r in results]
    assert all(r.is_error for r in results), codes
    assert codes == ["READ_ONLY", "EMPTY_ENTRY", "INVALID_ARGUMENT", "INVALID_PATH", "INVALID_PATH",
                     "PROJECT_NOT_SERVED", "READ_ONLY", "INVALID_ARGUMENT", "UNKNOWN_TOOL", "INVALID_PATH"]
    assert "memory_files lists them" in _text(results[9])
    for r in results:
        t = _text(r)
        assert "\n" not in t and " Next: " in t, t
        assert r.meta["memdesk/error"]["code"] == t.split(":", 1)[0]
    everything = _all_text(results)
    assert str(sample_project) not in everything and str(Path.home()) not in everything
    assert "pydantic" not in everything and "errors.pydantic.dev" not in everything
    assert "memdesk files" not in everything  # tools name tools, not CLI commands
    assert "content is required" in _text(results[7]) or "expectedHash is required" in _text(results[7])


def test_subscribers_are_told_when_a_document_changes(layered_project, user_config_dir):
    """A client subscribed to MEMORY.md's resource gets notifications/resources/updated for a change through
    a tool and for one another program made on disk; a document it did not subscribe to stays quiet."""
    uri = f"memdesk://layered/{LONG}"
    daily_uri = "memdesk://layered/.fusion/memory/DREAMS.md"
    seen: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification) and isinstance(message, types.ResourceUpdatedNotification):
            seen.append(str(message.params.uri))
        elif getattr(message, "method", None) == "notifications/resources/updated":
            seen.append(str(message.params.uri))

    async def main() -> tuple[list[str], bool]:
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "core.cli", "mcp", "--project", str(layered_project)],
                                       env=cli_env(user_config_dir))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as s:
                init = await s.initialize()
                await s.subscribe_resource(uri)
                await s.call_tool("memory_append", {"content": "Subscribed entry.", "layer": "long-term"})
                with anyio.fail_after(10):
                    while uri not in seen:
                        await anyio.sleep(0.05)
                first = len(seen)
                with (layered_project / LONG).open("a", encoding="utf-8") as f:  # another program's append
                    f.write("\nWritten around memdesk.\n")
                with anyio.fail_after(10):
                    while len(seen) == first:
                        await anyio.sleep(0.05)
                bad = None
                try:
                    await s.subscribe_resource("memdesk://layered/../../etc/passwd")
                except Exception as exc:  # the SDK raises the server's error
                    bad = exc
                return list(seen), bool(init.capabilities.resources and init.capabilities.resources.subscribe) \
                    and bad is not None

    got, ok = anyio.run(main)
    assert ok and got[:2] == [uri, uri] and daily_uri not in got


def test_an_http_session_belongs_to_the_token_that_opened_it(serve, tokens, sample_project):
    alice, mallory = tokens.create("alice"), tokens.create("mallory")
    srv = serve(sample_project)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}}}
    accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    r = httpx2.post(f"{srv.url}/mcp", json=init, headers={**accept, "Authorization": f"Bearer {alice}"}, timeout=30)
    assert r.status_code == 200
    sid = r.headers["mcp-session-id"]
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    ses = {**accept, "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"}
    stolen = httpx2.post(f"{srv.url}/mcp", json=call, headers={**ses, "Authorization": f"Bearer {mallory}"},
                         timeout=30)
    assert stolen.status_code == 403 and stolen.json()["code"] == "SESSION_TOKEN"
    httpx2.post(f"{srv.url}/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                headers={**ses, "Authorization": f"Bearer {alice}"}, timeout=30)
    own = httpx2.post(f"{srv.url}/mcp", json=call, headers={**ses, "Authorization": f"Bearer {alice}"}, timeout=30)
    assert own.status_code == 200 and "memory_edit" in own.text

    # The SDK client over HTTP gets the same tools and the same refusals.
    async def body(s: ClientSession) -> types.CallToolResult:
        return await s.call_tool("memory_append", {"content": "   "})

    empty = run_http(srv.url, alice, body)
    assert empty.is_error and _text(empty).startswith("EMPTY_ENTRY: ")


def test_a_new_agents_files_get_fusions_agent_scaffolds_byte_for_byte(layered_project, user_config_dir):
    """Fusion writes an agent's files with its own scaffolds (Runfusion/Fusion packages/core/src/memory-backend.ts,
    the agent memory files: "# Agent Memory" / "# Agent Daily Memory D"), not the project's; so does memdesk for an
    agent's first append through MCP."""
    from datetime import UTC, datetime

    day = datetime.now(UTC).date().isoformat()

    async def body(s: ClientSession) -> list[types.CallToolResult]:
        return [await s.call_tool("memory_append", {"content": "First daily note.", "agent": "new-bot"}),
                await s.call_tool("memory_append", {"content": "First durable note.", "agent": "new-bot",
                                                     "layer": "long-term"})]

    daily, long_term = run_stdio(layered_project, user_config_dir, body)
    assert daily.structured_content["path"] == f".fusion/agent-memory/new-bot/{day}.md"
    folder = layered_project / ".fusion/agent-memory/new-bot"
    assert (folder / f"{day}.md").read_bytes() == (
        f"# Agent Daily Memory {day}\n\n<!-- Running observations for this agent. -->\n"
        "\nFirst daily note.\n").encode()
    assert long_term.structured_content["path"] == ".fusion/agent-memory/new-bot/MEMORY.md"
    assert (folder / "MEMORY.md").read_bytes() == (
        b"# Agent Memory\n\n<!-- Per-agent memory. Keep separate from workspace Project Memory. -->\n\n\n"
        b"\nFirst durable note.\n")


def test_an_agents_edit_is_screened_as_the_agents_write(sample_project, user_config_dir):
    """memory_edit and memory_remove_entry go through the write pipeline as the MCP client's writes: a secret
    an agent edits in is held by the firewall (the agents' policy), not written as the operator's would be."""
    secret = "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"
    before = (sample_project / MEMORY).read_bytes()

    async def body(s: ClientSession) -> types.CallToolResult:
        doc = (await s.call_tool("memory_get", {"path": MEMORY})).structured_content
        return await s.call_tool("memory_edit", {"path": MEMORY, "expectedHash": doc["hash"],
                                                 "oldText": "# Project Memory",
                                                 "newText": f"# Project Memory\n\ndeploy token {secret}"})

    held = run_stdio(sample_project, user_config_dir, body, client="edit-agent")
    assert not held.is_error and held.structured_content["status"] == "held" and held.structured_content["inboxId"]
    assert held.structured_content["flags"][0]["kind"] == "secret"
    assert (sample_project / MEMORY).read_bytes() == before


def test_an_http_subscriber_is_told_of_a_change_made_through_the_http_api(serve, tokens, layered_project):
    from mcp.client.streamable_http import streamable_http_client

    token = tokens.create("watcher")
    srv = serve(layered_project)
    uri = f"memdesk://layered/{LONG}"
    seen: list[str] = []

    async def on_message(message: Any) -> None:
        if getattr(message, "method", None) == "notifications/resources/updated":
            seen.append(str(message.params.uri))

    async def main() -> None:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
            async with streamable_http_client(f"{srv.url}/mcp", http_client=http) as streams:
                async with ClientSession(streams[0], streams[1], message_handler=on_message) as s:
                    await s.initialize()
                    await s.subscribe_resource(uri)
                    r = await http.post(f"{srv.url}/api/memory/append",
                                        json={"content": "Changed over HTTP.", "layer": "long-term"})
                    assert r.status_code == 200 and r.json()["status"] == "written"
                    with anyio.fail_after(10):
                        while uri not in seen:
                            await anyio.sleep(0.05)

    anyio.run(main)
    assert seen[0] == uri
