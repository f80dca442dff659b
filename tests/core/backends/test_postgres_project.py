"""The project model (core.project.Project) over the postgres backend: every surface's operations land in
the shared database, in both layouts."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from core.errors import MemoryBackendError
from core.project import Project
from core.settings.bindings import confirm
from core.storage import fileio
from tests.core.pg_server import PgServer, project_key


def configure(root: Path, key: str, mirror: bool = True) -> None:
    (root / ".fusion").mkdir(exist_ok=True)
    (root / ".fusion" / "config.json").write_text(json.dumps({
        "memoryBackend": "postgres",
        "memoryBackendConfig": {"connection": "team", "projectKey": key, "mirror": mirror}}), encoding="utf-8")
    confirm(root, "team", key)  # the operator confirms the binding once (core.settings.bindings)


def stored(pg: PgServer, key: str) -> dict[str, str]:
    with psycopg.connect(pg.dsn()) as conn:
        return dict(conn.execute("SELECT path, content FROM memdesk_documents WHERE project_key = %s",
                                 (key,)).fetchall())


@pytest.fixture
def key(pg_connection: str) -> str:
    return project_key()


def test_seed_project_append_write_insights_and_search(project: Path, key: str, pg: PgServer):
    configure(project, key)
    p = Project(project)
    try:
        assert p.backend.id == "postgres" and p.fallback_reason is None
        assert p.read() == "" and p.read_insights() is None
        out = p.append("Workers renew leases every 10 s", author="agent-7")
        assert out.status == "written" and out.path == ".fusion/memory.md"
        assert p.append("Workers renew leases every 10 s").status == "skipped_duplicate"
        assert p.append("   ").status == "skipped_empty"
        text = p.read()
        with pytest.raises(MemoryBackendError) as err:
            p.write(None, "- stale\n", expected_hash=fileio.content_hash(""))
        assert err.value.code == "CONFLICT"
        result = p.write(None, text + "\n- edited by the operator\n", expected_hash=fileio.content_hash(text))
        assert result.changed and result.changes.documents == frozenset({".fusion/memory.md"})
        p.write_insights("# Memory Insights\n\n## Patterns\n\n- lease renewals\n")
        assert p.read_insights().endswith("- lease renewals\n")
        rows = stored(pg, key)
        assert set(rows) == {".fusion/memory.md", ".fusion/memory-insights.md"}
        assert rows[".fusion/memory.md"] == p.read() == (project / ".fusion/memory.md").read_text(encoding="utf-8")
        hits = p.search("leases")
        assert {h.file for h in hits} == {".fusion/memory.md", ".fusion/memory-insights.md"}
        assert ".fusion/memory.md" in [d.path for d in p.documents()]
    finally:
        p.close()


def test_layered_project_appends_to_daily_notes_and_long_term(layered_project: Path, key: str, pg: PgServer):
    configure(layered_project, key)
    long_term = (layered_project / ".fusion/memory/MEMORY.md").read_text(encoding="utf-8")
    p = Project(layered_project)
    try:
        assert p.backend.id == "postgres" and p.memory_path == ".fusion/memory/MEMORY.md"
        assert p.read() == long_term
        daily = p.append("flaky test traced to clock skew", layer="daily")
        assert daily.status == "written" and daily.path.startswith(".fusion/memory/20")
        p.append("always pin the toolchain", layer="long-term")
        rows = stored(pg, key)
        assert rows[".fusion/memory/MEMORY.md"] == long_term + "\nalways pin the toolchain\n"  # Fusion's format
        assert rows[daily.path].startswith("# Daily Memory ") and "flaky test traced" in rows[daily.path]
        assert (layered_project / daily.path).read_text(encoding="utf-8") == rows[daily.path]  # mirrored
        assert not (layered_project / ".fusion/memory.md").exists()
    finally:
        p.close()


def test_without_the_mirror_the_database_alone_holds_the_memory(project: Path, key: str, pg: PgServer):
    configure(project, key, mirror=False)
    p = Project(project)
    try:
        p.append("only in postgres")
        assert "only in postgres" in p.read()
        assert not (project / ".fusion/memory.md").exists()
        assert "only in postgres" in stored(pg, key)[".fusion/memory.md"]
    finally:
        p.close()
