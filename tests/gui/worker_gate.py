"""Hold a project's serial worker on an event the test owns, and watch the GUI thread meanwhile.

``held(worker)`` occupies the worker's one thread until the test releases it, so an action queued behind
it waits; ``run_while_held`` runs that action (which waits on the worker, the GUI loop running), counts a
QTimer's ticks on the GUI thread while it waits, lets ``seen()`` record what the view shows, then releases
the worker. A GUI thread that waited for the disk itself would tick zero times.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QTimer

from gui.serial_worker import SerialWorker

TICKS = 8  # GUI-thread timer ticks seen while the worker is held before it is released


def held(worker: SerialWorker) -> threading.Event:
    """Occupy ``worker``'s thread until the returned event is set."""
    gate, started = threading.Event(), threading.Event()

    def block() -> None:
        started.set()
        gate.wait(60)

    worker.pool.start(block)
    assert started.wait(10)
    return gate


def run_while_held(worker: SerialWorker, action: Callable[[], Any], seen: Callable[[], bool],
                   ) -> tuple[Any, int, bool]:
    """Run ``action()`` with the worker held; release it once the GUI has ticked :data:`TICKS` times and
    ``seen()`` holds (or after 2,000 ticks). Returns the action's result, the ticks and whether ``seen()`` held."""
    gate = held(worker)
    ticks = [0]
    saw = [False]
    timer = QTimer()
    timer.setInterval(5)

    def tick() -> None:
        ticks[0] += 1
        if not saw[0] and worker.busy and seen():
            saw[0] = True
        if (ticks[0] >= TICKS and saw[0]) or ticks[0] > 2000:
            gate.set()

    timer.timeout.connect(tick)
    timer.start()
    try:
        result = action()
    finally:
        timer.stop()
        gate.set()
    return result, ticks[0], saw[0]
