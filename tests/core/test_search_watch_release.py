"""The search watcher's inotify instance is released when the watcher goes, closed or not.

The per-user limit is 128 instances; a long session (or test run) that drops search services without
shutting them down must not reach it ("OSError: [Errno 24] inotify instance limit reached")."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

from core.search import watch


def inotify_fds() -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += "inotify" in os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass
    return count


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="Linux /proc needed to count inotify instances")
def test_a_dropped_watcher_releases_its_inotify_instance(tmp_path: Path):
    (tmp_path / ".fusion").mkdir()
    before = inotify_fds()
    watchers = [watch.open_watcher(tmp_path) for _ in range(3)]
    if watchers[0] is None:
        pytest.skip("inotify unavailable here")
    assert inotify_fds() == before + 3
    watchers[0].close()  # type: ignore[union-attr]
    watchers[0].close()  # type: ignore[union-attr]  # idempotent
    assert inotify_fds() == before + 2
    del watchers
    gc.collect()
    assert inotify_fds() == before
