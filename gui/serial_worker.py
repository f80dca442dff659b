"""One serial worker per project: saves, merges, restores and backend switches run off the GUI thread.

The GUI never waits for the disk or the network (issue 19, item 6): a 1 MiB save held the GUI thread
43-77 ms, a backend switch 65-78 ms, and a postgres connect could hold it for its whole timeout.
:class:`SerialWorker` runs each such write on its own thread, one at a time in the order given
(writes to one store run one at a time, style guide 6), and reports on the GUI thread.

:meth:`SerialWorker.call` keeps the callers' synchronous shape (a save answers True or False; Save
All, quit and a backend switch wait for the answer before going on) without holding the GUI thread:
while the write runs, a local event loop keeps painting and firing timers (the window repaints, the
progress shows), and the operator's keys and clicks wait in the queue until it is done (none is
lost, none can start a second write in the middle of the first). ``busy`` says a write is under
way, so a watcher's re-read can wait for its end instead of seeing half of it. A call still running
after :data:`BUSY_CURSOR_AFTER_MS` shows the busy cursor until it ends (a read of a few milliseconds
does not flicker it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from PySide6.QtCore import QEventLoop, QObject, Qt, QThreadPool, QTimer, Signal
from PySide6.QtGui import QGuiApplication

from gui import gc_guard
from gui.tasks import run_in_background

T = TypeVar("T")
#: A call still running after this long shows the busy cursor.
BUSY_CURSOR_AFTER_MS = 150


class SerialWorker(QObject):
    """A one-thread pool: what it runs, it runs one after the other, never on the GUI thread."""

    busyChanged = Signal(bool, str)  # a write started (True, what) or ended (False, "")

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(1)
        self.pool.setExpiryTimeout(-1)  # keep the thread: a save should not pay for starting one
        self._depth = 0
        self._cursor_shown = False

    @property
    def busy(self) -> bool:
        """Whether a write is running (a caller waits in :meth:`call`)."""
        return self._depth > 0

    def call(self, fn: Callable[[], T], what: str = "Saving…", disable: Iterable[Any] = ()) -> T:
        """Run ``fn()`` on the worker and return its result (raise its exception), the GUI painting meanwhile.

        ``what`` is said in the status bar (``""``: nothing, for a short read); the widgets in ``disable``
        (an Apply button…) are disabled while it runs and enabled again after, as they were.
        """
        if threading.current_thread() is not threading.main_thread():
            return fn()  # already off the GUI thread (a test, a script): nothing to keep responsive
        disabled = [w for w in disable if w.isEnabled()]
        for widget in disabled:
            widget.setEnabled(False)
        outcome: dict[str, Any] = {}
        loop = QEventLoop()

        def done(value: Any) -> None:
            outcome["value"] = value
            loop.quit()

        def failed(exc: BaseException) -> None:
            outcome["error"] = exc
            loop.quit()

        self._depth += 1
        gc_guard.note_input()  # a collection on the GUI thread waits for the worker's pause, as for typing
        self.busyChanged.emit(True, what)
        cursor = QTimer()
        cursor.setSingleShot(True)
        cursor.timeout.connect(self._show_busy_cursor)
        try:
            op = run_in_background(lambda _token: fn(), done, failed, parent=self, pool=self.pool)
            if op.running and not outcome:
                cursor.start(BUSY_CURSOR_AFTER_MS)
                loop.exec(QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents)
            op.deleteLater()
        finally:
            for widget in disabled:
                widget.setEnabled(True)
            cursor.stop()
            self._depth -= 1
            gc_guard.note_input()
            if self._depth == 0 and self._cursor_shown:
                self._cursor_shown = False
                QGuiApplication.restoreOverrideCursor()
            self.busyChanged.emit(False, "")
        if "error" in outcome:
            raise outcome["error"]
        return outcome.get("value")  # type: ignore[return-value]

    def _show_busy_cursor(self) -> None:
        if self._depth and not self._cursor_shown:
            self._cursor_shown = True
            QGuiApplication.setOverrideCursor(Qt.CursorShape.BusyCursor)

    def shutdown(self) -> None:
        """Wait for the write under way (the project is closing)."""
        self.pool.waitForDone(30_000)
