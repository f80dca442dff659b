"""The History view on a postgres project: the shared database's versions, diffed and restored there."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from core.project import Project
from core.settings.bindings import confirm
from core.storage import fileio
from gui.session import ProjectSession
from gui.views.history_view import ALL_DOCUMENTS, HistoryView
from tests.core.pg_server import PgServer, project_key

MEM = ".fusion/memory.md"
V1 = "# Project Memory\n\n## Pitfalls\n\n- leases expire after 30 s\n- pin the toolchain\n"
V2 = "# Project Memory\n\n## Pitfalls\n\n- leases expire after 20 s\n"
V3 = "# Project Memory\n\n## Pitfalls\n\n- leases expire after 10 s\n"


class Confirm:
    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, _parent, text: str) -> bool:
        self.asked.append(text)
        return True


def db_text(pg: PgServer, key: str, path: str = MEM) -> str | None:
    with psycopg.connect(pg.dsn()) as conn:
        row = conn.execute("SELECT content FROM memdesk_documents WHERE project_key = %s AND path = %s",
                           (key, path)).fetchone()
    return row[0] if row else None


@pytest.fixture
def key(pg_connection: str) -> str:
    return project_key()


@pytest.fixture
def view(qtbot, project: Path, key: str):
    (project / ".fusion").mkdir()
    (project / ".fusion" / "config.json").write_text(json.dumps({
        "memoryBackend": "postgres", "memoryBackendConfig": {"connection": "team", "projectKey": key,
                                                             "mirror": False}}), encoding="utf-8")
    confirm(project, "team", key)  # the operator confirms the binding once (core.settings.bindings)
    p = Project(project)
    try:
        for text in (V1, V2, V3):
            p.write(None, text, source="editor", author="operator")
    finally:
        p.close()
    session = ProjectSession(project)
    assert session.backend.id == "postgres"
    v = HistoryView(session, confirm=Confirm())
    qtbot.addWidget(v)
    yield v
    session.close()


def wait_diff(qtbot, view: HistoryView) -> None:
    qtbot.waitUntil(lambda: view.diff_op is None and view.shown is not None, timeout=10_000)


def cells(view: HistoryView, row: int) -> list[str]:
    return [view.model.index(row, c).data() for c in range(view.model.columnCount())]


def test_lists_the_databases_versions_and_diffs_them(qtbot, view: HistoryView, key: str):
    assert view.files.itemText(0) == ALL_DOCUMENTS and view.files.itemText(1) == MEM
    assert view.model.rowCount() == 2
    assert cells(view, 0)[1:] == ["before save", "operator", fileio.format_size(len(V2)), MEM]
    wait_diff(qtbot, view)
    assert view.shown.current == V3 and view.shown.content == V2
    view.table.selectRow(1)
    wait_diff(qtbot, view)
    assert view.shown.content == V1


def test_restores_a_version_into_the_database_keeping_what_it_replaced(qtbot, view: HistoryView, key: str,
                                                                    pg: PgServer, project: Path):
    view.table.selectRow(1)
    wait_diff(qtbot, view)
    assert view.restore_selected()
    assert db_text(pg, key) == V1 and view.session.project.read() == V1
    assert not (project / MEM).exists()  # mirror off: the database holds it
    assert view.status.text() == f"Restored version {view.session.project.list_versions(MEM)[-1].id} of {MEM}."
    assert cells(view, 0)[1] == "before restore"  # the list refreshed with the replaced content first
    newest = view.session.project.list_versions(MEM)[0]
    assert view.session.project.get_version(newest.id)[1] == V3


def test_restores_one_change_into_the_database(qtbot, view: HistoryView, key: str, pg: PgServer):
    view.table.selectRow(1)  # V1: the lease line differs and one more line
    wait_diff(qtbot, view)
    assert view.diff.current_hunk() is not None
    assert view.restore_change()
    restored = db_text(pg, key)
    assert restored != V3 and restored.startswith("# Project Memory\n\n## Pitfalls\n")
    assert "30 s" in restored and "pin the toolchain" in restored
    assert view.session.project.get_version(view.session.project.list_versions(MEM)[0].id)[1] == V3


def test_a_planted_row_is_shown_on_request_but_never_restored(qtbot, view: HistoryView, key: str, pg: PgServer):
    with psycopg.connect(pg.dsn()) as conn:
        conn.execute("INSERT INTO memdesk_history (project_key, path, hash, size, source, content) "
                     "VALUES (%s, '../../outside.md', %s, 6, 'write', 'pwned\n')", (key, fileio.content_hash("pwned\n")))
    view.refresh()
    assert view.model.rowCount() == 2  # hidden: not a memory document
    view.show_all.setChecked(True)
    row = next(i for i, v in enumerate(view.model.rows) if v.path == "../../outside.md")
    view.table.selectRow(row)
    assert not view.restore_selected()
    assert "was not restored" in view.status.text() and "memory documents only" in view.status.text()
    assert db_text(pg, key) == V3 and db_text(pg, key, "../../outside.md") is None
