"""``memdesk connections ...`` and ``memdesk backend move ...`` against a real PostgreSQL server.

The password is never printed: every command's stdout and stderr is checked for it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from core.backends.file import FileMemoryBackend
from core.cli import main
from core.settings import load_settings
from core.storage import fileio
from core.storage.history import versions as history
from tests.conftest import REAL_MEMORY, REPO
from tests.core.pg_server import PASSWORD, PgServer, free_port, project_key

MEM = ".fusion/memory.md"


@pytest.fixture
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "user-config"
    monkeypatch.setenv("MEMDESK_CONFIG_DIR", str(folder))
    return folder


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    assert PASSWORD not in out.out and PASSWORD not in out.err, "the password was printed"
    return code, out.out, out.err


def cli_process(config_dir: Path, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    """Run ``memdesk ARGS`` in its own process (commands that open a project keep its pool until they exit)."""
    env = {**os.environ, "MEMDESK_CONFIG_DIR": str(config_dir), "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "core.cli", *args], env=env, capture_output=True, text=True,
                          timeout=120, input=stdin)
    assert PASSWORD not in proc.stdout and PASSWORD not in proc.stderr, "the password was printed"
    return proc.returncode, proc.stdout, proc.stderr


def test_connections_set_list_test_remove(pg: PgServer, config_dir: Path, capsys):
    code, out, _ = run(capsys, "connections", "set", "team", "--dsn", pg.dsn())
    assert code == 0 and "password=****" in out
    assert PASSWORD in (config_dir / "connections.json").read_text(encoding="utf-8")
    assert (config_dir / "connections.json").stat().st_mode & 0o777 == 0o600
    url = f"postgresql://memdesk:{PASSWORD.replace('@', '%40').replace(':', '%3A').replace('/', '%2F')}@127.0.0.1:{pg.port}/memdesk_test"
    assert run(capsys, "connections", "set", "url-form", "--dsn", url)[0] == 0
    code, out, _ = run(capsys, "connections", "list")
    assert code == 0 and out.count("password=****") == 2 and "team" in out and "url-form" in out
    code, out, _ = run(capsys, "connections", "list", "--json")
    assert [c["name"] for c in json.loads(out)] == ["team", "url-form"]
    code, out, _ = run(capsys, "connections", "test", "team")
    assert code == 0 and "connected to PostgreSQL 15" in out
    assert run(capsys, "connections", "test", "url-form")[0] == 0
    code, out, _ = run(capsys, "connections", "remove", "url-form")
    assert code == 0 and "removed" in out
    code, _, err = run(capsys, "connections", "remove", "url-form")
    assert code == 2 and "no connection named 'url-form'" in err


def test_a_bad_dsn_or_name_saves_nothing(config_dir: Path, capsys):
    code, _, err = run(capsys, "connections", "set", "team", "--dsn", f"garbage {PASSWORD} ===")
    assert code == 2 and "not a PostgreSQL connection string" in err and err.count("\n") == 1
    code, _, err = run(capsys, "connections", "set", "../evil", "--dsn", "host=127.0.0.1")
    assert code == 2 and "connection name" in err
    assert not (config_dir / "connections.json").exists()


def test_testing_an_unreachable_or_refused_connection_fails_with_the_password_masked(pg: PgServer, config_dir: Path,
                                                                                     capsys):
    run(capsys, "connections", "set", "down", "--dsn", pg.dsn().replace(f"port={pg.port}", f"port={free_port()}"))
    code, _, err = run(capsys, "connections", "test", "down")
    assert code == 1 and "cannot connect" in err and "password=****" in err
    wrong = "another-Secret-9"
    run(capsys, "connections", "set", "wrong", "--dsn", pg.dsn(password=wrong))
    code, _, err = run(capsys, "connections", "test", "wrong")
    assert code == 1 and "password authentication failed" in err and wrong not in err
    code, _, err = run(capsys, "connections", "test", "nope")
    assert code == 2 and "memdesk connections set nope" in err


def test_connections_commands_in_a_separate_process(pg: PgServer, tmp_path: Path):
    env = {**os.environ, "MEMDESK_CONFIG_DIR": str(tmp_path / "cfg"), "PYTHONPATH": str(REPO)}
    for args in (["connections", "set", "team", "--dsn", "-"], ["connections", "list"],
                 ["connections", "test", "team"]):
        proc = subprocess.run([sys.executable, "-m", "core.cli", *args], env=env, capture_output=True, text=True,
                              timeout=60, input=pg.dsn() + "\n")  # the DSN on stdin, never on the command line
        assert proc.returncode == 0, proc.stderr
        assert PASSWORD not in proc.stdout + proc.stderr


def db_text(pg: PgServer, key: str, path: str = MEM) -> str | None:
    with psycopg.connect(pg.dsn()) as conn:
        row = conn.execute("SELECT content FROM memdesk_documents WHERE project_key = %s AND path = %s",
                           (key, path)).fetchone()
    return row[0] if row else None


def test_move_to_postgres_and_back_is_verified_and_reversible(pg: PgServer, config_dir: Path, real_project: Path,
                                                              capsys):
    root = real_project
    real = REAL_MEMORY.read_text(encoding="utf-8")
    fb = FileMemoryBackend()
    fb.initialize({}, root)
    fb.write("# Project Memory\n\n- an older version\n", source="editor")
    fb.write(real, source="editor")  # the local history now holds the older version
    (root / ".fusion" / "memory-insights.md").write_text("# Memory Insights\n\n- be kind\n", encoding="utf-8")
    run(capsys, "connections", "set", "team", "--dsn", pg.dsn())
    key = project_key()

    code, out, _ = run(capsys, "backend", "move", "--to", "postgres", "--connection", "team", "--project-key", key,
                       "--project", str(root))
    assert code == 0, out
    assert "moved 2 document(s)" in out and fileio.content_hash(real)[:12] in out and "to undo" in out
    settings = load_settings(root)
    assert settings.memory_backend == "postgres"
    assert settings.memory_backend_config == {"connection": "team", "projectKey": key, "mirror": True}
    # The backend choice is memdesk's own setting (issue 18): in .fusion/memdesk/settings.json, never a DSN.
    own = root / ".fusion" / "memdesk" / "settings.json"
    assert json.loads(own.read_text(encoding="utf-8"))["memoryBackend"] == "postgres"
    for path in (own, root / ".fusion" / "config.json"):
        text = path.read_text(encoding="utf-8").lower() if path.exists() else ""
        assert "dsn" not in text and "password" not in text and PASSWORD.lower() not in text, path
    assert db_text(pg, key) == real and db_text(pg, key, ".fusion/memory-insights.md").endswith("- be kind\n")

    code, out, _ = cli_process(config_dir, "show", "--project", str(root), "--json")
    assert code == 0 and json.loads(out)["backend"] == "postgres" and json.loads(out)["content"] == real
    code, _, err = cli_process(config_dir, "write", "--project", str(root),
                               stdin="# Project Memory\n\n- written on postgres\n")
    assert code == 0, err
    assert (root / MEM).read_text(encoding="utf-8") == "# Project Memory\n\n- written on postgres\n"  # the mirror

    code, out, _ = run(capsys, "backend", "move", "--to", "file", "--project", str(root), "--json")
    assert code == 0
    report = json.loads(out)
    assert report["documents"][MEM] == fileio.content_hash("# Project Memory\n\n- written on postgres\n")
    assert load_settings(root).memory_backend == "file"
    kept = [history.get_version(root, v.id)[1] for v in history.list_versions(root, MEM)]
    assert real in kept and "# Project Memory\n\n- an older version\n" in kept

    # ... and in again: the key already holds exactly these texts
    code, out, _ = run(capsys, "backend", "move", "--to", "postgres", "--connection", "team", "--project-key", key,
                       "--project", str(root))
    assert code == 0 and "(already there)" in out


def test_move_onto_a_key_holding_other_text_needs_replace(pg: PgServer, config_dir: Path, project: Path, tmp_path: Path,
                                                          capsys):
    run(capsys, "connections", "set", "team", "--dsn", pg.dsn())
    key = project_key()
    (project / ".fusion").mkdir()
    (project / MEM).write_text("- theirs\n", encoding="utf-8")
    other = tmp_path / "other"
    shutil.copytree(project, other)
    (other / MEM).write_text("- mine\n", encoding="utf-8")
    assert run(capsys, "backend", "move", "--to", "postgres", "--connection", "team", "--project-key", key,
               "--project", str(project))[0] == 0
    before = (other / ".fusion").exists() and sorted(p.name for p in (other / ".fusion").iterdir())
    code, _, err = run(capsys, "backend", "move", "--to", "postgres", "--connection", "team", "--project-key", key,
                       "--project", str(other))
    assert code == 1 and "already holds different text" in err and "--replace" in err and err.count("\n") == 1
    assert load_settings(other).memory_backend == "file" and db_text(pg, key) == "- theirs\n"
    assert sorted(p.name for p in (other / ".fusion").iterdir()) == before
    code, _, _ = run(capsys, "backend", "move", "--to", "postgres", "--connection", "team", "--project-key", key,
                     "--project", str(other), "--replace")
    assert code == 0 and db_text(pg, key) == "- mine\n"


def test_move_needs_a_known_connection_and_a_running_server(pg: PgServer, config_dir: Path, real_project: Path, capsys):
    before = (real_project / MEM).read_bytes()
    code, _, err = run(capsys, "backend", "move", "--to", "postgres", "--project", str(real_project))
    assert code == 2 and "--connection" in err
    code, _, err = run(capsys, "backend", "move", "--to", "postgres", "--connection", "nope",
                       "--project", str(real_project))
    assert code == 2 and "no connection named 'nope'" in err
    run(capsys, "connections", "set", "down", "--dsn", pg.dsn().replace(f"port={pg.port}", f"port={free_port()}"))
    code, _, err = run(capsys, "backend", "move", "--to", "postgres", "--connection", "down",
                       "--project", str(real_project))
    assert code == 1 and "BACKEND_UNAVAILABLE" in err
    assert load_settings(real_project).memory_backend == "file"
    assert (real_project / MEM).read_bytes() == before and not (real_project / ".fusion" / "memdesk").exists()
    code, _, err = run(capsys, "backend", "move", "--to", "file", "--project", str(real_project))
    assert code == 2 and "not postgres" in err


def test_backends_says_why_postgres_fell_back(pg: PgServer, config_dir: Path, project: Path, capsys):
    run(capsys, "connections", "set", "team", "--dsn", pg.dsn().replace(f"port={pg.port}", f"port={free_port()}"))
    (project / ".fusion").mkdir()
    (project / ".fusion" / "config.json").write_text(json.dumps(
        {"memoryBackend": "postgres", "memoryBackendConfig": {"connection": "team", "projectKey": "k"}}),
        encoding="utf-8")
    assert run(capsys, "backend", "confirm", "--project", str(project))[0] == 0
    code, out, err = run(capsys, "backends", "--project", str(project))
    assert code == 0 and "* file" in out and "  postgres" in out and "keyword search only" in out
    assert "fallback: " in out and "unavailable" in out and "password=****" in out
    assert "using the file backend" in err


def test_move_of_a_layered_project_carries_every_document(pg: PgServer, config_dir: Path, layered_project: Path,
                                                          capsys):
    from core.documents.layout import Layout

    run(capsys, "connections", "set", "team", "--dsn", pg.dsn())
    key = project_key()
    on_disk = {d.path: (layered_project / d.path).read_text(encoding="utf-8") for d in Layout(layered_project).documents()}
    assert any("/agent-memory/" in p for p in on_disk) and ".fusion/memory/MEMORY.md" in on_disk
    code, out, _ = run(capsys, "backend", "move", "--to", "postgres", "--connection", "team", "--project-key", key,
                       "--project", str(layered_project), "--json")
    assert code == 0 and set(json.loads(out)["documents"]) == set(on_disk)
    assert {p: db_text(pg, key, p) for p in on_disk} == on_disk
    assert run(capsys, "backend", "move", "--to", "file", "--project", str(layered_project))[0] == 0
    assert {p: (layered_project / p).read_text(encoding="utf-8") for p in on_disk} == on_disk


def test_move_from_sqlite_without_its_mirror_takes_the_databases_text(pg: PgServer, config_dir: Path, project: Path,
                                                                      capsys):
    from core.backends.sqlite import SqliteMemoryBackend

    (project / ".fusion").mkdir()
    (project / MEM).write_text("- stale file\n", encoding="utf-8")
    (project / ".fusion" / "config.json").write_text(json.dumps(
        {"memoryBackend": "sqlite", "memoryBackendConfig": {"mirror": False}}), encoding="utf-8")
    lite = SqliteMemoryBackend()
    lite.initialize({"mirror": False}, project)
    lite.write("- only in the sqlite database\n")
    lite.shutdown()
    run(capsys, "connections", "set", "team", "--dsn", pg.dsn())
    key = project_key()
    assert run(capsys, "backend", "move", "--to", "postgres", "--connection", "team", "--project-key", key,
               "--project", str(project))[0] == 0
    assert db_text(pg, key) == "- only in the sqlite database\n"
    assert (project / MEM).read_text(encoding="utf-8") == "- only in the sqlite database\n"  # now the mirror
    code, out, _ = cli_process(config_dir, "show", "--project", str(project))
    assert code == 0 and out == "- only in the sqlite database\n"
