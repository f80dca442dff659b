"""Switching documents keeps each one's text, undo and edits; a big document loads in chunks, read-only meanwhile."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from gui.editor.documents import CHUNKED_ABOVE
from gui.main_window import MainWindow
from gui.recent import RecentProjects
from tests.conftest import REAL_MEMORY

MEMORY = ".fusion/memory/MEMORY.md"
DREAMS = ".fusion/memory/DREAMS.md"
BIG = ".fusion/agent-memory/reviewer/MEMORY.md"


@pytest.fixture
def window(qtbot, layered_project, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMDESK_CACHE_DIR", str(tmp_path / "cache"))
    win = MainWindow(recent=RecentProjects(persist=False))
    qtbot.addWidget(win)
    win.confirm_discard = lambda: "discard"
    win.show_error = lambda text: pytest.fail(f"unexpected error dialog: {text}")
    win.resize(1200, 800)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win._close_project()


def _big_text() -> str:
    real = REAL_MEMORY.read_text(encoding="utf-8")
    copies = CHUNKED_ABOVE * 3 // len(real) + 1
    return "".join(real.replace("# Project Memory", f"# Project Memory (copy {i})", 1) for i in range(copies))


def test_undo_history_of_each_document_survives_switching(qtbot, window, layered_project):
    window.open_project(layered_project)
    edit = window.editor.text_edit
    qtbot.keyClicks(edit, "FIRST ")
    window.open_document(DREAMS)
    qtbot.keyClicks(edit, "SECOND ")
    window.open_document(MEMORY)
    assert edit.toPlainText().startswith("FIRST ") and window.editor.dirty
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # undoes this document's typing
    assert edit.toPlainText() == (layered_project / MEMORY).read_text()
    assert not window.editor.dirty and window.windowTitle().count("MEMORY.md") == 1
    window.open_document(DREAMS)
    assert edit.toPlainText().startswith("SECOND ") and window.editor.dirty
    assert window.editor.unsaved_documents() == [DREAMS]


def test_a_clean_document_shown_again_shows_what_is_on_disk_now(qtbot, window, layered_project):
    window.open_project(layered_project)
    window.open_document(DREAMS)
    (layered_project / MEMORY).write_text("# Project Memory\n\n- rewritten by someone else\n", encoding="utf-8")
    window.open_document(MEMORY)
    assert window.editor.text_edit.toPlainText() == "# Project Memory\n\n- rewritten by someone else\n"
    assert not window.editor.dirty and window.editor.pages.currentIndex() == 0


def test_edited_document_changed_on_disk_meanwhile_opens_the_conflict_view(qtbot, window, layered_project):
    window.open_project(layered_project)
    qtbot.keyClicks(window.editor.text_edit, "MINE ")
    window.open_document(DREAMS)
    (layered_project / MEMORY).write_text("# Project Memory\n\n- rewritten\n", encoding="utf-8")
    window.open_document(MEMORY)
    editor = window.editor
    assert editor.pages.currentWidget() is editor.conflict_view
    assert editor.conflict_view.mine.toPlainText().startswith("MINE ")
    assert editor.conflict_view.disk.toPlainText() == "# Project Memory\n\n- rewritten\n"
    assert (layered_project / MEMORY).read_text() == "# Project Memory\n\n- rewritten\n"  # nothing written


def test_big_document_loads_in_chunks_then_edits_and_saves_byte_exact(qtbot, window, layered_project):
    big = _big_text()
    (layered_project / BIG).write_text(big, encoding="utf-8")
    window.open_project(layered_project)
    editor = window.editor
    window.open_document(BIG, line=1300)
    assert editor.buffer.loading and editor.text_edit.isReadOnly()  # partial: nobody types into it yet
    assert not editor.save()
    assert (layered_project / BIG).read_text() == big
    qtbot.waitUntil(lambda: not editor.buffer.loading, timeout=10_000)
    assert editor.text_edit.toPlainText() == big and not editor.text_edit.isReadOnly()
    assert editor.text_edit.textCursor().blockNumber() + 1 == 1300  # the line asked for while it loaded
    assert not editor.dirty and not editor.text_edit.document().isUndoAvailable()
    sections = sum(1 for line in big.splitlines() if line.startswith("## "))
    # outlined once full, not while partial (a big text's headings are found on a worker thread)
    qtbot.waitUntil(lambda: editor.outline.title.text() == f"Outline · {sections}", timeout=10_000)
    editor.text_edit.moveCursor(editor.text_edit.textCursor().MoveOperation.End)
    qtbot.keyClicks(editor.text_edit, "- added at the end")
    window.open_document(MEMORY)
    window.open_document(BIG)
    assert not editor.buffer.loading and editor.text_edit.toPlainText() == big + "- added at the end"
    qtbot.keyClick(editor.text_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert (layered_project / BIG).read_bytes() == (big + "- added at the end").encode("utf-8")


def test_agent_append_during_a_big_load_is_in_the_text_when_it_is_full(qtbot, window, layered_project):
    big = _big_text()
    path: Path = layered_project / BIG
    path.write_text(big, encoding="utf-8")
    window.open_project(layered_project)
    window.open_document(BIG)
    assert window.editor.buffer.loading
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("- appended by an agent while it loaded\n")
    qtbot.waitUntil(lambda: not window.editor.buffer.loading, timeout=10_000)
    assert window.editor.text_edit.toPlainText() == big + "- appended by an agent while it loaded\n"
    assert not window.editor.dirty
