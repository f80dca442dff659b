"""A served append wakes history's thread once its answer is sent (core.server.fast_append with
core.storage.history.jobs.Hold), and gives up nothing for it:

* the event (who wrote the entry) is recorded after the answer, never while the append is still under way;
* an append whose rotation waits for its own version's history job, under the same hold, does not hang
  (an earlier attempt at this did: docs/servers.md), and every append's event and the rotation's version
  land in history;
* a server killed (SIGKILL) right after its answers keeps every entry it answered 200 for on disk, and
  history still opens and records the next append;
* many clients appending at once leave no history job queued with the worker asleep (every hold released
  wakes it), and every event is recorded.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import httpx

from core.server import fast_append
from core.storage.history import versions as history
from core.storage.history import worker as history_worker
from tests.core.server.conftest import cli_env, serve_process

MEMORY = ".fusion/memory.md"


def _project(tmp_path: Path, text: str = "# Project Memory\n\n- the first entry\n") -> Path:
    root = tmp_path / "alpha"
    (root / ".fusion").mkdir(parents=True)
    (root / MEMORY).write_text(text, encoding="utf-8")
    return root


def test_history_records_the_event_only_after_the_answer_is_sent(tmp_path: Path, serve, tokens, monkeypatch
                                                                  ) -> None:
    root = _project(tmp_path)
    srv = serve(root, mcp=False)
    srv.served.get(None)  # the model is built: appends take the fast path
    c = srv.client(tokens.create("agent-1"))
    assert c.post("/api/memory/append", json={"content": "warm: history's database made"}).status_code == 200
    history_worker.settled()

    order: list[str] = []
    real_insert, real_release = history_worker._insert_event, fast_append.Hold.release

    def insert(*args, **kwargs):
        order.append("event recorded")
        return real_insert(*args, **kwargs)

    def release(self):
        order.append("answer sent")
        return real_release(self)

    # The append goes on for a while after asking for its event (its budget check): an unheld worker would
    # record the event meanwhile, before the answer.
    from core.project.writes import ProjectWrites

    real_warnings = ProjectWrites._warnings

    def slow_warnings(self, *args):
        time.sleep(0.3)
        return real_warnings(self, *args)

    monkeypatch.setattr(history_worker, "_insert_event", insert)
    monkeypatch.setattr(fast_append.Hold, "release", release)
    monkeypatch.setattr(ProjectWrites, "_warnings", slow_warnings)
    for i in range(3):
        r = c.post("/api/memory/append", json={"content": f"Backups run at 02:00 UTC, kept 30 days ({i})"})
        assert r.status_code == 200 and r.json()["status"] == "written", r.text
        history_worker.settled()
    assert order == ["answer sent", "event recorded"] * 3
    texts = [e.text for e in history.list_events(root, MEMORY)]
    assert all(f"Backups run at 02:00 UTC, kept 30 days ({i})" in texts for i in range(3))


def _over_budget() -> str:
    """A memory of 800 dated entries (2,400 lines): over the 2,000-line budget, so the next append rotates."""
    entries = "".join(f"\n\n<!-- 2024-01-{1 + i % 28:02d} -->\n- old decision {i}: keep the retry cap at 30 s"
                      for i in range(800))
    return "# Project Memory\n" + entries + "\n"


def test_a_rotation_under_the_held_wake_up_does_not_hang_and_history_gets_everything(tmp_path: Path, serve,
                                                                                       tokens) -> None:
    root = _project(tmp_path, _over_budget())
    srv = serve(root, mcp=False)
    srv.served.get(None)
    c = srv.client(tokens.create("agent-1"))
    c.timeout = httpx.Timeout(60)  # a hang fails the test instead of holding it
    sent = [f"Rotation test entry {i}: the cache key includes the tenant" for i in range(4)]
    first = c.post("/api/memory/append", json={"content": sent[0]})
    assert first.status_code == 200 and first.json()["status"] == "written", first.text
    assert first.json()["archivedEntries"] > 0  # this append rotated: it waited on its version's job
    for text in sent[1:]:
        r = c.post("/api/memory/append", json={"content": text})
        assert r.status_code == 200 and r.json()["status"] == "written", r.text

    memory = (root / MEMORY).read_text(encoding="utf-8")
    archive = (root / ".fusion" / "memory-archive.md").read_text(encoding="utf-8")
    assert all(text in memory for text in sent)
    assert "old decision 0:" in archive and "old decision 0:" not in memory  # moved, not lost
    assert all(f"old decision {i}:" in memory + archive for i in range(800))
    events = [e.text for e in history.list_events(root, MEMORY)]
    assert sorted(t for t in events if t.startswith("Rotation test")) == sorted(sent)
    versions = history.list_versions(root, MEMORY)
    assert any(v.source == "rotate" for v in versions), versions  # the text before the rotation is kept



def test_a_server_killed_right_after_its_answers_keeps_every_answered_entry(real_project: Path,
                                                                           user_config_dir: Path, tokens) -> None:
    token = tokens.create("agent-a")
    env = cli_env(user_config_dir)
    server, url = serve_process(real_project, env)
    sent = [f"Kill test entry {i}: a 200 means the entry is on disk" for i in range(20)]
    try:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as client:
            for text in sent:
                r = client.post("/api/memory/append", json={"content": text})
                assert r.status_code == 200 and r.json()["status"] == "written", r.text
        server.send_signal(signal.SIGKILL)  # at once: the last answers' history jobs may be held or running
        server.wait(30)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(30)
    memory = (real_project / MEMORY).read_text(encoding="utf-8")
    assert all(text in memory for text in sent)

    # History is intact after the kill: a new server records the next append, and the events read back.
    server, url = serve_process(real_project, env)
    try:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as client:
            r = client.post("/api/memory/append", json={"content": "After the kill: history still takes events"})
            assert r.status_code == 200 and r.json()["status"] == "written", r.text
        server.send_signal(signal.SIGTERM)
        server.wait(30)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(30)
    events = [e.text for e in history.list_events(real_project, MEMORY)]
    assert "After the kill: history still takes events" in events
    assert sum(1 for t in events if t.startswith("Kill test entry")) >= 1  # earlier ones were recorded


def test_concurrent_served_appends_leave_no_history_job_stranded(tmp_path: Path, serve, tokens) -> None:
    # Holds made and released by many requests at once (each on its own connection): every event is recorded
    # without anyone waiting on history (a hold never released would leave its job queued, the worker asleep).
    import threading

    root = _project(tmp_path)
    srv = serve(root, mcp=False)
    srv.served.get(None)
    token = tokens.create("agent-1")
    assert srv.client(token).post("/api/memory/append", json={"content": "warm"}).status_code == 200
    history_worker.settled()
    failures: list[str] = []

    def agent(n: int) -> None:
        c = srv.client(token)
        for i in range(10):
            r = c.post("/api/memory/append", json={"content": f"agent {n} note {i}: the queue drains in order"})
            if r.status_code != 200 or r.json()["status"] != "written":
                failures.append(r.text)

    threads = [threading.Thread(target=agent, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert failures == [] and not any(t.is_alive() for t in threads)
    worker = history_worker._worker
    assert worker is not None
    deadline = time.monotonic() + 20
    while worker._jobs and time.monotonic() < deadline:  # no wait on a job here: nothing wakes the worker but holds
        time.sleep(0.05)
    assert not worker._jobs, f"{len(worker._jobs)} history job(s) left queued with the worker asleep"
    events = [e.text for e in history.list_events(root, MEMORY)]
    assert sorted(t for t in events if t.startswith("agent ")) == sorted(
        f"agent {n} note {i}: the queue drains in order" for n in range(6) for i in range(10))
