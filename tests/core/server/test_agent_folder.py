"""Issue 23 item 6: a new agent's folder as Fusion makes it, byte for byte, through real clients.

Fusion, on an agent's first memory write, makes ``MEMORY.md``, ``DREAMS.md`` and today's daily note (each with
its scaffold, only when missing), then appends ``\\n<content>\\n`` (Runfusion/Fusion
``packages/engine/src/agent-tools.ts`` ``syncAgentMemoryFile`` and ``createMemoryAppendTool`` at 51870ed2;
``packages/core/src/memory-dreams.ts`` ``ensureAgentMemoryFiles`` at f4de01a1). The bytes below are restated
from there; none of Fusion's code is in memdesk.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from mcp import types
from mcp.client import ClientSession

from tests.core.server.test_server_mcp import run_stdio

AGENT_MEMORY = b"# Agent Memory\n\n<!-- Per-agent memory. Keep separate from workspace Project Memory. -->\n\n\n"
AGENT_DREAMS = b"# Agent Memory Dreams\n\n<!-- Synthesized patterns from this agent's daily notes. -->\n"


def _daily(day: str) -> bytes:
    return f"# Agent Daily Memory {day}\n\n<!-- Running observations for this agent. -->\n".encode()


def _folder(root: Path, agent: str) -> dict[str, bytes]:
    folder = root / ".fusion" / "agent-memory" / agent
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_an_agents_first_append_over_mcp_makes_its_whole_folder(layered_project: Path, user_config_dir: Path):
    day = datetime.now(UTC).date().isoformat()
    reviewer_memory = (layered_project / ".fusion/agent-memory/reviewer/MEMORY.md").read_bytes()

    async def body(s: ClientSession) -> list[types.CallToolResult]:
        return [await s.call_tool("memory_append", {"content": "First daily note.", "agent": "new-bot"}),
                await s.call_tool("memory_append", {"content": "Second note.", "agent": "new-bot"}),
                await s.call_tool("memory_append", {"content": "Reviewer's note today.", "agent": "reviewer"})]

    first, second, reviewer = run_stdio(layered_project, user_config_dir, body)
    assert not first.is_error and not second.is_error and not reviewer.is_error
    assert _folder(layered_project, "new-bot") == {
        f"{day}.md": _daily(day) + b"\nFirst daily note.\n" + b"\nSecond note.\n",
        "DREAMS.md": AGENT_DREAMS,
        "MEMORY.md": AGENT_MEMORY,
    }
    # An agent that has files: only what is missing is made, nothing that exists is touched.
    reviewer_folder = _folder(layered_project, "reviewer")
    assert reviewer_folder["MEMORY.md"] == reviewer_memory
    assert reviewer_folder["DREAMS.md"] == AGENT_DREAMS
    assert reviewer_folder[f"{day}.md"] == _daily(day) + b"\nReviewer's note today.\n"


def test_an_agents_first_long_term_append_over_http_makes_its_whole_folder(serve, tokens, layered_project: Path):
    day = datetime.now(UTC).date().isoformat()
    token = tokens.create("bot-http", scope="append", paths=[".fusion/agent-memory/http-bot/**"])
    srv = serve(layered_project)
    r = srv.client(token).post("/api/memory/append", json={"content": "Durable: use the DB clock.",
                                                           "agent": "http-bot", "layer": "long-term"})
    assert r.status_code == 200 and r.json()["status"] == "written"
    assert _folder(layered_project, "http-bot") == {
        f"{day}.md": _daily(day),
        "DREAMS.md": AGENT_DREAMS,
        "MEMORY.md": AGENT_MEMORY + b"\nDurable: use the DB clock.\n",
    }
    # The new documents are listed at once.
    files = {f["path"] for f in srv.client(token).get("/api/memory/files").json()["files"]}
    assert {f".fusion/agent-memory/http-bot/{n}" for n in ("MEMORY.md", "DREAMS.md", f"{day}.md")} <= files
