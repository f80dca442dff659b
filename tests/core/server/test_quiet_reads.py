"""A served read wakes no other thread per read (issue 23's read p95): reads go on record in batches, and an
agent appending between reads is recorded as one joined append, with every version a client read still
openable. Real server, a real second process appending with ``>>``, real history and read log."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from core.project import Project
from core.server import noticing
from core.storage import readlog
from core.storage.history import versions as history
from core.storage.noticed import EXTERNAL_APPEND, EXTERNAL_CHANGE
from tests.core.server.conftest import cli_env

MEM = ".fusion/memory.md"


def _shell_append(path: Path, line: str) -> None:
    """Another program: ``printf ... >> FILE`` in its own process."""
    subprocess.run(["sh", "-c", 'printf "%s" "$1" >> "$2"', "sh", line, str(path)], check=True, timeout=60)


def _event(i: int, db: Path) -> readlog.ReadEvent:
    return readlog.ReadEvent(readlog.now(), "/r", "r", MEM, "0" * 64, 10, 1, 1, 1, f"client-{i}", None, "http")


def test_reads_spread_over_a_spell_go_into_the_log_in_one_batch(tmp_path, monkeypatch):
    db = tmp_path / "reads.db"
    readlog.record(_event(-1, db), db)
    readlog.flush()
    writer = readlog._writer
    assert writer is not None
    monkeypatch.setattr(readlog, "LINGER_S", 5.0)  # a spell longer than the reads below take
    batches = writer.batches
    for i in range(20):  # one read every few milliseconds, as a busy client reads
        readlog.record(_event(i, db), db)
        time.sleep(0.005)
    readlog.flush()  # a flush does not wait out the linger
    rows = readlog.query(db=db, limit=100)
    assert sorted(e.client for e in rows) == sorted(["client--1", *(f"client-{i}" for i in range(20))])
    assert writer.batches - batches == 1  # one transaction, not one per read (a thread woken per read)


def test_appends_between_reads_are_one_joined_record_and_every_version_read_opens(
        serve, token, sample_project: Path, monkeypatch):
    monkeypatch.setattr(noticing, "APPEND_LINGER_S", 3.0)
    c = serve(sample_project).client(token, {"User-Agent": "reader/1"})
    mem = sample_project / MEM
    served = [c.get("/api/memory").json()["content"]]
    for i in range(5):
        _shell_append(mem, f"\n- agent note {i}: leases renew every {i + 1}0 s\n")
        served.append(c.get("/api/memory").json()["content"])
        assert f"agent note {i}" in served[-1]
    noticing.flush()  # what the linger would do a moment later
    history.settled()
    events = [e for e in history.list_events(sample_project, MEM) if e.source == EXTERNAL_APPEND]
    assert len(events) == 1 and events[0].author == "program"  # five appends, one record, not five
    assert events[0].text == served[-1][len(served[0]):]  # exactly what the agent added, in order
    project = Project(sample_project)
    reads = [e for e in readlog.query(root=sample_project) if e.client == "reader/1"]
    assert len(reads) == 6
    opened = sorted(readlog.version_read(project, e) or "" for e in reads)
    assert opened == sorted(served)  # each text a read served, byte for byte


def test_a_rewrite_after_waiting_appends_records_both_at_once_in_order(serve, token, sample_project: Path,
                                                                         monkeypatch):
    monkeypatch.setattr(noticing, "APPEND_LINGER_S", 3.0)
    c = serve(sample_project).client(token)
    mem = sample_project / MEM
    c.get("/api/memory")
    _shell_append(mem, "\n- appended by an agent\n")
    grown = c.get("/api/memory").json()["content"]
    mem.write_text(grown.replace("## Pitfalls", "## Traps"), encoding="utf-8")  # another program rewrites it
    assert "## Traps" in c.get("/api/memory").json()["content"]
    history.settled()  # no flush: the rewrite handed the waiting append over first
    appends = [e for e in history.list_events(sample_project, MEM) if e.source == EXTERNAL_APPEND]
    kept = [v for v in history.list_versions(sample_project, MEM) if v.source == EXTERNAL_CHANGE]
    assert [e.text for e in appends] == ["\n- appended by an agent\n"]
    assert len(kept) == 1 and history.get_version(sample_project, kept[0].id)[1] == grown


def test_memdesk_mcp_records_what_it_noticed_before_it_exits(sample_project: Path, user_config_dir):
    """A short-lived ``memdesk mcp`` (stdio) reads, an agent appends, it reads again and is closed at once:
    the joined append is recorded before the process ends, not lost with the linger."""
    import anyio
    from mcp import types
    from mcp.client import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    mem = sample_project / MEM

    async def main() -> None:
        params = StdioServerParameters(command=sys.executable, args=["-m", "core.cli", "mcp", "--project",
                                                                     str(sample_project)], env=cli_env(user_config_dir))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, client_info=types.Implementation(name="t", version="1")) as s:
                await s.initialize()
                await s.call_tool("memory_get", {"lineCount": 400})
                _shell_append(mem, "\n- noticed just before the exit\n")
                got = await s.call_tool("memory_get", {"startLine": 1, "lineCount": 400})
                assert not got.is_error

    anyio.run(main)
    events = [e for e in history.list_events(sample_project, MEM) if e.source == EXTERNAL_APPEND]
    assert [e.text for e in events] == ["\n- noticed just before the exit\n"]
