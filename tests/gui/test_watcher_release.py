"""A window deleted after a refused close (unsaved edits kept) releases its watchers' inotify instances.

The per-user limit is 128 instances; a long session or test run that deletes such windows must not
reach it ("OSError: [Errno 24] inotify instance limit reached")."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QEvent

from gui.main_window import MainWindow
from gui.recent import RecentProjects


def inotify_fds() -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += "inotify" in os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass
    return count


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="Linux /proc needed to count inotify instances")
def test_a_window_deleted_after_a_refused_close_releases_its_inotify_instances(qtbot, sample_project: Path):
    before = inotify_fds()
    window = MainWindow(sample_project, recent=RecentProjects(persist=False))
    window.show()
    qtbot.wait(50)
    assert window.watcher.active and window.documents_watcher.active
    assert inotify_fds() > before
    window.maybe_discard = lambda *_args: False  # type: ignore[method-assign]  # the operator keeps the edits
    assert not window.close() and window.isVisible()
    assert window.watcher.active  # a refused close changes nothing
    window.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    deadline = time.monotonic() + 5
    while inotify_fds() > before and time.monotonic() < deadline:
        qtbot.wait(20)
    assert inotify_fds() == before
