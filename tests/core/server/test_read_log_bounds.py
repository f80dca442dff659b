"""Issue 23, reads on record: the log stays bounded for servers that never serve 1,000 reads of their own.

An agent host starts ``memdesk mcp`` once per session; each process used to prune only after inserting
``PRUNE_EVERY`` (1,000) rows itself, so a log filled past its bounds by earlier sessions grew for ever
(found from outside: 201,001 rows, 500 of them 100 days old, stayed after three 20-read sessions).
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from mcp.client import ClientSession

from core.storage import readlog
from tests.core.server.test_server_mcp import run_stdio

ROW = ("/p", "p", "MEMORY.md", "0" * 64, 1, 1, 1, 1, "filler", None, "mcp")
INSERT = ("INSERT INTO reads(at, root, project, path, hash, size, start_line, end_line, total_lines, client, token, "
          "via) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)")


def _fill(db: Path, *, old: int, new: int) -> None:
    conn = readlog._connect(db)
    stale = (datetime.now(UTC) - timedelta(days=readlog.MAX_AGE_DAYS + 10)).isoformat(timespec="milliseconds")
    with conn:
        conn.executemany(INSERT, [(stale, *ROW)] * old + [(readlog.now(), *ROW)] * new)
    conn.close()


def _counts(db: Path) -> tuple[int, int, int]:
    cutoff = (datetime.now(UTC) - timedelta(days=readlog.MAX_AGE_DAYS)).isoformat(timespec="milliseconds")
    with sqlite3.connect(db) as conn:
        total, old, mine = conn.execute("SELECT count(*), coalesce(sum(at < ?), 0), coalesce(sum(client = ?), 0) "
                                        "FROM reads", (cutoff, "short-session")).fetchone()
    return total, old, mine


def test_a_short_mcp_session_drops_reads_past_their_age(layered_project, user_config_dir):
    db = user_config_dir / readlog.READS_DB
    _fill(db, old=50, new=5)

    async def one_read(s: ClientSession) -> bool:
        return (await s.call_tool("memory_get", {"path": "MEMORY.md", "lineCount": 3})).is_error

    assert run_stdio(layered_project, user_config_dir, one_read, client="short-session") is False
    total, old, mine = _counts(db)
    assert (old, mine) == (0, 1), (total, old, mine)  # the 50 stale rows went; the session's read is there
    assert total == 6


def test_a_writer_under_1000_rows_keeps_the_log_under_its_row_bound(tmp_path, monkeypatch):
    db = tmp_path / readlog.READS_DB
    monkeypatch.setattr(readlog, "MAX_ROWS", 40)
    _fill(db, old=0, new=100)
    event = readlog.ReadEvent(at=readlog.now(), root="/p", project="p", path="MEMORY.md", hash="1" * 64, size=1,
                              start_line=1, end_line=1, total_lines=1, client="short-session", token=None, via="mcp")
    for _ in range(3):
        readlog.record(event, db)
    readlog.flush()
    total, _old, mine = _counts(db)
    # the first batch pruned the 100 earlier rows to the bound (the three reads may land in one batch or more)
    assert mine == 3 and total - mine <= 39, (total, mine)
