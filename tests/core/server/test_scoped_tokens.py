"""Issue 23, scoped tokens: ``memdesk tokens create NAME --scope read|append|write [--project P] [--path GLOB]``,
enforced on every HTTP route (403 naming the scope) and MCP tool (a SCOPE tool error), the same flags on
``memdesk mcp`` over stdio, and tokens made before scopes keeping the full scope and saying so."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from mcp import types
from mcp.client import ClientSession

from core.server.access import Access, glob_matches
from core.server.tokens import TokenStore
from tests.core.server.conftest import cli_env
from tests.core.server.test_server_mcp import MEMORY, _text, run_http

AGENT_GLOB = ".fusion/agent-memory/bot/**"


def test_globs_match_folders_and_segments_in_linear_time():
    assert glob_matches(AGENT_GLOB, ".fusion/agent-memory/bot/MEMORY.md")
    assert glob_matches(AGENT_GLOB, ".fusion/agent-memory/bot/2026-12-01.md")
    assert not glob_matches(AGENT_GLOB, ".fusion/agent-memory/botx/MEMORY.md")
    assert not glob_matches(AGENT_GLOB, ".fusion/memory/MEMORY.md")
    assert glob_matches("**/MEMORY.md", "MEMORY.md") and glob_matches("**/MEMORY.md", ".fusion/memory/MEMORY.md")
    assert glob_matches(".fusion/memory/*.md", ".fusion/memory/DREAMS.md")
    assert not glob_matches(".fusion/memory/*.md", ".fusion/memory/sub/DREAMS.md")
    assert glob_matches(".fusion/memory/20??-*.md", ".fusion/memory/2026-12-01.md")
    # A glob that makes a backtracking matcher take exponential time: the automaton answers at once.
    assert not glob_matches("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", "a" * 20_000)
    assert not glob_matches("**/**/**/**/**/**/**/**/**/**/x", "a/" * 5_000 + "y")


def test_tokens_create_with_scope_and_old_tokens_keep_full_scope(user_config_dir):
    env = cli_env(user_config_dir)
    store = TokenStore()
    store.create("old-host")
    # A token stored before scopes existed: no scope keys at all.
    data = json.loads(store.path.read_text(encoding="utf-8"))
    data["tokens"][0] = {k: v for k, v in data["tokens"][0].items() if k in ("name", "createdAt", "prefix", "hash")}
    store.path.write_text(json.dumps(data), encoding="utf-8")

    made = subprocess.run([sys.executable, "-m", "core.cli", "tokens", "create", "bot", "--scope", "append",
                           "--project", "alpha", "--path", AGENT_GLOB], capture_output=True, text=True, env=env,
                          timeout=120)
    assert made.returncode == 0, made.stderr
    assert "scope append on projects alpha; paths .fusion/agent-memory/bot/**" in made.stderr
    listed = subprocess.run([sys.executable, "-m", "core.cli", "tokens", "list"], capture_output=True, text=True,
                            env=env, timeout=120)
    rows = listed.stdout.splitlines()
    assert "scope: full (write on all projects and paths; created before scopes)" in rows[0]
    assert "scope: append on projects alpha; paths .fusion/agent-memory/bot/**" in rows[1]
    as_json = json.loads(subprocess.run([sys.executable, "-m", "core.cli", "tokens", "list", "--json"],
                                        capture_output=True, text=True, env=env, timeout=120).stdout)
    assert as_json[0]["fullScope"] is True and as_json[0]["scope"] == "write"
    assert as_json[1] == {**as_json[1], "scope": "append", "projects": ["alpha"], "paths": [AGENT_GLOB],
                          "fullScope": False}
    for bad, why in ((["--scope", "admin"], "invalid choice"), (["--path", "/etc/**"], "relative"),
                     (["--path", "../x/**"], "'..'")):
        r = subprocess.run([sys.executable, "-m", "core.cli", "tokens", "create", "x", *bad], capture_output=True,
                           text=True, env=env, timeout=120)
        assert r.returncode == 2 and why in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert [t.name for t in TokenStore().list()] == ["old-host", "bot"]


def test_http_routes_enforce_the_scope(serve, tokens, layered_project, sample_project):
    bot = tokens.create("bot", scope="append", paths=[AGENT_GLOB])
    reader = tokens.create("reader", scope="read")
    only_sample = tokens.create("sample-only", projects=["sample"])
    srv = serve(layered_project, sample_project)
    long_term = layered_project / ".fusion/memory/MEMORY.md"
    before = long_term.read_bytes()
    b, r, o = srv.client(bot), srv.client(reader), srv.client(only_sample)

    assert b.get("/api/memory").status_code == 200  # an append token reads the project's memory
    ok = b.post("/api/memory/append", json={"content": "Bot's own note.", "agent": "bot"})
    assert ok.status_code == 200 and ok.json()["status"] == "written"
    assert "Bot's own note." in (layered_project / ok.json()["path"]).read_text(encoding="utf-8")
    assert ok.json()["path"].startswith(".fusion/agent-memory/bot/")

    refused = [b.post("/api/memory/append", json={"content": "Into the project's notes."}),
               b.put("/api/memory/file?path=MEMORY.md", json={"content": "gone"}),
               r.post("/api/memory/append", json={"content": "reader writes"}),
               r.put("/api/memory", json={"content": "gone"}),
               o.get("/api/memory?project=layered")]
    for resp in refused:
        assert resp.status_code == 403 and resp.json()["code"] == "SCOPE", resp.text
    assert "scope append" in refused[0].json()["error"] and "not one of its paths" in refused[0].json()["error"]
    assert "scope read" in refused[2].json()["error"] and "may not append" in refused[2].json()["error"]
    assert "project 'layered'" in refused[4].json()["error"]
    assert o.get("/api/memory?project=sample").status_code == 200
    assert long_term.read_bytes() == before
    # A read token with paths reads only those documents, and lists only those.
    narrow = srv.client(tokens.create("narrow", scope="read", paths=[".fusion/memory/MEMORY.md"]))
    files = narrow.get("/api/memory/files").json()["files"]
    assert [f["path"] for f in files] == [".fusion/memory/MEMORY.md"]
    assert narrow.get("/api/memory/file?path=DREAMS.md").status_code == 403


def test_mcp_tools_enforce_the_scope_over_http(serve, tokens, layered_project):
    bot = tokens.create("bot", scope="append", paths=[AGENT_GLOB])
    srv = serve(layered_project)
    before = (layered_project / ".fusion/memory/MEMORY.md").read_bytes()

    async def body(s: ClientSession) -> dict[str, Any]:
        doc = (await s.call_tool("memory_get", {"path": "MEMORY.md"})).structured_content
        return {"projects": await s.call_tool("memory_projects", {}),
                "own": await s.call_tool("memory_append", {"content": "Bot over MCP.", "agent": "bot"}),
                "project": await s.call_tool("memory_append", {"content": "Not mine.", "layer": "long-term"}),
                "write": await s.call_tool("memory_write", {"path": "MEMORY.md", "content": "x",
                                                            "expectedHash": doc["hash"]}),
                "edit": await s.call_tool("memory_edit", {"path": "MEMORY.md", "expectedHash": doc["hash"],
                                                          "oldText": "# Project Memory", "newText": "# Mine"})}

    out = run_http(srv.url, bot, body)
    assert out["projects"].structured_content["projects"][0]["access"].startswith("append on all projects")
    assert out["own"].structured_content["status"] == "written"
    for key in ("project", "write", "edit"):
        assert out[key].is_error and _text(out[key]).startswith("SCOPE: token 'bot' has scope append"), key
    assert (layered_project / ".fusion/memory/MEMORY.md").read_bytes() == before


def test_memdesk_mcp_over_stdio_takes_the_scope_flags(sample_project, user_config_dir):
    import anyio
    from mcp.client.stdio import StdioServerParameters, stdio_client

    before = (sample_project / MEMORY).read_bytes()

    async def main() -> list[types.CallToolResult]:
        params = StdioServerParameters(command=sys.executable, args=[
            "-m", "core.cli", "mcp", "--project", str(sample_project), "--scope", "read"], env=cli_env(user_config_dir))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                return [await s.call_tool("memory_get", {}),
                        await s.call_tool("memory_append", {"content": "should not land"})]

    got, refused = anyio.run(main)
    assert not got.is_error
    assert refused.is_error and _text(refused).startswith("SCOPE: this MCP server has scope read")
    assert (sample_project / MEMORY).read_bytes() == before
    assert Access(None, "read").describe() == "read on all projects; all paths"
