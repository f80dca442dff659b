"""The database backends' writes through the doors (issue 19, item 1), through real processes and a real PostgreSQL.

- The mirror ledger's notes are memdesk's state files (``core.storage.statefiles``: ``mirror-ledger``,
  ``mirror-entry``, ``mirror-mark``): a note folder planted as a link out of the project refuses the
  write in one line, and nothing outside (nor the database, nor the mirror file) changes.
- ``memdesk backend move`` writes every document through the write pipeline: a row whose path is no
  memory document of this project is refused (named in the report, never written), the firewall's screen
  sees each document, and the replaced text is kept in history with source ``backend-move``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import psycopg

from core.settings import load_settings, update_settings
from core.storage.history import versions as history
from tests.conftest import REPO
from tests.core.pg_server import PgServer, project_key

MEM = ".fusion/memory.md"
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # a GitHub token's shape: the firewall's secret rule


def memdesk(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "core.cli", *args], env=env, capture_output=True, text=True,
                          timeout=120)


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def plant_outside(project: Path, tmp_path: Path, inside: str) -> tuple[Path, dict[str, tuple[bytes, int]]]:
    """Replace the folder ``inside`` (under the project) with a link to a folder outside holding a decoy of each
    note it held; return that folder and its snapshot."""
    outside = tmp_path / "outside"
    outside.mkdir()
    folder = project / inside
    for note in sorted(folder.rglob("*")):
        if note.is_file():
            decoy = outside / note.relative_to(folder)
            decoy.parent.mkdir(parents=True, exist_ok=True)
            decoy.write_bytes(b"decoy: not memdesk's\n")
    for note in sorted(folder.rglob("*"), reverse=True):
        note.unlink() if note.is_file() else note.rmdir()
    folder.rmdir()
    folder.symlink_to(outside, target_is_directory=True)
    return outside, snapshot(outside)


def test_sqlite_notes_behind_a_link_out_refuse_the_append_in_one_line(project: Path, tmp_path: Path,
                                                                     monkeypatch):
    monkeypatch.setenv("MEMDESK_CONFIG_DIR", str(tmp_path / "user-config"))
    (project / ".fusion").mkdir()
    (project / MEM).write_text("# Project Memory\n\n- first\n", encoding="utf-8")
    update_settings(project, {"memoryBackend": "sqlite", "memoryBackendConfig": {"mirror": True}})
    done = memdesk("append", "--project", str(project), "an entry before the plant")
    assert done.returncode == 0, done.stderr
    notes = project / ".fusion" / "memdesk" / "mirror"
    assert any(p.name.endswith(".ledger") for p in notes.rglob("*"))  # the ledger noted the append
    outside, before = plant_outside(project, tmp_path, ".fusion/memdesk/mirror")
    mirror = (project / MEM).read_bytes()
    db = project / ".fusion" / "memdesk" / "memory.db"
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        held = conn.execute("SELECT content FROM memory").fetchall()

    done = memdesk("append", "--project", str(project), "an entry after the plant")

    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and ".fusion/memdesk/mirror" in lines[0] and "leaves the project" in lines[0], lines
    assert snapshot(outside) == before  # nothing outside was written, renamed or removed
    assert (project / MEM).read_bytes() == mirror and b"after the plant" not in mirror
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        assert conn.execute("SELECT content FROM memory").fetchall() == held


def test_postgres_notes_behind_a_link_out_refuse_the_append_in_one_line(pg: PgServer, project: Path, tmp_path: Path,
                                                                       pg_connection: str):
    key = project_key()
    (project / ".fusion").mkdir()
    (project / MEM).write_text("# Project Memory\n\n- first\n", encoding="utf-8")
    done = memdesk("backend", "move", "--to", "postgres", "--connection", pg_connection, "--project-key", key,
                   "--project", str(project))
    assert done.returncode == 0, done.stderr
    done = memdesk("append", "--project", str(project), "an entry before the plant")
    assert done.returncode == 0, done.stderr
    assert any(p.name.endswith(".ledger") for p in (project / ".fusion/memdesk/mirror" / key).iterdir())
    outside, before = plant_outside(project, tmp_path, f".fusion/memdesk/mirror/{key}")
    mirror = (project / MEM).read_bytes()
    with psycopg.connect(pg.dsn()) as conn:
        held = conn.execute("SELECT path, content FROM memdesk_documents WHERE project_key = %s", (key,)).fetchall()

    done = memdesk("append", "--project", str(project), "an entry after the plant")

    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and f".fusion/memdesk/mirror/{key}" in lines[0] and "leaves the project" in lines[0], lines
    assert snapshot(outside) == before
    assert (project / MEM).read_bytes() == mirror
    with psycopg.connect(pg.dsn()) as conn:
        assert conn.execute("SELECT path, content FROM memdesk_documents WHERE project_key = %s",
                            (key,)).fetchall() == held


def _moved_to_postgres(project: Path, connection: str, key: str, text: str) -> None:
    (project / ".fusion").mkdir()
    (project / MEM).write_text(text, encoding="utf-8")
    done = memdesk("backend", "move", "--to", "postgres", "--connection", connection, "--project-key", key,
                   "--project", str(project))
    assert done.returncode == 0, done.stderr


def _set_row(pg: PgServer, key: str, path: str, content: str) -> None:
    """A row changed straight in the shared table, as another host (or a hostile one) could."""
    with psycopg.connect(pg.dsn(), autocommit=True) as conn:
        conn.execute("INSERT INTO memdesk_documents (project_key, path, content, hash, size, updated_by, source) "
                     "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (project_key, path) DO UPDATE SET "
                     "content = EXCLUDED.content, hash = EXCLUDED.hash",
                     (key, path, content, "0" * 64, len(content), "host-b", "append"))


def test_move_to_file_refuses_a_row_of_another_layout_and_records_the_move_in_history(pg: PgServer, project: Path,
                                                                                      pg_connection: str):
    key = project_key()
    _moved_to_postgres(project, pg_connection, key, "# Project Memory\n\n- ours\n")
    # The mirror off: the file stays behind the database, so the move replaces its text.
    update_settings(project, {"memoryBackendConfig": {"connection": pg_connection, "projectKey": key, "mirror": False}})
    _set_row(pg, key, MEM, "# Project Memory\n\n- ours\n- from host B\n")
    # A memory document of the layered layout: in this seed project, writing it would create .fusion/memory/
    # and so turn the project layered (Fusion would stop reading .fusion/memory.md).
    _set_row(pg, key, ".fusion/memory/MEMORY.md", "# planted\n")
    _set_row(pg, key, ".fusion/config.json", '{"memoryBackend": "file", "evil": true}\n')

    done = memdesk("backend", "move", "--to", "file", "--project", str(project), "--json")

    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert set(report["skipped"]) == {".fusion/memory/MEMORY.md", ".fusion/config.json"}
    assert all("not a memory document of this project" in why and "\n" not in why
               for why in report["skipped"].values())
    assert set(report["documents"]) == {MEM}
    assert not (project / ".fusion" / "memory").exists()
    assert (project / MEM).read_text(encoding="utf-8") == "# Project Memory\n\n- ours\n- from host B\n"
    assert load_settings(project).memory_backend == "file"
    moved = [v for v in history.list_versions(project, MEM) if v.source == "backend-move"]
    assert len(moved) == 1 and moved[0].author == "memdesk backend move"
    found = history.get_version(project, moved[0].id)
    assert found is not None and found[1] == "# Project Memory\n\n- ours\n"  # the file's text before the move


def test_the_firewall_screens_every_document_a_move_writes(pg: PgServer, project: Path, pg_connection: str):
    key = project_key()
    _moved_to_postgres(project, pg_connection, key, "# Project Memory\n\n- ours\n")
    update_settings(project, {"memoryBackendConfig": {"connection": pg_connection, "projectKey": key, "mirror": False}})
    policy = project / ".fusion" / "memdesk" / "firewall-policy.json"
    policy.write_text(json.dumps({"version": 1, "rules": {"memdesk:backend-move": {"secret": "refuse"}}}),
                      encoding="utf-8")
    _set_row(pg, key, MEM, f"# Project Memory\n\n- ours\n- deploy with {TOKEN}\n")
    before = (project / MEM).read_bytes()

    done = memdesk("backend", "move", "--to", "file", "--project", str(project))

    assert done.returncode != 0
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and MEM in lines[0] and "firewall" in lines[0], lines
    assert (project / MEM).read_bytes() == before and TOKEN.encode() not in before
    assert load_settings(project).memory_backend == "postgres"  # the move stopped before the settings changed


def test_the_ledger_note_is_rewritten_in_place_and_never_through_a_link(project: Path, tmp_path: Path, monkeypatch):
    """One note of one width, written over in place (one fdatasync, no rename); a link or another file's hard link
    at its name is replaced by name, its target never written."""
    from core.backends.sqlite import SqliteMemoryBackend

    monkeypatch.setenv("MEMDESK_CONFIG_DIR", str(tmp_path / "user-config"))
    (project / ".fusion").mkdir()
    b = SqliteMemoryBackend()
    b.initialize({"mirror": True}, project)
    try:
        b.write("# Project Memory\n")
        for i in range(2):
            b.append_document(MEM, lambda cur, i=i: f"\n- entry {i}\n")
        note = project / ".fusion/memdesk/mirror/sqlite/.fusion__memory.md.ledger"
        inode = note.stat().st_ino
        b.append_document(MEM, lambda cur: "\n- entry 2\n")
        assert note.stat().st_ino == inode and note.stat().st_size == 256  # in place, one width
        planted = project / "planted.txt"
        planted.write_text("not memdesk's\n", encoding="utf-8")
        note.unlink()
        os.link(planted, note)
        b.append_document(MEM, lambda cur: "\n- entry 3\n")
        assert planted.read_text(encoding="utf-8") == "not memdesk's\n" and note.stat().st_nlink == 1
        note.unlink()
        note.symlink_to(planted)
        b.append_document(MEM, lambda cur: "\n- entry 4\n")
        assert planted.read_text(encoding="utf-8") == "not memdesk's\n" and not note.is_symlink()
        assert (project / MEM).read_text(encoding="utf-8") == b.read()
        assert all(b.read().count(f"- entry {i}\n") == 1 for i in range(5))
    finally:
        b.shutdown()
