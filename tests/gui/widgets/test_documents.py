"""The document picker and per-document editing on current Fusion's layered layout, driven as a user would."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt

from gui.main_window import MainWindow
from gui.recent import RecentProjects
from tests.snapshot import tree

WAIT_MS = 10_000


@pytest.fixture
def window(qtbot, layered_project, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMDESK_CACHE_DIR", str(tmp_path / "cache"))
    win = MainWindow(recent=RecentProjects(persist=False))
    qtbot.addWidget(win)
    win.confirm_discard = lambda: "discard"
    win.show_error = lambda text: pytest.fail(f"unexpected error dialog: {text}")
    win.show()
    qtbot.waitExposed(win)
    yield win
    win._close_project()


def click_document(qtbot, win: MainWindow, relpath: str) -> None:
    picker = win.picker
    assert picker is not None
    item = picker._items[relpath]
    picker.scrollToItem(item)
    rect = picker.visualItemRect(item)
    qtbot.mouseClick(picker.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_picker_lists_every_document_and_opening_changes_nothing(qtbot, window, layered_project):
    before = tree(layered_project)
    assert window.open_project(layered_project)
    picker = window.picker
    assert picker is not None and picker.isVisible() is False or picker is not None
    assert picker.paths()[:5] == [".fusion/memory/MEMORY.md", ".fusion/memory/2026-08-20.md",
                                  ".fusion/memory/2026-08-19.md", ".fusion/memory/2026-08-18.md",
                                  ".fusion/memory/DREAMS.md"]
    agents = [picker.topLevelItem(i).text(0) for i in range(picker.topLevelItemCount())
              if picker.topLevelItem(i).text(1) == "agent"]
    assert agents == ["executor-7", "reviewer"]
    assert window.editor.text_edit.toPlainText() == (layered_project / ".fusion/memory/MEMORY.md").read_text()
    assert "MEMORY.md" in window.windowTitle()
    assert tree(layered_project) == before


def test_clicking_a_document_shows_it_and_saves_byte_exact(qtbot, window, layered_project):
    window.open_project(layered_project)
    target = ".fusion/agent-memory/reviewer/MEMORY.md"
    click_document(qtbot, window, target)
    editor = window.editor
    assert editor.current_path == target
    raw = (layered_project / target).read_bytes()
    assert editor.text_edit.toPlainText() == raw.decode()
    assert editor.path_label.text() == target
    editor.text_edit.moveCursor(editor.text_edit.textCursor().MoveOperation.End)
    qtbot.keyClicks(editor.text_edit, "- reviewed by hand")
    qtbot.keyClick(editor.text_edit, Qt.Key.Key_Return)
    assert window.picker.is_marked_dirty(target)
    qtbot.keyClick(editor.text_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert (layered_project / target).read_bytes() == raw + b"- reviewed by hand\n"
    assert not window.picker.is_marked_dirty(target)


def test_switching_away_from_a_dirty_document_keeps_the_edit(qtbot, window, layered_project):
    window.open_project(layered_project)
    editor = window.editor
    qtbot.keyClicks(editor.text_edit, "OPERATOR EDIT ")
    assert editor.dirty
    click_document(qtbot, window, ".fusion/memory/DREAMS.md")
    assert editor.current_path == ".fusion/memory/DREAMS.md" and not editor.dirty
    assert window.picker.is_marked_dirty(".fusion/memory/MEMORY.md")
    disk = (layered_project / ".fusion/memory/MEMORY.md").read_text()
    assert "OPERATOR EDIT" not in disk  # nothing was saved behind the operator's back
    click_document(qtbot, window, ".fusion/memory/MEMORY.md")
    assert editor.dirty and editor.text_edit.toPlainText().startswith("OPERATOR EDIT ")


def test_edit_kept_aside_merges_an_agents_append_made_meanwhile(qtbot, window, layered_project):
    window.open_project(layered_project)
    editor = window.editor
    qtbot.keyClicks(editor.text_edit, "MINE ")
    click_document(qtbot, window, ".fusion/memory/DREAMS.md")
    with open(layered_project / ".fusion/memory/MEMORY.md", "a", encoding="utf-8") as fh:
        fh.write("\n- appended by an agent\n")
    click_document(qtbot, window, ".fusion/memory/MEMORY.md")
    text = editor.text_edit.toPlainText()
    assert text.startswith("MINE ") and text.endswith("- appended by an agent\n") and editor.dirty


@pytest.mark.parametrize("query, target, line", [
    ("Project-Context Reset", ".fusion/memory/2026-08-20.md", 5),
    ("compaction attempt truncated retry", ".fusion/agent-memory/executor-7/MEMORY.md", 22),
])
def test_search_result_opens_its_document_at_the_line(qtbot, window, layered_project, query, target, line):
    window.open_project(layered_project)
    view = window.show_view("search")
    qtbot.waitUntil(lambda: view.query.isEnabled(), timeout=WAIT_MS)
    view.query.clear()
    qtbot.keyClicks(view.query, query)
    qtbot.keyClick(view.query, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not view.busy and view.model.rowCount() > 0, timeout=WAIT_MS)
    rows = list(view.model.rows)
    row = next(i for i, r in enumerate(rows) if r.file == target)
    assert rows[row].line_number == line
    view.open_row(row)
    editor = window.editor
    assert window.tabs.currentWidget() is editor
    assert editor.current_path == target
    assert editor.text_edit.textCursor().blockNumber() + 1 == line
    expected = (layered_project / target).read_text().splitlines()[line - 1]
    assert editor.text_edit.textCursor().block().text() == expected
    assert editor.text_edit.viewport().rect().contains(editor.text_edit.cursorRect().center())


def test_readonly_backend_refuses_saves_from_the_gui(qtbot, window, layered_project):
    cfg = layered_project / ".fusion/config.json"
    data = json.loads(cfg.read_text())
    data["settings"]["memoryBackend"] = "readonly"
    cfg.write_text(json.dumps(data))
    before = tree(layered_project)
    window.open_project(layered_project)
    editor = window.editor
    assert editor.text_edit.isReadOnly() and "cannot write" in editor.read_only_banner.text()
    click_document(qtbot, window, ".fusion/memory/DREAMS.md")
    assert editor.text_edit.isReadOnly()
    assert not editor.save()
    assert tree(layered_project) == before


def test_empty_folder_asks_before_creating_memory(qtbot, window, tmp_path):
    root = tmp_path / "empty"
    root.mkdir()
    window.open_project(root)
    editor = window.editor
    assert list(root.iterdir()) == []
    assert "does not exist yet" in editor.missing_banner.text()
    qtbot.mouseClick(editor.missing_banner.button, Qt.MouseButton.LeftButton)
    from core.documents.layout import SEED_SCAFFOLD

    assert (root / ".fusion/memory.md").read_text() == SEED_SCAFFOLD
    assert editor.text_edit.toPlainText() == SEED_SCAFFOLD
    assert window.picker.paths() == [".fusion/memory.md"]


def test_migrate_from_the_gui_shows_the_diff_first(qtbot, window, layered_project):
    legacy = "# Project Memory\n\n## Architecture\n\n- Legacy decision about leases\n"
    (layered_project / ".fusion/memory.md").write_text(legacy)
    window.open_project(layered_project)
    assert window.actions_by_name["migrate"].isEnabled()
    seen = []

    def decline(dialog):
        seen.append(dialog.diff.toPlainText())
        return False

    window.ask_migrate = decline
    assert not window.migrate_legacy()
    assert "+- Legacy decision about leases" in seen[0]
    assert (layered_project / ".fusion/memory.md").read_text() == legacy  # declined: nothing changed
    window.ask_migrate = lambda dialog: True
    assert window.migrate_legacy()
    assert "- Legacy decision about leases" in (layered_project / ".fusion/memory/MEMORY.md").read_text()
    assert not (layered_project / ".fusion/memory.md").exists()
    assert "- Legacy decision about leases" in window.editor.text_edit.toPlainText()
    assert ".fusion/memory.md" not in window.picker.paths()


def test_the_window_fits_800_px_with_a_long_backend_name(qtbot, window, layered_project):
    """The qmd backend's long name and the load-budget meter give up width instead of widening the window."""
    window.open_project(layered_project)
    window.resize(800, 600)
    qtbot.wait(50)
    assert window.minimumSizeHint().width() <= 800 and window.width() == 800
    label = window.status.backend_label
    assert label.text() == "QMD (Quantized Memory Distillation) (qmd)"
