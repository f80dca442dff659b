"""The search watcher's inotify instance is released when the watcher goes, closed or not.

The per-user limit is 128 instances; a long session (or test run) that drops search services without
shutting them down must not reach it ("OSError: [Errno 24] inotify instance limit reached")."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

from core.search import watch


def inotify_fds() -> set[str]:
    """The process's open inotify descriptors."""
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            if "inotify" in os.readlink(f"/proc/self/fd/{fd}"):
                found.add(fd)
        except OSError:
            pass
    return found


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="Linux /proc needed to count inotify instances")
def test_a_dropped_watcher_releases_its_inotify_instance(tmp_path: Path):
    (tmp_path / ".fusion").mkdir()
    gc.collect()  # an earlier test's dropped watcher would otherwise go mid-test and skew the count
    before = inotify_fds()
    watchers = [watch.open_watcher(tmp_path) for _ in range(3)]
    if watchers[0] is None:
        pytest.skip("inotify unavailable here")
    ours = inotify_fds() - before
    assert len(ours) == 3
    watchers[0].close()  # type: ignore[union-attr]
    watchers[0].close()  # type: ignore[union-attr]  # idempotent
    assert len(inotify_fds() & ours) == 2
    del watchers
    gc.collect()
    assert not inotify_fds() & ours
