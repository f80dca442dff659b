"""Issue 23's leftover 6: the version memdesk keeps before a mirror import names where the change came from, the
mirror (``program:mirror``, the writer the firewall's report on the same import names), not "unknown" (``by ?`` in
``memdesk activity``).

- sqlite with its mirror: an agent's ``>>`` and an outside edit of ``.fusion/memory.md``, taken in by the next
  ``memdesk append`` (its own process); ``memdesk activity`` and the Activity view's rows (load_activity) name it.
- postgres with its mirror (a throwaway cluster): an outside edit taken in; the database's history row names it.
- A row recorded before this (no author, source ``mirror-import``) is shown as the mirror's too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from core.project import Project
from core.project.activity import load_activity, writer_name
from tests.conftest import REPO

MEM = ".fusion/memory.md"


def _cli(root: Path, *args: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-m", "core.cli", *args, "--project", str(root)], env=env, cwd=root,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_sqlite_mirror_import_names_the_mirror(tmp_path: Path, user_config_dir: Path) -> None:
    root = tmp_path / "project"
    (root / ".fusion").mkdir(parents=True)
    (root / ".fusion" / "config.json").write_text(json.dumps({"memoryBackend": "sqlite",
                                                              "memoryBackendConfig": {"mirror": True}}))
    _cli(root, "append", "Leases renew at two thirds of their term.")
    with open(root / MEM, "a", encoding="utf-8") as fh:  # an agent's >>
        fh.write("- an agent's own line about retries\n")
    _cli(root, "append", "Retries back off exponentially.")
    text = (root / MEM).read_text(encoding="utf-8")
    (root / MEM).write_text(text.replace("two thirds", "one half"), encoding="utf-8")  # an edit outside memdesk
    _cli(root, "append", "Deploys go out on Tuesdays.")

    shown = _cli(root, "activity", "--since", "1h")
    imports = [line for line in shown.splitlines() if "before a mirror import" in line]
    assert imports and all(line.endswith("by program:mirror") for line in imports), shown
    assert "by ?" not in shown, shown
    rows = [e for e in load_activity(root) if e.source == "mirror-import"]
    assert rows and {e.writer for e in rows} == {"program:mirror"}
    versions = [v for v in Project(root).list_versions(MEM) if v.source == "mirror-import"]
    assert versions and {v.author for v in versions} == {"program:mirror"}


def test_a_row_kept_before_names_the_mirror_too() -> None:
    assert writer_name(None, "mirror-import") == "program:mirror"
    assert writer_name("", "write") == "unknown"  # a source that says nothing of its writer stays unknown


def test_a_postgres_mirror_import_names_the_mirror(project: Path, pg_connection: str) -> None:
    from tests.core.backends.test_postgres_history import MEM as PG_MEM
    from tests.core.backends.test_postgres_history import V1, V2, configure
    from tests.core.pg_server import project_key

    configure(project, project_key())
    p = Project(project)
    try:
        p.write(None, V1, source="editor", author="operator")
    finally:
        p.close()
    (project / PG_MEM).write_text(V2, encoding="utf-8")  # edited in its file, outside memdesk
    p = Project(project)
    try:
        assert p.read() == V2  # taken in
        versions = [v for v in p.list_versions(PG_MEM) if v.source == "mirror-import"]
    finally:
        p.close()
    assert versions and {v.author for v in versions} == {"program:mirror"}, versions
