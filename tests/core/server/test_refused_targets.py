"""A memory document that is a FIFO or has other hard links is refused as bad state, not as a failure of the
system: ``memdesk append`` exits 2 (it exited 1, the code for a full disk) and HTTP answers 409 (it answered
500, a server error, for a file an agent or a clone planted). One line, nothing on disk changed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.core.hostile import one_line, run_cli, snapshot

AGENT_DOC = ".fusion/agent-memory/bot/MEMORY.md"


def _plant(root: Path, kind: str) -> None:
    (root / AGENT_DOC).parent.mkdir(parents=True)
    if kind == "hard link":
        os.link(root / ".fusion/memory/MEMORY.md", root / AGENT_DOC)
    else:
        os.mkfifo(root / AGENT_DOC)


@pytest.mark.parametrize("kind", ["hard link", "fifo"])
def test_a_planted_document_is_refused_as_bad_state_by_the_cli_and_http(layered_project, user_config_dir, serve,
                                                                       tokens, kind):
    _plant(layered_project, kind)
    before = snapshot(layered_project)

    r = run_cli("append", "--project", str(layered_project), "--file", AGENT_DOC, "an agent's entry")
    assert r.returncode == 2, (r.returncode, r.stderr)
    line = one_line(r.stderr)
    assert AGENT_DOC in line and ("hard link" in line or "named pipe" in line or "not a regular file" in line), line

    srv = serve(layered_project)
    got = srv.client(tokens.create("agent-x")).post("/api/memory/append",
                                                    json={"content": "an agent's entry", "path": AGENT_DOC})
    assert got.status_code == 409 and got.json()["code"] == "WRITE_FAILED", got.text
    assert AGENT_DOC in got.json()["error"]
    assert {k: v for k, v in snapshot(layered_project).items() if not k.startswith(".fusion/memdesk")} == \
        {k: v for k, v in before.items() if not k.startswith(".fusion/memdesk")}


@pytest.mark.parametrize("kind", ["hard link", "fifo"])
def test_mcp_tells_the_agent_another_try_cannot_help(layered_project, user_config_dir, kind):
    """Over MCP the same refusal is a tool error whose next step is not "the same tool again" (the file's state
    will not change by retrying): another document, and the operator told."""
    from mcp.client import ClientSession

    from tests.core.server.test_server_mcp import _text, run_stdio

    _plant(layered_project, kind)
    before = snapshot(layered_project)

    async def body(s: ClientSession):
        return [await s.call_tool("memory_append", {"content": "an agent's entry", "agent": "bot",
                                                    "layer": "long-term"})]

    (res,) = run_stdio(layered_project, user_config_dir, body)
    text = _text(res)
    assert res.is_error and text.startswith("WRITE_FAILED:") and "\n" not in text, text
    assert "same tool again" not in text and "Next: memory_files" in text and "operator" in text, text
    assert {k: v for k, v in snapshot(layered_project).items() if not k.startswith(".fusion/memdesk")} == \
        {k: v for k, v in before.items() if not k.startswith(".fusion/memdesk")}
