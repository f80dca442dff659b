"""Python's cyclic garbage collector runs on the GUI thread only.

Left automatic, the collector runs in whichever thread happens to allocate when its threshold is
crossed: a psycopg pool worker, the history thread, a watchdog observer. When the garbage it finds holds
Qt objects, their C++ destructors then run on that thread: ``QObject::~QObject`` takes Qt's signal-slot
lock and asks shiboken for the GIL, while the GUI thread, holding the GIL, waits for that same lock in a
``connect``. Both wait for ever. It was seen here: the postgres live-window test hung with a pool worker
in ``gc_collect_main`` → ``~QObject`` → ``Shiboken::GilState::acquire`` and the main thread in
``QObjectPrivate::connectImpl`` (py-spy ``--native``).

The known cure for PySide/PyQt programs with threads: switch automatic collection off and collect on a
GUI-thread timer when the counts pass the same thresholds the automatic collector uses. Reference
counting still frees everything outside cycles at once; only cycles wait, at most one tick.

A full collection (the oldest generation) walks every object the program holds: with a 1 MiB
document open it held the GUI thread for tens of milliseconds, and the thresholds alone asked for one
every few seconds of saving. CPython's own collector makes full collections rare (only once the
objects promoted since the last one are a quarter of those that survived it); here a full collection
runs at most every :data:`FULL_EVERY_S` seconds, and the younger generations in between.
"""

from __future__ import annotations

import gc
import time

from PySide6.QtCore import QObject, QTimer

#: How often the GUI thread looks at the collector's counts (cheap: three integers).
INTERVAL_MS = 500
#: The least time between two full collections (cycles that reached the oldest generation wait that long).
FULL_EVERY_S = 60.0


class GuiThreadCollector(QObject):
    """Collects cyclic garbage on the thread that owns it (the GUI thread), never on another."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        gc.disable()
        self._last_full = time.monotonic()
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.check)
        self._timer.start()

    def check(self) -> int:
        """Collect the oldest generation whose count passed its threshold; the number of objects freed."""
        counts, thresholds = gc.get_count(), gc.get_threshold()  # read now: the app may retune them
        for generation in (2, 1, 0):
            if counts[generation] > thresholds[generation]:
                if generation == 2:
                    if time.monotonic() - self._last_full < FULL_EVERY_S:
                        return gc.collect(1)
                    self._last_full = time.monotonic()
                return gc.collect(generation)
        return 0


def install(app: QObject) -> GuiThreadCollector:
    """Collect cyclic garbage on ``app``'s thread from now on (once per application)."""
    existing = app.findChild(GuiThreadCollector)
    return existing if isinstance(existing, GuiThreadCollector) else GuiThreadCollector(app)
