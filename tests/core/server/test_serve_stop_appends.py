"""review7: ``memdesk serve`` stopped (SIGTERM, SIGINT) while served appends are answered keeps each answered
append's event in history (its text, its writer): since 3bea8a9 history's thread is woken for a served append
only once its answer is sent, so the stop lands between answers and held jobs. A real process, appends from
eight threads, the signal sent as soon as the first answers are back; every append answered 200 is in the
document and in history.db's events, text for text.
"""

from __future__ import annotations

import signal
import sqlite3
import threading
import zlib
from pathlib import Path

import httpx
import pytest

from core.storage.history.db import HISTORY_DB
from tests.core.server.conftest import cli_env, serve_process


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_every_answered_append_is_in_history_after_a_stop(real_project: Path, user_config_dir: Path, tokens, sig):
    token = tokens.create("agent-a")
    server, url = serve_process(real_project, cli_env(user_config_dir))
    answered: list[str] = []
    lock = threading.Lock()
    first = threading.Event()

    def agent(n: int) -> None:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
            for i in range(40):
                text = f"stop-check entry {n}-{i}: the deploy script needs the staging flag"
                try:
                    r = client.post("/api/memory/append", json={"content": text})
                except httpx.HTTPError:
                    return  # the server stopped
                if r.status_code != 200:
                    return
                with lock:
                    answered.append(text)
                first.set()

    threads = [threading.Thread(target=agent, args=(n,)) for n in range(8)]
    try:
        for t in threads:
            t.start()
        assert first.wait(30)
        server.send_signal(sig)  # appends are in flight and answered ones may have their history job held
        server.wait(60)
        for t in threads:
            t.join(60)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(30)
    assert answered
    on_disk = (real_project / ".fusion/memory.md").read_text(encoding="utf-8")
    assert all(text in on_disk for text in answered)
    with sqlite3.connect(real_project / HISTORY_DB) as conn:
        events = [zlib.decompress(d).decode("utf-8") for (d,) in conn.execute("SELECT data FROM events")]
    recorded = "\n".join(events)
    missing = [text for text in answered if text not in recorded]
    assert not missing, f"{len(missing)} of {len(answered)} answered appends have no history event"
