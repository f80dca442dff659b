"""Fusion's dream run in another process while a real window is open (issue 21, must-have 3): History keeps
the text before of all three documents it touched, not only the open one; the Consolidation view shows
"3 documents rewritten ... by another program"; Undo this run restores the bytes through the pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, Qt, QThreadPool

from core.storage.history import versions as history
from core.storage.noticed import EXTERNAL_CHANGE
from tests.core.fusion_dream_process import MEM, TOUCHED, run_fusion_dream

WAIT_MS = 20_000


@pytest.fixture
def window(qtbot, layered_project: Path, user_config_dir: Path):
    from gui.main_window import MainWindow
    from gui.recent import RecentProjects

    for path in layered_project.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    win = MainWindow(recent=RecentProjects(persist=False))
    qtbot.addWidget(win)
    win.confirm_discard = lambda: "discard"
    win.resize(1400, 860)
    win.show()
    qtbot.waitExposed(win)
    win.open_project(layered_project)
    yield win
    win._close_project()
    QThreadPool.globalInstance().waitForDone(10_000)


def _kept(root: Path) -> dict[str, list[bytes]]:
    out: dict[str, list[bytes]] = {}
    for v in history.list_versions(root, None):
        if v.source == EXTERNAL_CHANGE:
            out.setdefault(v.path, []).append(history.get_version(root, v.id)[1].encode("utf-8"))
    return out


def test_a_dream_run_by_another_process_is_kept_whole_shown_as_one_run_and_undone(qtbot, window,
                                                                                layered_project):
    root = layered_project
    session = window.session
    assert session.current_path == f"{MEM}/MEMORY.md"  # only MEMORY.md is open; the note and DREAMS.md are not
    qtbot.waitUntil(lambda: session._notice_watch.held(f"{MEM}/DREAMS.md") is not None, timeout=WAIT_MS)
    before = run_fusion_dream(root)
    qtbot.waitUntil(lambda: set(_kept(root)) == set(TOUCHED), timeout=WAIT_MS)
    assert _kept(root) == {rel: [before[rel]] for rel in TOUCHED}  # byte-exact, one version each
    qtbot.waitUntil(lambda: any("3 documents rewritten by another program" in n.text
                                for n in window.status.notifications.items), timeout=WAIT_MS)

    hist = window.show_view("history")
    qtbot.waitUntil(lambda: hist.files.findText(f"{MEM}/DREAMS.md") >= 0, timeout=WAIT_MS)
    hist.files.setCurrentIndex(hist.files.findText(f"{MEM}/2026-08-19.md"))
    shown = [hist.model.data(hist.model.index(r, c, QModelIndex())) for r in range(hist.model.rowCount())
             for c in range(hist.model.columnCount())]
    assert any("another program" in str(s) for s in shown), shown

    view = window.show_view("consolidation")
    labels = [view.picker.itemText(i) for i in range(view.picker.count())]
    row = next(i for i, text in enumerate(labels) if "3 documents rewritten at" in text
               and "by another program" in text)
    view.picker.setCurrentIndex(row)
    assert view.stage_button.text() == "Undo this run…"
    qtbot.mouseClick(view.stage_button, Qt.MouseButton.LeftButton)
    assert view.proposal.summary.startswith("Undo: 3 documents rewritten")
    view.allow_loss.setChecked(True)  # undoing drops what the run added to DREAMS.md and MEMORY.md: consented
    qtbot.mouseClick(view.apply_button, Qt.MouseButton.LeftButton)
    assert "applied" in view.outcome.text(), (view.outcome.text(), view.banner.text())
    for rel in TOUCHED:
        assert (root / rel).read_bytes() == before[rel], rel
    qtbot.wait(2500)  # the watch sees memdesk's own undo: not another program's run
    assert all(len(v) == 1 for v in _kept(root).values())


def test_closing_the_project_stops_every_watcher_and_an_inotify_limit_does_not_stop_opening(
        qtbot, layered_project, user_config_dir, monkeypatch):
    import errno

    from watchdog.observers import Observer

    from gui.main_window import MainWindow
    from gui.recent import RecentProjects

    win = MainWindow(recent=RecentProjects(persist=False))
    qtbot.addWidget(win)
    win.show()
    win.open_project(layered_project)
    notice = win.session._notice_watch
    win._close_project()  # each observer holds an inotify instance: a window closed must give them back
    assert not win.watcher.active and not win.documents_watcher.active and notice._thread is None

    def full(*_a, **_k):
        raise OSError(errno.EMFILE, "inotify instance limit reached")

    monkeypatch.setattr(Observer, "schedule", full)  # what a machine out of inotify instances answers
    assert win.open_project(layered_project)  # editing still works; changes are still kept by the notice watch
    assert not win.watcher.active and not win.documents_watcher.active
    assert win.session._notice_watch is not None
    win._close_project()
    QThreadPool.globalInstance().waitForDone(10_000)
