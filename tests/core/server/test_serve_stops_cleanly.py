"""``memdesk serve`` stopped the usual way (SIGTERM: ``kill``, systemd, ``docker stop``, a process manager)
keeps every read it served on record, as Ctrl+C does.

Reads are written to ``reads.db`` in batches a quarter second after the first of a spell
(core.storage.readlog), and appends noticed between reads wait a second to be joined
(core.server.noticing); both are flushed as the process exits. uvicorn answers SIGTERM by stopping and then
raising the signal again with its default action, which killed the process before any exit hook ran: every
read of the last quarter second was lost on each ordinary stop (found by the round-5 review: 0 of 5 reads
recorded after SIGTERM, 5 of 5 after SIGINT).
"""

from __future__ import annotations

import signal
import sqlite3
from pathlib import Path

import httpx
import pytest

from tests.core.server.conftest import cli_env, serve_process


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_every_read_served_before_a_stop_signal_is_on_record(real_project: Path, user_config_dir: Path, tokens,
                                                              sig):
    token = tokens.create("agent-a")
    server, url = serve_process(real_project, cli_env(user_config_dir))
    try:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}", "User-Agent": "stopper/1"},
                          timeout=30) as client:
            for _ in range(5):
                r = client.get("/api/memory/file", params={"path": ".fusion/memory.md"})
                assert r.status_code == 200, r.text
        server.send_signal(sig)  # at once: the writer thread is still lingering over the spell
        server.wait(30)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(30)
    db = user_config_dir / "reads.db"
    assert db.exists(), "no read was recorded"
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT client, path FROM reads").fetchall()
    assert rows == [("stopper/1", ".fusion/memory.md")] * 5
