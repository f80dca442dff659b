"""The Search view leaves entries marked ``[superseded DATE]`` out by default; "Include superseded" shows them."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from core.search import derived
from gui.session import ProjectSession
from gui.views.search_view import SearchView
from tests.gui.views.test_search_view import registry, use

OLD = "[superseded 2026-11-30] Narwhal leases expire on the worker clock"
NEW = "Narwhal leases expire on the DB clock, never the worker clock"


@pytest.fixture(autouse=True)
def derived_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(derived.CACHE_DIR_ENV, str(tmp_path / "cache"))
    yield
    derived.close_all()


def rows(view: SearchView) -> list[tuple[str, str]]:
    """(line, result text) of every row shown."""
    m = view.model
    return sorted((str(m.data(m.index(r, 1))), str(m.data(m.index(r, 3)))) for r in range(m.rowCount()))


@pytest.mark.parametrize("backend", [None, "hybrid"])  # memdesk's own index (file backend) and a backend's search
def test_superseded_rows_are_left_out_until_the_box_is_ticked(qtbot, sample_project: Path, backend):
    memory = sample_project / ".fusion" / "memory.md"
    before = memory.read_text(encoding="utf-8")
    memory.write_text(before.rstrip("\n") + f"\n\n<!-- 2026-11-20 -->\n{OLD}\n\n<!-- 2026-11-30 -->\n{NEW}\n", encoding="utf-8")
    old_line = memory.read_text(encoding="utf-8").splitlines().index(OLD) + 1
    if backend:
        use(sample_project, backend)
    session = ProjectSession(sample_project, registry())
    v = SearchView(session)
    qtbot.addWidget(v)
    assert v.include_superseded.text() == "Include superseded" and not v.include_superseded.isChecked()
    qtbot.keyClicks(v.query, "narwhal")
    qtbot.keyClick(v.query, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not v.busy and v.status.text() == "1 result.", timeout=10_000)
    shown = rows(v)
    assert [line for line, _ in shown] == [str(old_line + 3)]
    assert "DB clock" in shown[0][1] and "superseded" not in shown[0][1]

    qtbot.mouseClick(v.include_superseded, Qt.MouseButton.LeftButton, pos=v.include_superseded.rect().center())
    assert v.include_superseded.isChecked()
    qtbot.waitUntil(lambda: not v.busy and v.status.text() == "2 results.", timeout=10_000)
    shown = rows(v)
    assert [line for line, _ in shown] == sorted([str(old_line), str(old_line + 3)])
    assert any("[superseded 2026-11-30]" in text for _, text in shown)
    v.include_superseded.setChecked(False)
    qtbot.waitUntil(lambda: not v.busy and v.status.text() == "1 result.", timeout=10_000)
    session.close()
