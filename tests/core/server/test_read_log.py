"""Issue 23, reads on record: every document read through HTTP or MCP is logged (client, token, document, hash,
lines; no text), bounded in size and age; ``memdesk activity`` prints it, and given a time and a client the
operator opens exactly the version that client read, after appends and after a replacement."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

from mcp.client import ClientSession

from core.storage import readlog
from core.storage.fileio import content_hash
from tests.core.server.conftest import cli_env
from tests.core.server.test_server_mcp import run_http, run_stdio

LONG = ".fusion/memory/MEMORY.md"


def _activity(user_config_dir, root, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "core.cli", "activity", "--project", str(root), *args],
                          capture_output=True, text=True, env=cli_env(user_config_dir), timeout=120)


def test_reads_through_http_and_mcp_are_on_record_and_the_version_read_opens(serve, tokens, layered_project,
                                                                             user_config_dir):
    token = tokens.create("agent-r", scope="write")
    srv = serve(layered_project)
    disk = layered_project / LONG
    served_then = disk.read_text(encoding="utf-8")

    r = srv.client(token, {"User-Agent": "codex/1.0"}).get("/api/memory/file", params={"path": "MEMORY.md"})
    assert r.status_code == 200

    async def window(s: ClientSession) -> Any:
        return (await s.call_tool("memory_get", {"path": "MEMORY.md", "startLine": 5, "lineCount": 10})).structured_content

    got = run_http(srv.url, token, window, client="claude-code")
    run_stdio(layered_project, user_config_dir, window, client="stdio-agent")
    before_read_time = datetime.now(UTC)

    rows = readlog.query(root=layered_project)
    by_client = {e.client: e for e in rows}
    assert set(by_client) == {"codex/1.0", "claude-code", "stdio-agent"}
    http, mcp_http, stdio = by_client["codex/1.0"], by_client["claude-code"], by_client["stdio-agent"]
    total = served_then.count("\n") + 1
    assert (http.via, http.token, http.path, http.start_line, http.end_line) == ("http", "agent-r", LONG, 1, total)
    assert (mcp_http.via, mcp_http.token, mcp_http.start_line, mcp_http.end_line) == ("mcp-http", "agent-r", 5, 14)
    assert (stdio.via, stdio.token, stdio.total_lines) == ("mcp", None, total)
    for e in rows:
        assert e.hash == content_hash(served_then) and e.size == len(served_then.encode()) and e.project == "layered"
    assert got["hash"] == mcp_http.hash
    # No document text in the log: a phrase of the document is nowhere in the database's bytes.
    raw = b"".join(p.read_bytes() for p in user_config_dir.glob("reads.db*"))
    assert b"promptWithFallback" in served_then.encode() and b"promptWithFallback" not in raw

    # An agent appends after the reads; the operator still opens exactly what claude-code read.
    srv.client(token).post("/api/memory/append", json={"content": "Appended after the read.", "layer": "long-term"})
    assert disk.read_text(encoding="utf-8") != served_then
    listed = _activity(user_config_dir, layered_project, "--reads", "--client", "claude-code")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.strip().splitlines()
    assert len(lines) == 1 and "read" in lines[0] and "lines 5-14" in lines[0] and "agent-r (claude-code)" in lines[0]
    opened = _activity(user_config_dir, layered_project, "--client", "claude-code", "--at",
                       datetime.now(UTC).isoformat())
    assert opened.returncode == 0, opened.stderr
    assert opened.stdout == served_then

    # Then the document is replaced: the version read comes back from history.
    now_text = disk.read_text(encoding="utf-8")
    w = srv.client(token).put("/api/memory/file?path=MEMORY.md",
                              json={"content": "# Project Memory\n\nRewritten.\n", "expectedHash": content_hash(now_text)})
    assert w.status_code == 200, w.text
    again = _activity(user_config_dir, layered_project, "--open", str(stdio.id))
    assert again.returncode == 0 and again.stdout == served_then
    # Both kinds in the default listing, newest first: the write after the reads.
    both = _activity(user_config_dir, layered_project, "--json")
    import json

    kinds = [row["kind"] for row in json.loads(both.stdout)]
    assert kinds[0] == "replace" and "read" in kinds and "append" in kinds
    none = _activity(user_config_dir, layered_project, "--reads", "--client", "nobody")
    assert none.stdout.strip() == "no activity by 'nobody' in this span"
    early = _activity(user_config_dir, layered_project, "--client", "claude-code", "--at",
                      (before_read_time - timedelta(hours=1)).isoformat())
    assert early.returncode == 1 and "no read by 'claude-code'" in early.stderr


def test_the_read_log_is_bounded_in_rows_and_age(tmp_path):
    db = tmp_path / "reads.db"
    old = (datetime.now(UTC) - timedelta(days=400)).isoformat(timespec="milliseconds")
    conn = readlog._connect(db)  # rows written directly: the writer thread may prune on its own schedule
    conn.executemany("INSERT INTO reads(at, root, project, path, hash, size, start_line, end_line, total_lines, "
                     "client, token, via) VALUES (?, '/p', 'p', 'MEMORY.md', ?, 1, 1, 1, 1, ?, NULL, 'http')",
                     [(old if i < 10 else readlog.now(), "0" * 64, f"c{i}") for i in range(30)])
    assert conn.execute("SELECT count(*) FROM reads").fetchone()[0] == 30
    gone = readlog.prune(conn, max_rows=15, max_age_days=90)
    assert gone == 15
    left = [r[0] for r in conn.execute("SELECT client FROM reads ORDER BY id")]
    assert left == [f"c{i}" for i in range(15, 30)]  # the 10 too old, then the oldest past 15
    conn.close()
