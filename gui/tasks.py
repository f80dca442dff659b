"""Background operations: a callable runs on a worker thread and reports back on the GUI thread.

The callable never touches widgets. ``Operation.cancel()`` sets a flag the callable may poll through
the ``CancelToken`` it receives; results of a cancelled operation are dropped.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

log = logging.getLogger(__name__)


class CancelToken:
    """Polled by long work to stop early; ``progress`` reports a 0..100 figure and a message."""

    def __init__(self, relay: _Relay) -> None:
        self._event = threading.Event()
        self._relay = relay

    @property
    def cancelled(self) -> bool:
        """True once :meth:`Operation.cancel` was called."""
        return self._event.is_set()

    def cancel(self) -> None:
        """Ask the work to stop."""
        self._event.set()

    def progress(self, percent: int, message: str = "") -> None:
        """Report progress to the GUI thread."""
        self._relay.progress.emit(int(percent), message)


class _Relay(QObject):
    done = Signal(object)
    failed = Signal(object)
    progress = Signal(int, str)


class _Runnable(QRunnable):
    def __init__(self, fn: Callable[[CancelToken], Any], relay: _Relay, token: CancelToken) -> None:
        super().__init__()
        self._fn, self._relay, self._token = fn, relay, token
        self.setAutoDelete(True)

    def run(self) -> None:
        try:
            result = self._fn(self._token)
        except BaseException as exc:  # reported on the GUI thread, never lost
            if not self._token.cancelled:
                self._relay.failed.emit(exc)
            return
        if not self._token.cancelled:
            self._relay.done.emit(result)


class Operation(QObject):
    """A running background call. Keep a reference while it runs (the views do)."""

    finished = Signal()

    def __init__(self, fn: Callable[[CancelToken], Any], on_done: Callable[[Any], None] | None,
                 on_error: Callable[[BaseException], None] | None,
                 on_progress: Callable[[int, str], None] | None, parent: QObject | None) -> None:
        super().__init__(parent)
        self._relay = _Relay(self)
        self.token = CancelToken(self._relay)
        self.running = True
        self._relay.done.connect(lambda r: self._finish(on_done, r))
        self._relay.failed.connect(lambda e: self._finish(on_error or _log_error, e))
        if on_progress is not None:
            self._relay.progress.connect(on_progress)
        self._runnable = _Runnable(fn, self._relay, self.token)

    def _finish(self, handler: Callable[[Any], None] | None, value: Any) -> None:
        self.running = False
        if handler is not None:
            handler(value)
        self.finished.emit()

    def cancel(self) -> None:
        """Cancel: the callable sees ``token.cancelled`` and its result is dropped."""
        self.token.cancel()
        if self.running:
            self.running = False
            self.finished.emit()


def _log_error(exc: BaseException) -> None:
    log.error("background operation failed: %s", exc)


def run_in_background(
    fn: Callable[[CancelToken], Any],
    on_done: Callable[[Any], None] | None = None,
    on_error: Callable[[BaseException], None] | None = None,
    on_progress: Callable[[int, str], None] | None = None,
    parent: QObject | None = None,
    pool: QThreadPool | None = None,
) -> Operation:
    """Run ``fn(token)`` on a worker thread; handlers run on the GUI thread."""
    op = Operation(fn, on_done, on_error, on_progress, parent)
    (pool or QThreadPool.globalInstance()).start(op._runnable)
    return op
