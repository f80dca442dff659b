"""The main window: opening projects, title marker, shortcuts, unsaved-work prompts, recent projects."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QSettings, Qt, QThreadPool, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QApplication, QLabel

from gui.main_window import MainWindow
from gui.recent import MAX_RECENT, RecentProjects

MEMORY = ".fusion/memory.md"


@pytest.fixture
def make_window(qtbot, tmp_path: Path):
    """Build a shown MainWindow with recent projects in a tmp INI file and a scripted discard prompt."""
    windows: list[MainWindow] = []

    def make(project: Path, answer: str = "discard") -> MainWindow:
        settings = QSettings(str(tmp_path / "recent.ini"), QSettings.Format.IniFormat)
        window = MainWindow(project, recent=RecentProjects(settings))
        window.prompts = []  # type: ignore[attr-defined]
        window.errors = []  # type: ignore[attr-defined]

        def confirm() -> str:
            window.prompts.append(window.windowTitle())  # type: ignore[attr-defined]
            return window.answer  # type: ignore[attr-defined]

        window.answer = answer  # type: ignore[attr-defined]
        window.confirm_discard = confirm  # type: ignore[assignment]
        window.show_error = window.errors.append  # type: ignore[attr-defined]
        qtbot.addWidget(window)
        window.show()
        windows.append(window)
        return window

    yield make
    for window in windows:
        window.answer = "discard"  # type: ignore[attr-defined]
        window.close()
    QThreadPool.globalInstance().waitForDone(5000)


def test_opens_the_sample_project(make_window, sample_project: Path) -> None:
    window = make_window(sample_project)
    assert window.windowTitle() == "memdesk — sample — memory.md[*]"
    assert window.editor.text() == (sample_project / MEMORY).read_text(encoding="utf-8")
    assert [window.tabs.tabText(i) for i in range(6)] == [
        "Memory", "Settings", "Backends", "Insights", "Prune review", "Audit"]
    assert window.status.backend_label.text() == "File System (file)"
    assert window.status.badges() == ["read", "write"]
    assert window.status.memory_label.text() == "Memory on"
    assert window.status.size_label.text() == window.editor.size_label.text()


def test_opens_the_real_fixture_and_every_view(make_window, real_project: Path) -> None:
    window = make_window(real_project)
    assert window.editor.text().encode("utf-8") == (real_project / MEMORY).read_bytes()
    for key in window.view_keys():
        view = window.show_view(key)
        assert view.isVisible()
        assert not isinstance(view, QLabel) or "failed" not in view.text()


def test_title_marker_follows_edits_and_save(qtbot, make_window, sample_project: Path) -> None:
    window = make_window(sample_project)
    assert not window.isWindowModified()
    qtbot.keyClicks(window.editor.text_edit, "hello")
    assert window.isWindowModified()
    window.actions_by_name["save"].trigger()
    assert not window.isWindowModified()
    assert (sample_project / MEMORY).read_text(encoding="utf-8").startswith("hello")
    qtbot.keyClicks(window.editor.text_edit, "x")
    window.actions_by_name["undo"].trigger()
    assert not window.isWindowModified()


def test_keyboard_shortcuts(qtbot, make_window, sample_project: Path) -> None:
    window = make_window(sample_project)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    text = window.editor.text_edit
    text.setFocus()
    qtbot.keyClick(text, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentIndex() == 2
    qtbot.keyClick(window, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentIndex() == 0
    assert window.editor.preview.isVisible()
    text.setFocus()
    qtbot.keyClick(text, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    assert not window.editor.preview.isVisible()
    qtbot.keyClick(text, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    assert window.editor.preview.isVisible()
    qtbot.keyClick(text, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert window.editor.find_bar.isVisible()
    qtbot.keyClick(window.editor.find_bar.field, Qt.Key.Key_Escape)
    qtbot.keyClicks(text, "abc")
    qtbot.keyClick(text, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert not window.editor.dirty
    assert (sample_project / MEMORY).read_text(encoding="utf-8").startswith("abc")
    names = {"open": "Ctrl+O", "save": "Ctrl+S", "undo": "Ctrl+Z", "redo": "Ctrl+Shift+Z", "find": "Ctrl+F",
             "reload": "F5", "quit": "Ctrl+Q", "preview": "Ctrl+E", "tab:5": "Ctrl+6"}
    for name, keys in names.items():
        assert window.actions_by_name[name].shortcut().toString() == keys


def test_close_with_unsaved_work_asks(qtbot, make_window, sample_project: Path) -> None:
    window = make_window(sample_project, answer="cancel")
    qtbot.keyClicks(window.editor.text_edit, "unsaved")
    assert not window.close()
    assert window.isVisible() and len(window.prompts) == 1
    window.answer = "save"
    assert window.close()
    assert (sample_project / MEMORY).read_text(encoding="utf-8").startswith("unsaved")


def test_close_discard_leaves_file_alone(qtbot, make_window, sample_project: Path) -> None:
    before = (sample_project / MEMORY).read_bytes()
    window = make_window(sample_project, answer="discard")
    qtbot.keyClicks(window.editor.text_edit, "thrown away")
    assert window.close()
    assert window.prompts and (sample_project / MEMORY).read_bytes() == before


def test_opening_another_project_asks_and_cancel_keeps_edits(qtbot, make_window, sample_project: Path,
                                                             real_project: Path) -> None:
    window = make_window(sample_project, answer="cancel")
    qtbot.keyClicks(window.editor.text_edit, "keep me")
    assert not window.open_project(real_project)
    assert window.session.root == sample_project.resolve()
    assert window.editor.text().startswith("keep me")
    window.answer = "discard"
    assert window.open_project(real_project)
    assert window.windowTitle() == "memdesk — real — memory.md[*]"
    assert not window.isWindowModified()


def test_open_rejects_a_file(make_window, sample_project: Path) -> None:
    window = make_window(sample_project)
    assert not window.open_project(sample_project / MEMORY)
    assert window.errors and "not a folder" in window.errors[0]


def test_recent_projects_remembered(make_window, sample_project: Path, real_project: Path, tmp_path: Path) -> None:
    window = make_window(sample_project)
    window.open_project(real_project)
    window.recent_menu.aboutToShow.emit()
    entries = [a.text() for a in window.recent_menu.actions()]
    assert entries == [str(real_project.resolve()), str(sample_project.resolve())]
    settings = QSettings(str(tmp_path / "recent.ini"), QSettings.Format.IniFormat)
    assert RecentProjects(settings).paths() == [real_project.resolve(), sample_project.resolve()]
    window.recent_menu.actions()[1].trigger()
    assert window.session.root == sample_project.resolve()


def test_recent_list_is_capped(tmp_path: Path) -> None:
    recent = RecentProjects(QSettings(str(tmp_path / "r.ini"), QSettings.Format.IniFormat))
    for i in range(MAX_RECENT + 3):
        (tmp_path / f"p{i}").mkdir()
        recent.add(tmp_path / f"p{i}")
    paths = recent.paths()
    assert len(paths) == MAX_RECENT and paths[0] == (tmp_path / f"p{MAX_RECENT + 2}").resolve()


def test_dropping_a_folder_opens_it(make_window, sample_project: Path, real_project: Path) -> None:
    window = make_window(sample_project)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(real_project))])
    event = QDropEvent(QPoint(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)
    assert window.session.root == real_project.resolve()


def test_add_view_factory_is_rebuilt_per_project(make_window, sample_project: Path, real_project: Path) -> None:
    window = make_window(sample_project)
    window.add_view("Notes", lambda session: QLabel(f"notes of {session.root.name}"))
    assert window.show_view("notes").text() == "notes of sample"
    window.open_project(real_project)
    assert window.view("notes").text() == "notes of real"
    assert window.actions_by_name[f"tab:{window.tabs.count() - 1}"].text() == "Go to Notes"
    count = window.tabs.count()
    window.add_view("Notes", lambda session: QLabel("replaced"))
    assert window.tabs.count() == count and window.view("notes").text() == "replaced"


def test_reload_asks_about_unsaved_edits(qtbot, make_window, sample_project: Path) -> None:
    window = make_window(sample_project, answer="cancel")
    qtbot.keyClicks(window.editor.text_edit, "draft ")
    window.actions_by_name["reload"].trigger()
    assert window.editor.text().startswith("draft ") and len(window.prompts) == 1
    window.answer = "discard"
    window.actions_by_name["reload"].trigger()
    assert window.editor.text() == (sample_project / MEMORY).read_text(encoding="utf-8")
    assert not window.isWindowModified()


def test_undo_redo_actions_follow_the_editor(qtbot, make_window, sample_project: Path) -> None:
    window = make_window(sample_project)
    undo, redo = window.actions_by_name["undo"], window.actions_by_name["redo"]
    assert not undo.isEnabled() and not redo.isEnabled()
    qtbot.keyClicks(window.editor.text_edit, "a")
    assert undo.isEnabled()
    undo.trigger()
    assert redo.isEnabled() and not window.isWindowModified()
    redo.trigger()
    assert window.editor.text().startswith("a") and window.isWindowModified()


def test_help_lists_every_shortcut_from_the_actions(qtbot, make_window, sample_project: Path) -> None:
    window = make_window(sample_project)
    window.view("backends")  # built views add their own actions
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    window.editor.text_edit.setFocus()
    qtbot.keyClick(window.editor.text_edit, Qt.Key.Key_F1)
    dialog = next(w for w in QApplication.topLevelWidgets() if w.objectName() == "shortcutsDialog" and w.isVisible())
    listed = {(row[1], row[2]) for row in dialog.rows}
    assert ("Save memory", "Ctrl+S") in listed and ("Go to line", "Ctrl+G") in listed
    assert ("Next section", "Ctrl+Down, Alt+Down") in listed
    assert ("Merge by hand", "Ctrl+Shift+M") in listed  # the conflict view's
    assert ("Use this backend", "Ctrl+Return, Ctrl+Enter") in listed  # the backends view's
    assert ("Keyboard shortcuts", "F1, Ctrl+/") in listed
    every = {(a.text(), a.shortcuts()[0].toString()) for a in window.findChildren(type(window.actions()[0]))
             if a.shortcuts() and a.text()}
    assert len(dialog.rows) >= len({t for t, _ in every}) - 1  # generated: nothing left out
    wheres = {row[0] for row in dialog.rows}
    assert {"File", "Edit", "View", "Conflict", "Backends", "Help"} <= wheres
    assert dialog.table.rowCount() == len(dialog.rows)
    dialog.close()


def test_use_this_backend_by_keyboard(qtbot, make_window, sample_project: Path) -> None:
    window = make_window(sample_project)
    view = window.show_view("backends")
    view.select(view.model.row_of("readonly"))
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    view.list.setFocus()
    qtbot.keyClick(view.list, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert window.session.backend.id == "readonly"
    assert '"memoryBackend": "readonly"' in (sample_project / ".fusion/memdesk/settings.json").read_text(encoding="utf-8")


def test_every_view_fits_800x600(qtbot, make_window, sample_project: Path) -> None:
    window = make_window(sample_project)
    window.resize(800, 600)
    for key in window.view_keys():
        window.show_view(key)
        qtbot.wait(50)
        assert window.width() == 800 and window.height() == 600, key  # no view forces the window wider
    view = window.show_view("backends")
    view.select(view.model.row_of("sqlite"))
    qtbot.wait(50)
    line = view.form.editor("database").line
    assert line.text() == ".fusion/memdesk/memory.db"
    assert line.cursorPosition() == 0  # the start of the path is what shows
    assert line.fontMetrics().horizontalAdvance(line.text()) < line.width() - 20  # and all of it fits
