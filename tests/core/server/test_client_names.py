"""Issue 23 item 3, attacked: a client names itself (MCP ``clientInfo.name``, HTTP ``User-Agent``), and that
name went into the read log and history as given. A 200 KB name made each read cost ~400 KB of log (the
log's 200,000 rows could hold 40 GB), and escapes and new lines in it forged lines and colours in
``memdesk activity``. Names are now one printable line of at most 120 characters, wherever they are kept."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from mcp.client import ClientSession

from core.storage import readlog
from tests.core.server.conftest import cli_env
from tests.core.server.test_server_mcp import run_stdio

FORGED = "evil\x1b[31mRED\x1b[0m\n2026-01-01 00:00:00  read  SECRET.md  by operator\u202e" + "A" * 200_000


def test_a_clients_own_name_is_kept_bounded_and_on_one_line(layered_project, user_config_dir, serve, tokens):
    async def body(s: ClientSession) -> Any:
        for _ in range(20):
            await s.call_tool("memory_get", {"path": "MEMORY.md"})
        return await s.call_tool("memory_append", {"content": "From the oddly named client.", "layer": "long-term"})

    appended = run_stdio(layered_project, user_config_dir, body, client=FORGED)
    assert not appended.is_error
    srv = serve(layered_project)
    got = srv.client(tokens.create("agent-h"), {"User-Agent": "ua\t" + "B" * 5000}).get("/api/memory")
    assert got.status_code == 200
    readlog.flush()

    rows = readlog.query(root=layered_project)
    assert len(rows) == 21
    for e in rows:
        assert e.client is not None and len(e.client) <= readlog.MAX_NAME and e.client.isprintable(), e.client[:80]
    assert {e.client[:8] for e in rows} == {"evil?[31", "ua?BBBBB"}
    size = sum(p.stat().st_size for p in user_config_dir.glob("reads.db*"))
    assert size < 2_000_000, size  # was ~24 MB for these 21 reads

    out = subprocess.run([sys.executable, "-m", "core.cli", "activity", "--project", str(layered_project)],
                         capture_output=True, text=True, env=cli_env(user_config_dir), timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 22 and "\x1b" not in out.stdout and "\u202e" not in out.stdout  # 21 reads, 1 append
    assert all(len(line) < 400 for line in lines)
    assert not any(line.startswith("2026-01-01") for line in lines)
    append_line = next(line for line in lines if "  append " in line)
    assert "by evil?[31mRED?[0m?2026-01-01" in append_line, append_line
