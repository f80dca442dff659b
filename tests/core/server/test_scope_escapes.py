"""Issue 23 item 2, attacked from outside: a scoped token escaping its scope through a real ``serve``.

- A path-glob token writing (or reading) outside its glob through a link inside the project: a cloned
  repository whose agent folder holds ``MEMORY.md -> ../../memory/MEMORY.md`` (HTTP and MCP).
- A write token limited to some documents changing the whole project's settings (``PUT /api/settings``).
- A project-scoped (or path-scoped) token listing another project's documents through MCP's
  ``resources/list``.

Each failed on main before the fix; each refusal is 403 ``SCOPE`` (or a ``SCOPE`` tool error) and leaves
every byte on disk as it was.
"""

from __future__ import annotations

import os
from typing import Any

from mcp.client import ClientSession

from tests.core.server.test_server_mcp import _text, run_http

AGENT_GLOB = ".fusion/agent-memory/bot/**"


def _plant_links(root: Any) -> None:
    """The bot's folder, as a hostile clone ships it: its files are links to the project's documents."""
    bot = root / ".fusion/agent-memory/bot"
    bot.mkdir(parents=True)
    os.symlink("../../memory/MEMORY.md", bot / "MEMORY.md")
    os.symlink("../../memory/DREAMS.md", bot / "2026-08-21.md")


def _snapshot(root: Any) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.md")) if p.is_file()}


def test_a_path_token_cannot_write_or_read_through_a_link_in_its_folder(serve, tokens, layered_project):
    _plant_links(layered_project)
    bot = tokens.create("bot", scope="append", paths=[AGENT_GLOB])
    botw = tokens.create("botw", scope="write", paths=[AGENT_GLOB])
    reader = tokens.create("reader", scope="read", paths=[AGENT_GLOB])
    srv = serve(layered_project)
    before = _snapshot(layered_project)

    b, w, r = srv.client(bot), srv.client(botw), srv.client(reader)
    refused = [b.post("/api/memory/append", json={"content": "Bot via link.", "path": ".fusion/agent-memory/bot/MEMORY.md"}),
               b.post("/api/memory/append", json={"content": "Bot via link.",
                                                  "path": ".fusion/agent-memory/bot/2026-08-21.md"}),
               w.put("/api/memory/file?path=.fusion/agent-memory/bot/MEMORY.md", json={"content": "gone"}),
               r.get("/api/memory/file?path=.fusion/agent-memory/bot/MEMORY.md")]
    for resp in refused:
        assert resp.status_code == 403 and resp.json()["code"] == "SCOPE", resp.text
    assert "is a link to .fusion/memory/MEMORY.md, not one of its paths" in refused[0].json()["error"]
    assert "is a link to .fusion/memory/DREAMS.md" in refused[1].json()["error"]
    # The reader's listing and search leave the links out: their text is the project's, not the bot's.
    assert [f["path"] for f in r.get("/api/memory/files").json()["files"]] == []
    assert r.post("/api/memory/search", json={"query": "memory"}).json()["results"] == []

    async def body(s: ClientSession) -> dict[str, Any]:
        doc = (await s.call_tool("memory_get", {"path": "MEMORY.md"})).structured_content
        return {"append": await s.call_tool("memory_append", {"content": "Bot via link over MCP.", "agent": "bot",
                                                              "layer": "long-term"}),
                "edit": await s.call_tool("memory_edit", {"path": ".fusion/agent-memory/bot/MEMORY.md",
                                                          "expectedHash": doc["hash"], "oldText": "# Project Memory",
                                                          "newText": "# Bot's now"})}

    out = run_http(srv.url, botw, body)
    for key in ("append", "edit"):
        assert out[key].is_error and _text(out[key]).startswith("SCOPE: token 'botw'"), _text(out[key])
        assert "is a link to .fusion/memory/MEMORY.md" in _text(out[key])
    assert _snapshot(layered_project) == before
    # Its own real file is still the bot's to write.
    (layered_project / ".fusion/agent-memory/bot/MEMORY.md").unlink()
    ok = b.post("/api/memory/append", json={"content": "Bot's own.", "path": ".fusion/agent-memory/bot/MEMORY.md"})
    assert ok.status_code == 200 and ok.json()["status"] == "written", ok.text


def test_a_write_token_limited_to_paths_cannot_change_the_projects_settings(serve, tokens, layered_project):
    limited = tokens.create("botw", scope="write", paths=[AGENT_GLOB])
    full = tokens.create("owner", scope="write")
    srv = serve(layered_project)
    config = layered_project / ".fusion/config.json"
    before = config.read_bytes()

    got = srv.client(limited).put("/api/settings", json={"memoryBackendType": "readonly"})
    assert got.status_code == 403 and got.json()["code"] == "SCOPE", got.text
    assert "it may not change settings (its --path globs limit it to those documents)" in got.json()["error"]
    assert config.read_bytes() == before
    assert srv.client(limited).get("/api/settings").status_code == 200  # reading them is fine
    ok = srv.client(full).put("/api/settings", json={"memoryDreamsEnabled": True})
    assert ok.status_code == 200 and ok.json()["memoryDreamsEnabled"] is True, ok.text


def test_resources_list_shows_only_the_callers_projects_and_paths(serve, tokens, layered_project, sample_project):
    only_sample = tokens.create("sample-only", scope="read", projects=["sample"])
    narrow = tokens.create("narrow", scope="read", paths=[".fusion/memory/MEMORY.md"])
    full = tokens.create("owner")
    srv = serve(layered_project, sample_project)

    async def body(s: ClientSession) -> list[str]:
        return [str(r.uri) for r in (await s.list_resources()).resources]

    everything = run_http(srv.url, full, body)
    assert any(u.startswith("memdesk://layered/") for u in everything)
    assert any(u.startswith("memdesk://sample/") for u in everything)
    seen = run_http(srv.url, only_sample, body)
    assert seen and all(u.startswith("memdesk://sample/") for u in seen), seen
    assert run_http(srv.url, narrow, body) == ["memdesk://layered/.fusion/memory/MEMORY.md"]
