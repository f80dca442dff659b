"""Cyclic garbage holding Qt objects is collected on the GUI thread, never on a worker (gui.gc_guard)."""

from __future__ import annotations

import gc
import threading

from PySide6.QtCore import QObject, QThread

from gui import gc_guard
from gui.app import create_app


class _Tracked(QObject):
    """A QObject whose destruction records the thread it ran on."""

    def __init__(self, seen: list[object]) -> None:
        super().__init__()
        self.destroyed.connect(lambda: seen.append(QThread.currentThread()))
        self.cycle = self  # a reference cycle: only the cyclic collector frees it


def test_the_app_turns_automatic_collection_off_and_collects_on_its_timer(qapp, qtbot):
    assert create_app() is qapp
    assert qapp.findChildren(gc_guard.GuiThreadCollector) and not gc.isenabled()
    seen: list[object] = []
    _Tracked(seen)
    garbage_makers = [threading.Thread(target=lambda: [[[] for _ in range(50)] for _ in range(2_000)])
                      for _ in range(4)]
    for thread in garbage_makers:  # allocations on workers would have triggered a collection there
        thread.start()
    for thread in garbage_makers:
        thread.join()
    assert seen == []
    gc.set_threshold(1, 1, 1)
    try:
        qtbot.waitUntil(lambda: bool(seen), timeout=3_000)
    finally:
        gc.set_threshold(700, 10, 10)
    assert seen == [qapp.thread()]


def test_check_collects_only_past_a_threshold(qapp):
    collector = gc_guard.install(qapp)
    assert gc_guard.install(qapp) is collector  # one per application
    gc.collect()
    assert collector.check() == 0


def test_a_due_collection_waits_while_the_operator_types_but_not_for_ever(qapp, monkeypatch):
    monkeypatch.setattr(gc_guard, "_last_input", [float("-inf")])
    now = [1000.0]
    collector = gc_guard.GuiThreadCollector(interval_ms=3_600_000, clock=lambda: now[0])  # driven by hand
    seen: list[object] = []
    old = gc.get_threshold()
    try:
        gc.collect()
        gc.set_threshold(1, 1, 1)
        _Tracked(seen)
        gc_guard.note_input(clock=lambda: now[0])  # a key, just now
        assert collector.check() == 0 and seen == []  # due, but the operator is typing
        now[0] += (gc_guard.QUIET_MS - 50) / 1000
        gc_guard.note_input(clock=lambda: now[0])  # typing goes on
        assert collector.check() == 0 and seen == []
        now[0] += gc_guard.QUIET_MS / 1000 + 0.01  # a pause
        assert collector.check() > 0 and seen == [qapp.thread()]

        _Tracked(seen)  # typing without a pause: collected once the longest wait has passed
        start = now[0]
        for _ in range(gc_guard.MAX_DEFER_MS // 100 + 1):
            gc_guard.note_input(clock=lambda: now[0])
            if collector.check():
                break
            now[0] += 0.1
        assert len(seen) == 2 and abs(now[0] - start - gc_guard.MAX_DEFER_MS / 1000) < 0.11
    finally:
        gc.set_threshold(*old)
        collector.deleteLater()


def test_full_collections_are_spaced_out(qapp, monkeypatch):
    """A full collection walks the whole heap (tens of ms with a 1 MiB document open): at most one per
    FULL_EVERY_S; past the oldest threshold in between, the younger generations are collected."""
    collector = gc_guard.install(qapp)
    monkeypatch.setattr(gc_guard, "_last_input", [float("-inf")])  # no key typed just before (a test's typing)
    calls: list[int] = []
    monkeypatch.setattr(gc_guard.gc, "collect", lambda generation=2: calls.append(generation) or 0)
    monkeypatch.setattr(gc_guard.gc, "get_count", lambda: (800, 20, 20))
    monkeypatch.setattr(collector, "_last_full", gc_guard.time.monotonic() - gc_guard.FULL_EVERY_S - 1)
    collector.check()
    collector.check()
    assert calls == [2, 1]
    monkeypatch.setattr(collector, "_last_full", gc_guard.time.monotonic() - gc_guard.FULL_EVERY_S - 1)
    collector.check()
    assert calls == [2, 1, 2]
