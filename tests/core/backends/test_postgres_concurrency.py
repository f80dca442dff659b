"""Many writers on many hosts, and a server that dies mid-write, against a real PostgreSQL server.

A "host" is a separate project folder (its own mirror files and locks) with a separate memdesk user
config (``MEMDESK_CONFIG_DIR``); each writer is its own process.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.backends.postgres import PostgresMemoryBackend
from core.settings.connections import set_connection
from tests.conftest import REPO
from tests.core.pg_server import PgServer, project_key

WORKER = r"""
import sys
from core.backends.postgres import PostgresMemoryBackend
from core.errors import MemoryBackendError

root, key, name, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
b = PostgresMemoryBackend()
b.initialize({"connection": "team", "projectKey": key}, root)
print("ready", flush=True)
sys.stdin.readline()  # start together
for i in range(count):
    entry = f"{name}-entry-{i:04d}"
    try:
        b.append_document(b.primary, lambda cur, e=entry: None if e in cur else f"\n\n<!-- 2026-12-01 -->\n{e}")
    except MemoryBackendError as exc:
        print(f"error {exc.code} {entry} {exc}", flush=True)
        sys.exit(3)
    print(f"ok {entry}", flush=True)
b.shutdown()
"""
ENTRY_RE = re.compile(r"^(host\d-proc\d-entry-\d{4})$", re.MULTILINE)


def make_host(tmp_path: Path, name: str, dsn: str) -> tuple[Path, dict[str, str]]:
    """A project folder and an environment with a user config of its own holding the connection ``team``."""
    root = tmp_path / name / "project"
    root.mkdir(parents=True)
    config = tmp_path / name / "config"
    env = {**os.environ, "MEMDESK_CONFIG_DIR": str(config), "PYTHONPATH": str(REPO)}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMDESK_CONFIG_DIR", str(config))
        set_connection("team", dsn)
    return root, env


def start_worker(root: Path, env: dict[str, str], key: str, name: str, count: int) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", WORKER, str(root), key, name, str(count)], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line == "ready\n", line + (proc.stderr.read() if proc.stderr else "")
    return proc


def database_text(root: Path, key: str) -> str:
    b = PostgresMemoryBackend()
    b.initialize({"connection": "team", "projectKey": key, "mirror": False}, root)
    try:
        return b.read()
    finally:
        b.shutdown()


def test_two_hosts_four_processes_fifty_appends_each_lose_nothing(pg: PgServer, pg_connection: str, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch):
    key = project_key()
    hosts = [make_host(tmp_path, f"host{h}", pg.dsn()) for h in (1, 2)]
    workers = [start_worker(root, env, key, f"host{h}-proc{p}", 50)
               for h, (root, env) in enumerate(hosts, start=1) for p in range(1, 5)]
    for w in workers:
        w.stdin.write("go\n")  # type: ignore[union-attr]
        w.stdin.flush()  # type: ignore[union-attr]
    for w in workers:
        out, err = w.communicate(timeout=300)
        assert w.returncode == 0, err
        assert out.count("ok ") == 50
    text = database_text(tmp_path, key)
    entries = ENTRY_RE.findall(text)
    assert len(entries) == 400 and len(set(entries)) == 400
    assert text.count("<!-- 2026-12-01 -->") == 400
    for root, env in hosts:  # each host's mirror catches up on its next read and holds the same bytes
        monkeypatch.setenv("MEMDESK_CONFIG_DIR", env["MEMDESK_CONFIG_DIR"])
        b = PostgresMemoryBackend()
        b.initialize({"connection": "team", "projectKey": key}, root)
        try:
            assert b.read() == text
        finally:
            b.shutdown()
        assert (root / ".fusion" / "memory.md").read_text(encoding="utf-8") == text


def test_a_server_killed_mid_write_loses_no_committed_entry(pg: PgServer, pg_connection: str, tmp_path: Path):
    key = project_key()
    root, env = make_host(tmp_path, "host1", pg.dsn())
    worker = start_worker(root, env, key, "host1-proc1", 5000)
    worker.stdin.write("go\n")  # type: ignore[union-attr]
    worker.stdin.flush()  # type: ignore[union-attr]
    assert worker.stdout is not None
    lines: list[str] = []
    for line in worker.stdout:
        lines.append(line)
        if len(lines) == 40:
            pg.stop("immediate")  # a crash: no checkpoint, every client cut off
            break
    rest, err = worker.communicate(timeout=120)
    lines += rest.splitlines(keepends=True)
    try:
        assert worker.returncode == 3, err
        assert lines[-1].startswith("error BACKEND_UNAVAILABLE "), lines[-1]
        assert "pw-" not in lines[-1]  # the password is never in a message
        mirror = (root / ".fusion" / "memory.md").read_text(encoding="utf-8")
    finally:
        pg.start()
    committed = [ln.split()[1] for ln in lines if ln.startswith("ok ")]
    in_flight = lines[-1].split()[2]
    text = database_text(tmp_path, key)
    stored = ENTRY_RE.findall(text)
    assert set(committed) <= set(stored), "an entry reported as written is missing after the crash"
    assert set(stored) <= set(committed) | {in_flight}
    assert len(stored) == len(set(stored))
    assert set(ENTRY_RE.findall(mirror)) <= set(stored)  # the mirror never showed an uncommitted entry


def test_the_client_recovers_after_the_server_restarts(pg: PgServer, pg_connection: str, project: Path):
    b = PostgresMemoryBackend()
    b.initialize({"connection": "team", "projectKey": project_key()}, project)
    try:
        b.write("- before the restart\n")
        pg.stop("immediate")
        pg.start()
        deadline = time.monotonic() + 30
        while True:  # the pool replaces connections the restart broke; a write may fail once meanwhile
            try:
                b.write("- after the restart\n")
                break
            except Exception as exc:
                assert getattr(exc, "code", None) == "BACKEND_UNAVAILABLE", exc
                if time.monotonic() > deadline:
                    pytest.fail("the backend did not recover after the server restarted")
        assert b.read() == "- after the restart\n"
    finally:
        b.shutdown()
