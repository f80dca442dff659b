"""Issue 19, paths from stored data: the ``sqlite`` backend's ``database`` setting comes from the project's
settings, so from whoever made the repository. It named any file inside the project, and memdesk opened it
as its database: a cloned repository whose ``config.json`` named ``src/pkg/__init__.py`` (empty) turned
that source file into a 60 KB SQLite database on the first ``memdesk append``. The database must now be
in ``.fusion/memdesk/`` (links followed), not memdesk's history, and an SQLite database if it exists; any
other setting falls back to the file backend with a one-line warning naming it, and the file named is
left byte for byte."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.core.hostile import run_cli, snapshot


def _clone(root: Path, database: str) -> None:
    (root / ".fusion/memdesk").mkdir(parents=True)
    (root / "src/pkg").mkdir(parents=True)
    (root / "src/pkg/__init__.py").write_bytes(b"")
    (root / "README.md").write_text("# app\n")
    (root / ".fusion/memory.md").write_text("# Project Memory\n")
    os.symlink("../../src/pkg/__init__.py", root / ".fusion/memdesk/linked.db")
    (root / ".fusion/config.json").write_text(json.dumps(
        {"memoryBackendType": "sqlite", "memoryBackendConfig": {"database": database}}))


@pytest.mark.parametrize(("database", "why"), [
    ("src/pkg/__init__.py", "is not in .fusion/memdesk/"),
    ("README.md", "is not in .fusion/memdesk/"),
    (".fusion/memory.md", "is not in .fusion/memdesk/"),
    (".fusion/memdesk/linked.db", "is not in .fusion/memdesk/"),
    (".fusion/memdesk/history.db", "other than history.db, search.db"),
    (".fusion/memdesk/notes.txt", "must be a .db, .sqlite or .sqlite3 file"),
])
def test_a_clones_database_setting_cannot_name_a_project_file(tmp_path, user_config_dir, database, why):
    root = tmp_path / "clone"
    _clone(root, database)
    kept = {k: v for k, v in snapshot(root).items() if not k.startswith(".fusion")}

    r = run_cli("append", "--project", str(root), "an agent's entry")
    assert "Traceback" not in r.stderr, r.stderr
    warning = [line for line in r.stderr.splitlines() if "warning" in line]
    assert len(warning) == 1 and f'invalid setting "database": {database} ' in warning[0], r.stderr
    assert why in warning[0] and "using the file backend" in warning[0], r.stderr
    assert {k: v for k, v in snapshot(root).items() if not k.startswith(".fusion")} == kept
    assert (root / "src/pkg/__init__.py").read_bytes() == b""
    assert not (root / "src/pkg/__init__.py-wal").exists() and not (root / "src/pkg/__init__.py-shm").exists()
    # memdesk's history holds no memory table (it was never opened as the memory database).
    assert b"CREATE TABLE memory(" not in (root / ".fusion/memdesk/history.db").read_bytes()


def test_a_database_in_memdesks_folder_still_works(tmp_path, user_config_dir):
    root = tmp_path / "own"
    _clone(root, ".fusion/memdesk/team.sqlite")
    r = run_cli("append", "--project", str(root), "an agent's entry")
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
    assert (root / ".fusion/memdesk/team.sqlite").read_bytes()[:16] == b"SQLite format 3\x00"
    assert (root / "src/pkg/__init__.py").read_bytes() == b""
