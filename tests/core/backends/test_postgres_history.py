"""History of a postgres project through the project model and ``memdesk history list|show|restore``:
the versions are the shared database's, a restore goes through the backend and keeps what it replaced,
and a planted history row never writes outside the memory documents."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from core.errors import MemoryBackendError
from core.project import Project
from core.settings.bindings import confirm
from core.storage import fileio
from core.storage.history import versions as history
from tests.conftest import REPO
from tests.core.pg_server import PASSWORD, PgServer, project_key

MEM = ".fusion/memory.md"
V1 = "# Project Memory\n\n- v1: leases expire after 30 s\n"
V2 = "# Project Memory\n\n- v2: leases expire after 20 s\n"
V3 = "# Project Memory\n\n- v3: leases expire after 10 s\n"


def configure(root: Path, key: str, mirror: bool = True) -> None:
    (root / ".fusion").mkdir(exist_ok=True)
    (root / ".fusion" / "config.json").write_text(json.dumps({
        "memoryBackend": "postgres",
        "memoryBackendConfig": {"connection": "team", "projectKey": key, "mirror": mirror}}), encoding="utf-8")
    confirm(root, "team", key)  # the operator confirms the binding once (core.settings.bindings)


def db_text(pg: PgServer, key: str, path: str = MEM) -> str | None:
    with psycopg.connect(pg.dsn()) as conn:
        row = conn.execute("SELECT content FROM memdesk_documents WHERE project_key = %s AND path = %s",
                           (key, path)).fetchone()
    return row[0] if row else None


def plant(pg: PgServer, key: str, path: str, content: str) -> int:
    """A history row another host (or an attacker with database access) wrote: untrusted."""
    with psycopg.connect(pg.dsn()) as conn:
        return conn.execute(
            "INSERT INTO memdesk_history (project_key, path, hash, size, source, author, content) "
            "VALUES (%s, %s, %s, %s, 'write', 'mallory', %s) RETURNING id",
            (key, path, fileio.content_hash(content), len(content), content)).fetchone()[0]


def cli(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    """``memdesk ARGS`` in its own process, with this test's user config (the ``team`` connection)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "core.cli", *args], env=env, capture_output=True, text=True,
                          timeout=120, input=stdin)
    assert PASSWORD not in done.stdout + done.stderr, "the password was printed"
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def key(pg_connection: str) -> str:
    return project_key()


@pytest.fixture
def pg_project(project: Path, key: str) -> Path:
    """A postgres project whose memory went V1 → V2 → V3 (V1 and V2 kept as versions in the database)."""
    configure(project, key)
    p = Project(project)
    try:
        assert p.backend.id == "postgres" and p.backend_history
        for text in (V1, V2, V3):
            p.write(None, text, source="editor", author="operator")
    finally:
        p.close()
    return project


def test_the_project_lists_and_restores_the_databases_history(pg_project: Path, key: str, pg: PgServer):
    p = Project(pg_project)
    try:
        versions = p.list_versions(MEM)
        assert [p.get_version(v.id)[1] for v in versions] == [V2, V1]
        assert [v.id for v in p.list_versions()] == [v.id for v in versions]
        assert versions[0].author == "operator" and versions[0].label == "before save"
        assert p.get_version(10**12) is None and p.get_version(0) is None and p.get_version(2**63) is None
        assert p.get_version(True) is None  # type: ignore[arg-type]
        result = p.restore(versions[-1].id, author="reviewer")
        assert result.changed and p.read() == V1 == db_text(pg, key)
        assert (pg_project / MEM).read_text(encoding="utf-8") == V1  # the mirror follows
        after = p.list_versions(MEM)
        assert after[0].source == "restore" and after[0].author == "reviewer"
        assert p.get_version(after[0].id)[1] == V3  # the replaced content is kept
        with pytest.raises(MemoryBackendError) as err:
            p.restore(10**12)
        assert err.value.code == "NOT_FOUND"
    finally:
        p.close()
    assert not (pg_project / ".fusion" / "memdesk" / "history.db").exists()  # nothing kept locally


def test_a_local_history_db_is_not_the_history_of_a_postgres_project(project: Path, key: str):
    local = Project(project)  # the file backend first: its history is the local history.db
    try:
        local.write(None, "- local one\n")
        local.write(None, "- local two\n")
        assert [v.path for v in local.list_versions()] == [MEM]
    finally:
        local.close()
    configure(project, key)
    p = Project(project)
    try:
        assert p.backend.id == "postgres"
        assert history.list_versions(project) and p.list_versions() == []
        assert p.get_version(history.list_versions(project)[0].id) is None
    finally:
        p.close()


@pytest.mark.parametrize("path", ["../../outside.md", ".fusion/config.json", ".fusion/memdesk/proposals/x.json"])
def test_a_planted_history_row_is_never_restored(pg_project: Path, key: str, pg: PgServer, path: str):
    planted = plant(pg, key, path, "{\"memoryBackend\": \"readonly\"}\n")
    p = Project(pg_project)
    try:
        assert p.get_version(planted)[0].path == path
        with pytest.raises(MemoryBackendError) as err:
            p.restore(planted)
        assert err.value.code == "INVALID_CONFIG" and "memory documents only" in err.value.message
    finally:
        p.close()
    assert db_text(pg, key, path) is None and db_text(pg, key) == V3
    assert not (pg_project.parent / "outside.md").exists()
    assert "readonly" not in (pg_project / ".fusion" / "config.json").read_text(encoding="utf-8")


def test_cli_history_list_show_restore_on_a_postgres_project(pg_project: Path, key: str, pg: PgServer):
    root = str(pg_project)
    code, out, err = cli("history", "list", "--project", root, "--json")
    assert code == 0, err
    listed = json.loads(out)
    assert [(v["path"], v["source"], v["author"]) for v in listed] == [(MEM, "editor", "operator")] * 2
    v2, v1 = listed[0]["id"], listed[1]["id"]
    code, out, _ = cli("history", "list", "--project", root)
    assert code == 0 and f"{v1:>6}  " in out and f"{v2:>6}  " in out and "operator" in out
    code, out, _ = cli("history", "show", str(v1), "--project", root)
    assert code == 0 and out == V1
    code, out, _ = cli("history", "show", str(v2), "--diff", "--project", root)
    assert code == 0 and "-- v2: leases expire after 20 s" in out and "+- v3: leases expire after 10 s" in out
    code, out, err = cli("history", "restore", str(v1), "--project", root)
    assert code == 0, err
    assert out == f"Restored version {v1} of {MEM} (the content it replaces is in the history).\n"
    assert db_text(pg, key) == V1 == (pg_project / MEM).read_text(encoding="utf-8")
    code, out, _ = cli("history", "list", "--project", root, "--json")
    newest = json.loads(out)[0]
    assert newest["source"] == "restore" and newest["label"] == "before restore"
    code, out, _ = cli("history", "show", str(newest["id"]), "--project", root)
    assert out == V3  # what the restore replaced
    code, out, _ = cli("history", "restore", str(v1), "--project", root)
    assert code == 0 and "nothing changed" in out
    assert not (pg_project / ".fusion" / "memdesk" / "history.db").exists()


def test_cli_refuses_unknown_and_planted_versions_changing_nothing(pg_project: Path, key: str, pg: PgServer):
    root = str(pg_project)
    code, _, err = cli("history", "show", "999999999", "--project", root)
    assert code == 2 and "no version 999999999" in err and err.count("\n") == 1
    planted = plant(pg, key, "../../outside.md", "pwned\n")
    code, out, err = cli("history", "restore", str(planted), "--project", root)
    assert code == 2 and "not a memory document" in err and "nothing was restored" in err
    assert db_text(pg, key) == V3 and not (pg_project.parent / "outside.md").exists()
    code, out, _ = cli("history", "list", "--project", root, "--json")
    assert planted not in [v["id"] for v in json.loads(out)]  # hidden without --all
    code, out, _ = cli("history", "list", "--all", "--project", root, "--json")
    assert planted in [v["id"] for v in json.loads(out)]
    code, out, err = cli("history", "restore", str(planted), "--path", MEM, "--project", root)
    assert code == 2 and "not .fusion/memory.md" in err
