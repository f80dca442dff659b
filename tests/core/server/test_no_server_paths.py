"""Issue 23: no absolute server path in any message, through real clients. A document that is a symbolic link
out of the project is refused, and the refusal names neither the link's target nor any folder of the server:
over MCP (the ``mcp`` SDK against ``memdesk mcp``) and over HTTP (a real ``memdesk serve`` in this process)."""

from __future__ import annotations

import re
from pathlib import Path

from mcp import types
from mcp.client import ClientSession

from tests.core.server.test_server_mcp import _text, run_stdio

ABSOLUTE = re.compile(r"(?<![\w.:/<>~'\"`-])/[^\s'\",;:()`]+")


def _link_out(root: Path, tmp_path: Path) -> Path:
    outside = tmp_path / "elsewhere" / "secret-notes.md"
    outside.parent.mkdir()
    outside.write_text("not memdesk's\n", encoding="utf-8")
    (root / ".fusion" / "memory" / "2026-01-01.md").symlink_to(outside)
    return outside


def test_mcp_refusals_name_no_server_path(layered_project: Path, user_config_dir: Path, tmp_path: Path):
    outside = _link_out(layered_project, tmp_path)

    async def body(s: ClientSession) -> list[types.CallToolResult]:
        return [await s.call_tool("memory_get", {"path": "2026-01-01.md"}),
                await s.call_tool("memory_history", {"path": "2026-01-01.md"}),
                await s.call_tool("memory_write", {"path": "2026-01-01.md", "content": "x", "expectedHash": "0" * 64})]

    for res in run_stdio(layered_project, user_config_dir, body):
        text = _text(res)
        assert res.is_error and text.startswith("INVALID_")
        assert str(outside) not in text and str(tmp_path) not in text and not ABSOLUTE.search(text), text
    assert outside.read_text(encoding="utf-8") == "not memdesk's\n"


def test_http_refusals_name_no_server_path(serve, token, layered_project: Path, tmp_path: Path):
    outside = _link_out(layered_project, tmp_path)
    c = serve(layered_project).client(token)
    for r in (c.get("/api/memory/file", params={"path": "2026-01-01.md"}),
              c.put("/api/memory/file", json={"path": "2026-01-01.md", "content": "x"})):
        assert r.status_code == 400, r.text
        error = r.json()["error"]
        assert str(outside) not in error and str(tmp_path) not in error and not ABSOLUTE.search(error), error
    assert outside.read_text(encoding="utf-8") == "not memdesk's\n"
