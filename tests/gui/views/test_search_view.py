"""SearchView: type a query, pick a mode, see results with file/section/line/explain, open one, rebuild."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from core.backends import MemoryBackendRegistry
from core.backends.file import FileMemoryBackend, ReadOnlyMemoryBackend
from core.backends.hybrid import HybridMemoryBackend
from core.backends.sqlite import SqliteMemoryBackend
from core.search import derived
from core.search.embeddings import Embedder
from gui.session import ProjectSession
from gui.views.search_view import HighlightRole, SearchView


class KeywordOnlyHybrid(HybridMemoryBackend):
    """The hybrid backend as it is without the semantic extra."""

    def __init__(self, config=None) -> None:
        super().__init__(config, embedder=Embedder(installed=lambda: False))


def registry() -> MemoryBackendRegistry:
    reg = MemoryBackendRegistry()
    for cls in (FileMemoryBackend, ReadOnlyMemoryBackend, SqliteMemoryBackend, KeywordOnlyHybrid):
        reg.register(cls)
    return reg


def use(root: Path, backend: str) -> None:
    cfg = root / ".fusion" / "config.json"
    doc = json.loads(cfg.read_text())
    doc["settings"]["memoryBackend"] = backend
    cfg.write_text(json.dumps(doc))


@pytest.fixture(autouse=True)
def derived_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(derived.CACHE_DIR_ENV, str(tmp_path / "cache"))
    yield
    derived.close_all()


@pytest.fixture
def view(qtbot, sample_project: Path):
    use(sample_project, "hybrid")
    session = ProjectSession(sample_project, registry())
    v = SearchView(session)
    qtbot.addWidget(v)
    yield v
    for op in (v.search_op, v.rebuild_op):
        if op is not None:
            op.cancel()
    session.close()


def search(qtbot, view: SearchView, text: str, mode: str = "keyword") -> None:
    view.mode.setCurrentIndex(view.mode.findData(mode))
    view.query.clear()
    qtbot.keyClicks(view.query, text)
    qtbot.keyClick(view.query, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not view.busy and view.status.text() != "Searching…", timeout=10_000)


def cell(view: SearchView, row: int, col: int) -> str:
    return str(view.model.data(view.model.index(row, col)))


def test_results_show_file_line_section_and_explain(qtbot, view: SearchView):
    search(qtbot, view, "PgBouncer LISTEN")
    assert view.model.rowCount() >= 2
    assert cell(view, 0, 0) == ".fusion/memory-insights.md" and cell(view, 0, 1) == "27"
    assert cell(view, 0, 2) == "Pitfalls" and "«" not in cell(view, 0, 3)
    shown = cell(view, 0, 3)
    words = {shown[s:e] for s, e in view.model.data(view.model.index(0, 3), HighlightRole)}
    assert words == {"PgBouncer", "LISTEN"}
    assert cell(view, 0, 4).startswith("kw 1.00 · vec – · fused 1.00")
    assert view.status.text().endswith("results.")
    assert view.model.headerData(4, Qt.Orientation.Horizontal) == "Explain"


def test_activating_a_result_opens_it_at_its_line(qtbot, view: SearchView):
    search(qtbot, view, "graceful shutdown SIGTERM")
    with qtbot.waitSignal(view.openAtLine, timeout=2000) as blocker:
        view.table.setCurrentIndex(view.model.index(0, 0))
        view.table.activated.emit(view.model.index(0, 0))
    path, line = blocker.args
    assert path == ".fusion/memory.md"
    lines = (view.session.root / path).read_text().splitlines()
    assert "Graceful shutdown" in lines[line - 1]


def test_semantic_mode_without_the_extra_says_keyword_only(qtbot, view: SearchView):
    assert "keyword-only" in view.note.text()
    search(qtbot, view, "claim jobs", mode="semantic")
    assert view.model.rowCount() > 0
    assert "keyword-only" in view.note.text() and "memdesk[semantic]" in view.note.text()


def test_no_results_and_empty_query(qtbot, view: SearchView):
    search(qtbot, view, "qwxyzzy")
    assert view.model.rowCount() == 0 and view.status.text() == "No results."
    view.query.clear()
    view.run_search()
    assert view.model.rowCount() == 0


def test_a_backend_without_search_searches_with_memdesks_index(qtbot, sample_project: Path):
    session = ProjectSession(sample_project, registry())  # the sample uses the file backend
    v = SearchView(session)
    qtbot.addWidget(v)
    assert v.query.isEnabled() and "memdesk's own index" in v.note.text()
    search(qtbot, v, "Kysely pinned", mode="hybrid")
    assert {cell(v, r, 0) for r in range(2)} == {".fusion/memory.md", ".fusion/memory-insights.md"}
    assert v.note.text().startswith("Ran: keyword search by memdesk's own index, not hybrid")
    assert not session.backend.has_capability("search")  # the backend's capabilities are unchanged
    assert not (sample_project / ".fusion" / "memdesk" / "search.db").exists()
    session.switch_backend("sqlite")
    search(qtbot, v, "Kysely pinned")
    assert v.note.text().startswith("Ran: keyword search") and "SQLite" in v.note.text()
    session.close()


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_semantic_and_hybrid_on_qmd_say_they_ran_keyword(qtbot, layered_project: Path, mode: str):
    """Issue 22: on an untouched current-Fusion project (qmd) a semantic search said "Ran: hybrid"."""
    session = ProjectSession(layered_project)
    assert session.backend.id == "qmd"
    v = SearchView(session)
    qtbot.addWidget(v)
    search(qtbot, v, "promptWithFallback", mode=mode)
    assert v.model.rowCount() > 0
    assert v.note.text().startswith(f"Ran: keyword search, not {mode}, by the QMD")
    assert "memdesk's own index" in v.note.text()
    search(qtbot, v, "promptWithFallback", mode="keyword")
    assert v.note.text() == "Ran: keyword search by the QMD (Quantized Memory Distillation) backend."
    session.close()


def test_rebuild_runs_in_the_background_and_reports(qtbot, view: SearchView):
    qtbot.mouseClick(view.rebuild_button, Qt.MouseButton.LeftButton)
    assert view.rebuild_button.text() == "Cancel rebuild"
    qtbot.waitUntil(lambda: view.rebuild_op is None, timeout=20_000)
    assert view.status.text().startswith("Index rebuilt:") and "verified" in view.status.text()
    assert view.rebuild_button.text() == "Rebuild index"


def test_a_new_write_is_found_after_memory_replaced(qtbot, view: SearchView):
    search(qtbot, view, "narwhal")
    assert view.model.rowCount() == 0
    text, digest = view.session.read_memory()
    assert view.session.write_memory(text + "\n- narwhal migration done\n", digest).success
    view.session.memoryReplaced.emit("editor")
    qtbot.waitUntil(lambda: view.model.rowCount() == 1, timeout=10_000)
