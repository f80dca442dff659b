"""HistoryView: lists versions, shows the diff against now, restores (and the restore is recorded)."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt

from core.backends import MemoryBackendRegistry
from core.backends.file import FileMemoryBackend, ReadOnlyMemoryBackend
from core.backends.sqlite import SqliteMemoryBackend
from core.storage import saving
from core.storage.history import versions as history
from gui.session import ProjectSession
from gui.views.history_view import ALL_DOCUMENTS, HistoryView

MEMORY = ".fusion/memory.md"


def registry() -> MemoryBackendRegistry:
    reg = MemoryBackendRegistry()
    for cls in (FileMemoryBackend, ReadOnlyMemoryBackend, SqliteMemoryBackend):
        reg.register(cls)
    return reg


class Confirm:
    """Stands in for the confirmation dialog; remembers the question."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked: list[str] = []

    def __call__(self, _parent, text: str) -> bool:
        self.asked.append(text)
        return self.answer


def make(qtbot, root: Path, answer: bool = True) -> HistoryView:
    session = ProjectSession(root, registry())
    view = HistoryView(session, confirm=Confirm(answer))
    qtbot.addWidget(view)
    return view


def wait_diff(qtbot, view: HistoryView):
    """Wait for the side-by-side diff of the selected version; return its rows."""
    qtbot.waitUntil(lambda: view.diff_op is None and view.shown is not None, timeout=10_000)
    return view.diff.result.rows


def edit(view: HistoryView, new_text: str, source: str = "editor") -> None:
    _text, digest = view.session.read_memory()
    assert view.session.write_memory(new_text, digest, source=source).success
    view.session.memoryReplaced.emit(source)


def test_empty_history(qtbot, project: Path):
    view = make(qtbot, project)
    assert view.model.rowCount() == 0 and not view.restore_button.isEnabled()
    assert "No versions stored yet" in view.diff.message.text()


def test_lists_versions_and_diffs_against_now(qtbot, sample_project: Path):
    view = make(qtbot, sample_project)
    original = (sample_project / MEMORY).read_text()
    edit(view, original.replace("Node 20 LTS", "Node 22 LTS"))
    assert view.model.rowCount() == 1
    assert view.model.data(view.model.index(0, 1)) == "before save"
    assert view.model.data(view.model.index(0, view.model.columnCount() - 1)) == MEMORY
    rows = wait_diff(qtbot, view)
    [changed] = [r for r in rows if r.kind != "equal"]
    assert changed.left.startswith("- Node 20 LTS") and changed.right.startswith("- Node 22 LTS")  # version | now
    assert [changed.left[a:b] for a, b in changed.left_spans] == ["20"]
    assert "before save" in view.diff.left_title.text() and "Now: .fusion/memory.md" in view.diff.right_title.text()
    saving.replace_text(sample_project, ".fusion/memory-insights.md", "# Memory Insights\n", source="insights-merge")
    view.refresh()
    assert [view.files.itemText(i) for i in range(view.files.count())] == [
        ALL_DOCUMENTS, ".fusion/memory-insights.md", MEMORY]
    view.files.setCurrentText(".fusion/memory-insights.md")
    assert view.model.rowCount() == 1 and view.model.data(view.model.index(0, 1)) == "before an insights merge"
    assert any(r.left == "## Last Updated: 2026-11-20" and r.right is None for r in wait_diff(qtbot, view))


def test_an_append_shows_as_added_lines(qtbot, sample_project: Path):
    """Issue 22: History showed an append as "−6 removed"; since the version, the lines were added."""
    view = make(qtbot, sample_project)
    project = view.session.project
    before = project.read(MEMORY)
    edit(view, before + "\n<!-- 2026-12-01 -->\n- one\n- two\n- three\n")
    rows = wait_diff(qtbot, view)
    changed = [r for r in rows if r.kind != "equal"]
    assert changed and all(r.kind == "insert" and r.left is None for r in changed)
    assert {r.right for r in changed} >= {"- one", "- two", "- three"}
    assert view.diff.result.added >= 3 and view.diff.result.removed == 0
    assert "−0 removed" in view.diff.summary.text() and "+5 added" in view.diff.summary.text()


def test_restore_is_confirmed_recorded_and_announced(qtbot, sample_project: Path):
    view = make(qtbot, sample_project)
    original = (sample_project / MEMORY).read_text()
    edit(view, "# Project Memory\n\n- everything else was deleted\n")
    view.table.selectRow(0)
    with qtbot.waitSignal(view.restored, timeout=2000) as restored, \
            qtbot.waitSignal(view.session.memoryReplaced, timeout=2000):
        qtbot.mouseClick(view.restore_button, Qt.MouseButton.LeftButton)
    assert restored.args == [MEMORY]
    assert (sample_project / MEMORY).read_text() == original
    assert "The content it replaces is kept" in view.confirm.asked[0]  # type: ignore[attr-defined]
    versions = history.list_versions(sample_project, MEMORY)
    assert versions[0].source == "restore"
    assert history.get_version(sample_project, versions[0].id)[1] == "# Project Memory\n\n- everything else was deleted\n"
    assert view.model.rowCount() == 2
    assert view.status.text().startswith("Restored version")


def test_declined_restore_changes_nothing(qtbot, sample_project: Path):
    view = make(qtbot, sample_project, answer=False)
    edit(view, "- changed\n")
    assert not view.restore_selected()
    assert (sample_project / MEMORY).read_text() == "- changed\n"


def test_failed_restore_says_why(qtbot, sample_project: Path):
    view = make(qtbot, sample_project)
    edit(view, "- changed\n")
    view.session.switch_backend("readonly")  # (the settings save adds a version of config.json)
    view.files.setCurrentText(MEMORY)
    view.table.selectRow(0)
    assert not view.restore_selected()
    assert "was not restored" in view.status.text()
    assert (sample_project / MEMORY).read_text() == "- changed\n"


def test_restore_goes_through_a_database_backend(qtbot, project: Path):
    (project / ".fusion").mkdir()
    (project / ".fusion" / "config.json").write_text(json.dumps(
        {"memoryBackend": "sqlite", "memoryBackendConfig": {"mirror": False}}))
    view = make(qtbot, project)
    assert view.session.backend.id == "sqlite"
    edit(view, "- first\n")
    edit(view, "- second\n")
    view.table.selectRow(0)  # the newest: "- first"
    assert view.restore_selected()
    assert view.session.read_memory()[0] == "- first\n"
    # The database got it, not the (unmirrored) file, which opening the project did not create either.
    assert not (project / MEMORY).exists()


def test_the_author_column_names_the_app_and_the_cli(qtbot, sample_project: Path, capsys, monkeypatch):
    """Issue 22: the Author column was empty for the app's and the CLI's writes."""
    from core.cli import main

    monkeypatch.setenv("LOGNAME", "ana")  # the login name, found as getpass.getuser finds it
    view = make(qtbot, sample_project)
    original = (sample_project / MEMORY).read_text()
    edit(view, original.replace("Node 20 LTS", "Node 22 LTS"))  # the app's save
    import io

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(original.encode("utf-8")), encoding="utf-8"))
    assert main(["write", "--project", str(sample_project)]) == 0  # the CLI's
    capsys.readouterr()
    view.refresh()
    author = view.model.HEADERS.index("Author")
    shown = [view.model.data(view.model.index(r, author)) for r in range(view.model.rowCount())]
    assert shown[:2] == ["cli:ana", "operator:ana"]
