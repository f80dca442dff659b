"""Issue 23's leftover 3: a path-limited read token read the project's memory through a hard link planted in its
own folder (``ln .fusion/memory/MEMORY.md .fusion/agent-memory/bot/MEMORY.md``). Now, as the file layer refuses
a hard-linked document for writes, such a reader is refused it: HTTP 403 ``SCOPE`` and an MCP ``SCOPE`` tool error
(over ``memdesk serve`` and ``memdesk mcp --scope read --path``), one line, no server path, nothing of the
document in the answer; it is not listed either. A full token still reads it; the bot's other documents stay
readable.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.core.server.conftest import cli_env
from tests.core.server.test_server_mcp import _text, run_http

GLOB = ".fusion/agent-memory/bot/**"
LINKED = ".fusion/agent-memory/bot/MEMORY.md"
OWN = ".fusion/agent-memory/bot/2026-08-21.md"


def _plant(root: Path) -> str:
    bot = root / ".fusion/agent-memory/bot"
    bot.mkdir(parents=True)
    os.link(root / ".fusion/memory/MEMORY.md", bot / "MEMORY.md")
    (bot / "2026-08-21.md").write_text("# Daily Memory\n\n- the bot's own note\n", encoding="utf-8")
    return (root / ".fusion/memory/MEMORY.md").read_text(encoding="utf-8")


def _one_line_scope(text: str, root: Path) -> None:
    assert "\n" not in text and str(root) not in text and "/tmp" not in text, text
    assert f"{LINKED} has 1 other hard link(s)" in text and "nothing was read" in text, text


def test_http_refuses_a_path_limited_reader_a_hard_linked_document(serve, tokens, layered_project):
    secret = _plant(layered_project)
    reader = tokens.create("bot-reader", scope="read", paths=[GLOB])
    srv = serve(layered_project, mcp=False)
    r = srv.client(reader)
    got = r.get(f"/api/memory/file?path={LINKED}")
    assert got.status_code == 403, got.text
    body = got.json()
    assert body["code"] == "SCOPE" and body["details"]["code"] == "SCOPE"
    _one_line_scope(body["error"], layered_project)
    assert secret.splitlines()[2] not in got.text
    assert [f["path"] for f in r.get("/api/memory/files").json()["files"]] == [OWN]
    own = r.get(f"/api/memory/file?path={OWN}")
    assert own.status_code == 200 and "the bot's own note" in own.json()["content"]
    owner = srv.client(tokens.create("owner"))
    word = "Ephemeral"  # in the project's memory, so in the hard-linked document too
    assert LINKED in {h["path"] for h in owner.post("/api/memory/search", json={"query": word, "limit": 50,
                                                                                "derived": True}).json()["results"]}
    hits = r.post("/api/memory/search", json={"query": word, "limit": 50, "derived": True})
    assert hits.status_code == 200 and all(h["path"] != LINKED for h in hits.json()["results"]), hits.text
    full = owner.get(f"/api/memory/file?path={LINKED}")
    assert full.status_code == 200 and full.json()["content"] == secret


def test_mcp_refuses_it_over_http_and_stdio(serve, tokens, layered_project, user_config_dir):
    secret = _plant(layered_project)
    reader = tokens.create("bot-reader", scope="read", paths=[GLOB])
    srv = serve(layered_project)

    async def body(s: ClientSession) -> dict[str, Any]:
        got = await s.call_tool("memory_get", {"path": LINKED})
        try:
            read = await s.read_resource(f"memdesk://layered/{LINKED}")
            resource = "".join(getattr(c, "text", "") for c in read.contents)
        except Exception as exc:  # the SDK raises the JSON-RPC error
            resource = f"refused: {exc}"
        own = await s.call_tool("memory_get", {"path": OWN})
        listed = [str(x.uri) for x in (await s.list_resources()).resources]
        return {"got": got, "resource": resource, "own": own, "listed": listed}

    for out in (run_http(srv.url, reader, body), _stdio(layered_project, user_config_dir, body)):
        got = out["got"]
        assert got.is_error and _text(got).startswith("SCOPE: "), _text(got)
        _one_line_scope(_text(got), layered_project)
        assert out["resource"].startswith("refused: ") and "hard link" in out["resource"], out["resource"]
        assert secret.splitlines()[2] not in out["resource"]
        assert not out["own"].is_error and "the bot's own note" in out["own"].structured_content["content"]
        assert out["listed"] == [f"memdesk://layered/{OWN}"]


def _stdio(root: Path, user_config_dir: Path, body: Any) -> Any:
    async def main() -> Any:
        params = StdioServerParameters(command=sys.executable, args=[
            "-m", "core.cli", "mcp", "--project", str(root), "--scope", "read", "--path", GLOB],
            env=cli_env(user_config_dir))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return await body(s)

    return anyio.run(main)
