"""History as an operator uses it: memory documents only by default, clear labels, side-by-side diff,
restoring one change (the exact bytes) and refusing it when the file moved on."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QThreadPool

from core.automation.extraction import store_imported_reply
from core.proposals import reject_insights
from core.storage import saving
from core.storage.history import versions as history
from gui.session import ProjectSession
from gui.views.history_view import ALL_FILES, HistoryView, is_memory_document, source_label

MEMORY = ".fusion/memory.md"


@pytest.fixture(autouse=True)
def _drain_workers(qapp):
    yield
    QThreadPool.globalInstance().waitForDone(5000)


class Confirm:
    def __init__(self, answer: bool = True) -> None:
        self.answer, self.asked = answer, []

    def __call__(self, _parent, text: str) -> bool:
        self.asked.append(text)
        return self.answer


def make(qtbot, root: Path, size: tuple[int, int] = (1280, 800)) -> HistoryView:
    view = HistoryView(ProjectSession(root), confirm=Confirm())
    qtbot.addWidget(view)
    view.resize(*size)
    with qtbot.waitActive(view):
        view.show()
        view.activateWindow()
    return view


def wait_diff(qtbot, view: HistoryView) -> None:
    qtbot.waitUntil(lambda: view.diff_op is None and view.shown is not None, timeout=10_000)


def save(view: HistoryView, text: str, source: str = "editor") -> None:
    _old, digest = view.session.read_memory()
    assert view.session.write_memory(text, digest, source=source).success
    view.session.memoryReplaced.emit(source)


def two_edits(sample_project: Path) -> tuple[str, str]:
    original = (sample_project / MEMORY).read_text()
    edited = original.replace("Node 20 LTS", "Node 22 LTS").replace("## Context", "## Context\n\n- a new note", 1)
    return original, edited


def test_internal_files_are_hidden_until_asked(qtbot, sample_project: Path) -> None:
    run = store_imported_reply(sample_project, (sample_project / ".fusion/extraction-reply.json").read_text(), "r.json")
    reject_insights(sample_project, run.proposal_id, [1])  # the proposal file is replaced: a version of it
    assert any(v.path.startswith(".fusion/memdesk/proposals/") for v in history.list_versions(sample_project))
    view = make(qtbot, sample_project)
    saving.replace_text(sample_project, MEMORY, "- changed\n", source="prune")
    view.refresh()
    assert [v.path for v in view.model.rows] == [MEMORY]
    assert view.model.index(0, 1).data() == "before prune"
    qtbot.mouseClick(view.show_all, Qt.MouseButton.LeftButton)
    assert view.files.itemText(0) == ALL_FILES
    assert any(v.path.startswith(".fusion/memdesk/proposals/") for v in view.model.rows)
    assert {view.model.index(r, 1).data() for r in range(view.model.rowCount())} >= {"before prune", "proposal update"}


def test_labels_and_document_rules() -> None:
    assert [source_label(s) for s in ("prune", "restore", "append", "editor")] == [
        "before prune", "before restore", "agent append", "before save"]
    assert source_label("something-new") == "before something-new"
    for path in (".fusion/memory.md", ".fusion/memory-insights.md", ".fusion/memory/MEMORY.md",
                 ".fusion/memory/2026-11-30.md", ".fusion/memory/DREAMS.md", ".fusion/agent-memory/a-1/MEMORY.md"):
        assert is_memory_document(path), path
    for path in (".fusion/memdesk/proposals/x.json", ".fusion/config.json", ".fusion/memory/memory-audit.md",
                 ".fusion/memory-audit.md", ".fusion/automations.json"):
        assert not is_memory_document(path), path


def test_restore_one_change_writes_exactly_that_change(qtbot, sample_project: Path) -> None:
    original, edited = two_edits(sample_project)
    view = make(qtbot, sample_project)
    save(view, edited)
    view.table.selectRow(0)
    wait_diff(qtbot, view)
    assert len(view.diff.result.hunks) == 2
    assert view.diff.current_hunk().index == 0  # the diff opens at its first change (the new note)
    view.diff.left.setFocus()
    qtbot.keyClick(view.diff.left, Qt.Key.Key_F7)  # the next one: Node 22 now, Node 20 in the version
    hunk = view.diff.current_hunk()
    assert hunk.index == 1 and "Node 22 LTS" in view.diff.result.rows[hunk.row_start].right  # version | now
    assert view.restore_change_button.isEnabled()
    with qtbot.waitSignal(view.restored) as restored:
        qtbot.keyClick(view.diff.left, Qt.Key.Key_R,
                       Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert restored.args == [MEMORY]
    assert (sample_project / MEMORY).read_text() == edited.replace("Node 22 LTS", "Node 20 LTS")
    assert "bring back this change from version" in view.confirm.asked[-1].lower()  # type: ignore[attr-defined]
    newest = history.list_versions(sample_project, MEMORY)[0]
    assert newest.source == "restore" and history.get_version(sample_project, newest.id)[1] == edited
    assert view.status.text().startswith("Restored one change")


def test_restoring_a_change_refuses_when_the_file_moved_on(qtbot, sample_project: Path) -> None:
    _original, edited = two_edits(sample_project)
    view = make(qtbot, sample_project)
    save(view, edited)
    view.table.selectRow(0)
    wait_diff(qtbot, view)
    view.diff.go_to_hunk(1)
    (sample_project / MEMORY).write_text(edited + "\n<!-- 2026-12-01 -->\nan agent appended this\n")
    on_disk = (sample_project / MEMORY).read_bytes()
    assert view.restore_change() is False
    assert (sample_project / MEMORY).read_bytes() == on_disk
    assert "was not restored" in view.status.text()


def test_restore_the_whole_version_by_keyboard(qtbot, sample_project: Path) -> None:
    original, edited = two_edits(sample_project)
    view = make(qtbot, sample_project)
    save(view, edited)
    view.table.setFocus()
    view.table.selectRow(0)
    with qtbot.waitSignal(view.restored):
        qtbot.keyClick(view.table, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    assert (sample_project / MEMORY).read_text() == original
    assert "before save" in view.confirm.asked[-1]  # type: ignore[attr-defined]


def test_usable_at_800_by_600(qtbot, sample_project: Path) -> None:
    _original, edited = two_edits(sample_project)
    view = make(qtbot, sample_project, (800, 600))
    save(view, edited)
    view.table.selectRow(0)
    wait_diff(qtbot, view)
    assert view.minimumSizeHint().width() <= 800 and view.width() == 800
    for widget in (view.restore_button, view.restore_change_button, view.files, view.show_all):
        assert widget.isVisible() and widget.geometry().right() <= view.width()
    assert "Ctrl+R)" in view.restore_button.toolTip() and "Ctrl+Shift+R" in view.restore_change_button.toolTip()


def test_screenshot(qtbot, sample_project: Path, screenshot) -> None:
    _original, edited = two_edits(sample_project)
    view = make(qtbot, sample_project)
    save(view, edited)
    saving.replace_text(sample_project, MEMORY, edited.replace("single transaction", "single short transaction"),
                        source="prune")
    view.refresh()
    view.table.selectRow(1)
    wait_diff(qtbot, view)
    view.diff.go_to_hunk(1)
    screenshot(view, "history")


def test_a_layered_project_restores_a_change_of_an_agent_file(qtbot, layered_project: Path) -> None:
    path = ".fusion/agent-memory/reviewer/MEMORY.md"
    view = make(qtbot, layered_project)
    before = view.session.project.read(path)
    lines = before.split("\n")
    edited = "\n".join([lines[0], "- a note the reviewer added", *lines[1:-2], lines[-2] + " (edited)", lines[-1]])
    view.session.project.write(path, edited, source="append")
    view.refresh()
    assert [view.model.index(r, 1).data() for r in range(view.model.rowCount())] == ["agent append"]
    assert view.files.itemText(1) == path
    view.table.selectRow(0)
    wait_diff(qtbot, view)
    assert len(view.diff.result.hunks) == 2
    view.diff.go_to_hunk(0)
    assert view.restore_change()
    assert (layered_project / path).read_text() == "\n".join([lines[0], *lines[1:-2], lines[-2] + " (edited)", lines[-1]])
