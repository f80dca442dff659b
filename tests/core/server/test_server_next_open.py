"""Changes made while no memdesk ran are found on the next open (issue 19): memdesk keeps the text it last
wrote; the first serve of the document compares the file with it. Real `memdesk` processes, a real server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from core.storage.history import versions as history
from core.storage.noticed import EXTERNAL_APPEND, EXTERNAL_CHANGE

REPO = Path(__file__).resolve().parents[3]


def memdesk(root: Path, *args: str, stdin: str | None = None) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "core.cli", *args, "--project", str(root)], env=env, input=stdin,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_daily_note_replaced_while_memdesk_was_closed_keeps_what_memdesk_wrote(serve, token,
                                                                                   layered_project: Path):
    memdesk(layered_project, "append", "--file", ".fusion/memory/2026-12-01.md", "Leases use the DB clock")
    memdesk(layered_project, "append", "--file", ".fusion/memory/2026-12-01.md", "Workers renew every 10 s")
    daily = layered_project / ".fusion" / "memory" / "2026-12-01.md"
    written = daily.read_text(encoding="utf-8")
    assert "Workers renew every 10 s" in written
    daily.write_text("# Daily Memory 2026-12-01\n\n- rewritten by another program\n", encoding="utf-8")
    c = serve(layered_project).client(token)
    r = c.get("/api/memory/file", params={"path": "2026-12-01.md"})
    assert r.status_code == 200 and "rewritten by another program" in r.json()["content"]
    kept = [v for v in history.list_versions(layered_project, ".fusion/memory/2026-12-01.md")
            if v.source == EXTERNAL_CHANGE]
    assert len(kept) == 1 and kept[0].author == "program"
    assert history.get_version(layered_project, kept[0].id)[1] == written  # byte-exact: restorable


def test_an_append_while_closed_is_an_event_and_nothing_when_nothing_changed(serve, token, sample_project: Path):
    memdesk(sample_project, "write", stdin="# Project Memory\n\n- written by memdesk\n")
    mem = sample_project / ".fusion" / "memory.md"
    with mem.open("a", encoding="utf-8") as fh:
        fh.write("\n- an agent's >> while memdesk was closed\n")
    c = serve(sample_project).client(token)
    assert "while memdesk was closed" in c.get("/api/memory").json()["content"]
    events = [e for e in history.list_events(sample_project, ".fusion/memory.md") if e.source == EXTERNAL_APPEND]
    assert len(events) == 1 and "while memdesk was closed" in events[0].text
    assert [v for v in history.list_versions(sample_project) if v.source == EXTERNAL_CHANGE] == []
