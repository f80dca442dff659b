"""Shared GUI test setup: a screenshot of a view, styled as the app runs."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QWidget

from gui import gc_guard
from gui.resources import read_text


@pytest.fixture(autouse=True, scope="session")
def _collect_on_the_gui_thread(qapp):
    """As the app does (gui.gc_guard): a worker thread never runs the collector over Qt objects."""
    gc_guard.install(qapp)


@pytest.fixture
def screenshot(qapp, qtbot) -> Iterator[Callable[[QWidget, str], None]]:
    """Apply the application's style sheet (as the main window runs with it) and return ``save(view, name)``.

    ``save`` checks the view renders 1280 px wide and, when ``$MEMDESK_SCREENSHOTS`` is set, writes it
    to ``$MEMDESK_SCREENSHOTS/<name>.png``.
    """

    def save(view: QWidget, name: str) -> None:
        qtbot.wait(100)  # let pending layout requests run
        folder = os.environ.get("MEMDESK_SCREENSHOTS")
        image = view.grab()
        assert not image.isNull() and image.width() == 1280
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            assert image.save(str(Path(folder) / f"{name}.png"))

    qapp.setStyleSheet(read_text("style.qss"))
    yield save
    qapp.setStyleSheet("")


@pytest.fixture
def open_editor(qtbot):
    """Open a project folder in a shown MemoryEditor (``size`` default 1000x700); closed and drained at teardown."""
    from PySide6.QtCore import QThreadPool

    from gui.editor.memory_editor import MemoryEditor
    from gui.session import ProjectSession

    opened: list[tuple[ProjectSession, MemoryEditor]] = []

    def make(root: Path, size: tuple[int, int] = (1000, 700)) -> MemoryEditor:
        session = ProjectSession(root)
        editor = MemoryEditor(session)
        qtbot.addWidget(editor)
        editor.resize(*size)
        editor.show()
        opened.append((session, editor))
        return editor

    yield make
    for session, editor in opened:
        editor.shutdown()
        session.close()
    QThreadPool.globalInstance().waitForDone(10_000)


@pytest.fixture
def window(qtbot, sample_project: Path, tmp_path: Path, monkeypatch):
    """The sample project open in a shown window, its search cache in the test's folder (a test file's own
    ``window`` fixture takes its place)."""
    from PySide6.QtCore import QThreadPool

    from gui.main_window import MainWindow
    from gui.recent import RecentProjects

    monkeypatch.setenv("MEMDESK_CACHE_DIR", str(tmp_path / "cache"))
    win = MainWindow(sample_project, recent=RecentProjects(persist=False))
    win.confirm_discard = lambda: "discard"
    qtbot.addWidget(win)
    win.show()
    yield win
    win.close()
    QThreadPool.globalInstance().waitForDone(5000)


@pytest.fixture
def sample_window(qtbot, tmp_path: Path, sample_project: Path):
    """The sample project open in a shown window that watches its memory file."""
    from PySide6.QtCore import QSettings, QThreadPool

    from gui.main_window import MainWindow
    from gui.recent import RecentProjects

    win = MainWindow(sample_project, recent=RecentProjects(QSettings(str(tmp_path / "r.ini"),
                                                                    QSettings.Format.IniFormat)))
    win.confirm_discard = lambda: "discard"
    qtbot.addWidget(win)
    win.show()
    assert win.watcher.active
    yield win
    win.close()
    QThreadPool.globalInstance().waitForDone(5000)


@pytest.fixture
def open_budget_window(qtbot, tmp_path: Path, user_config_dir: Path):
    """Open a project in a shown main window once its load budget is computed; closed and drained at teardown."""
    from PySide6.QtCore import QSettings, QThreadPool

    from gui.main_window import MainWindow
    from gui.recent import RecentProjects

    windows: list[MainWindow] = []

    def make(root: Path, size: tuple[int, int] = (1200, 800)) -> MainWindow:
        win = MainWindow(root, recent=RecentProjects(QSettings(str(tmp_path / "r.ini"), QSettings.Format.IniFormat)))
        win.confirm_discard = lambda: "discard"
        qtbot.addWidget(win)
        win.resize(*size)
        win.show()
        windows.append(win)
        qtbot.waitUntil(lambda: win.editor.budget.compute_count > 0 and not win.editor.budget.pending(),
                        timeout=5000)
        return win

    yield make
    for win in windows:
        win.close()
    QThreadPool.globalInstance().waitForDone(5000)


@pytest.fixture
def desk(qtbot, layered_project, tmp_path, monkeypatch):
    """The layered sample open in a shown window (quick open, find, activity… tests); errors collected."""
    from gui.main_window import MainWindow
    from gui.recent import RecentProjects

    monkeypatch.setenv("MEMDESK_CACHE_DIR", str(tmp_path / "cache"))
    win = MainWindow(recent=RecentProjects(persist=False))
    qtbot.addWidget(win)
    win.confirm_discard = lambda: "discard"
    errors: list[str] = []
    win.show_error = errors.append
    win.errors = errors
    win.resize(1200, 780)
    win.show()
    qtbot.waitExposed(win)
    win.open_project(layered_project)
    yield win
    win._close_project()
