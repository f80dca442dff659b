"""Issue 23 item 3, attacked: a client's own numbers reach the read log. ``memory_get`` with ``startLine`` 2**70
is served (past the end: no lines), and its read went on record as given: SQLite refused the integer, the
read log's writer thread died on the error, and every later read of that process went unrecorded (a client
could take itself off the record). Now the numbers are held to SQLite's range and the writer survives any
error of one batch."""

from __future__ import annotations

from typing import Any

from mcp.client import ClientSession

from core.storage import readlog
from tests.core.server.test_server_mcp import run_stdio


def test_an_out_of_range_start_line_neither_breaks_nor_escapes_the_read_log(layered_project, user_config_dir):
    async def body(s: ClientSession) -> Any:
        far = await s.call_tool("memory_get", {"path": "MEMORY.md", "startLine": 2**70})
        later = await s.call_tool("memory_get", {"path": "MEMORY.md", "startLine": 1, "lineCount": 5})
        return far, later

    far, later = run_stdio(layered_project, user_config_dir, body, client="far-reader")
    assert not later.is_error
    rows = readlog.query(root=layered_project)
    assert len(rows) == 2, rows  # the read after the odd one is on record too
    starts = sorted(e.start_line for e in rows)
    assert starts[0] == 1 and 1 <= starts[1] <= 2**63 - 1, starts
    assert all(e.client == "far-reader" for e in rows)
