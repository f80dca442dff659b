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

A collection also waits while the operator types (:func:`note_input`, called by the text fields that take
typing): the young generation then holds what the workers are busy with (a firewall scan's entries and
findings), and one collection over it took 8-38 ms of the GUI thread on the bench's 1 MiB memory
(``python -m bench keystroke``), landing between two keystrokes. It runs once typing has paused for
:data:`QUIET_MS`, and never later than :data:`MAX_DEFER_MS` after it was first due.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

#: How often the GUI thread looks at the collector's counts (cheap: three integers and the clock).
INTERVAL_MS = 100
#: The least time between two full collections (cycles that reached the oldest generation wait that long).
FULL_EVERY_S = 60.0
#: A due collection waits until no key was typed for this long...
QUIET_MS = 250
#: ...but no longer than this after it was first due (cyclic garbage is freed at most this late).
MAX_DEFER_MS = 5_000

_last_input = [float("-inf")]


def note_input(clock: Callable[[], float] = time.monotonic) -> None:
    """The operator just typed: a due collection waits for a pause (cheap enough for every key event)."""
    _last_input[0] = clock()


class GuiThreadCollector(QObject):
    """Collects cyclic garbage on the thread that owns it (the GUI thread), never on another."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(parent)
        gc.disable()
        self._clock = clock
        self._last_full = clock()
        self._due_since: float | None = None  # when a collection first came due while typing went on
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.check)
        self._timer.start()

    def check(self) -> int:
        """Collect the oldest generation whose count passed its threshold, unless the operator is typing;
        the number of objects freed."""
        counts, thresholds = gc.get_count(), gc.get_threshold()  # read now: the app may retune them
        generation = next((g for g in (2, 1, 0) if counts[g] > thresholds[g]), None)
        if generation is None:
            return 0
        now = self._clock()
        if self._due_since is None:
            self._due_since = now
        if now - _last_input[0] < QUIET_MS / 1000 and now - self._due_since < MAX_DEFER_MS / 1000:
            return 0  # typing: wait for a pause
        self._due_since = None
        if generation == 2:
            if now - self._last_full < FULL_EVERY_S:
                return gc.collect(1)
            self._last_full = now
        return gc.collect(generation)


def install(app: QObject) -> GuiThreadCollector:
    """Collect cyclic garbage on ``app``'s thread from now on (once per application)."""
    existing = app.findChild(GuiThreadCollector)
    return existing if isinstance(existing, GuiThreadCollector) else GuiThreadCollector(app)
