"""Background operations: a callable runs on a worker thread and reports back on the GUI thread.

The callable never touches widgets. ``Operation.cancel()`` sets a flag the callable may poll through
the ``CancelToken`` it receives; results of a cancelled operation are dropped.

Lifetime: the worker reports through a parentless relay object that lives on the GUI thread and is
released there only after its last report is delivered, so a view (and its ``Operation``) may be
deleted while work is still running without the worker emitting through a deleted object. The
``Operation`` receives reports through its own methods, which Qt disconnects when it is destroyed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

log = logging.getLogger(__name__)

_live_relays: set[_Relay] = set()


class _Relay(QObject):
    done = Signal(object)
    failed = Signal(object)
    progress = Signal(int, str)
    ended = Signal()

    def __init__(self) -> None:
        super().__init__()  # no parent: it must outlive whoever started the work
        _live_relays.add(self)
        self.ended.connect(self._release)

    @Slot()
    def _release(self) -> None:
        _live_relays.discard(self)
        self.deleteLater()


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
        if not self._event.is_set():
            self._relay.progress.emit(int(percent), message)


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
        else:
            if not self._token.cancelled:
                self._relay.done.emit(result)
        finally:
            self._relay.ended.emit()  # queued after the report: the relay is freed once it is delivered


class Operation(QObject):
    """A running background call. Keep a reference while it runs (the views do)."""

    finished = Signal()

    def __init__(self, fn: Callable[[CancelToken], Any], on_done: Callable[[Any], None] | None,
                 on_error: Callable[[BaseException], None] | None,
                 on_progress: Callable[[int, str], None] | None, parent: QObject | None) -> None:
        super().__init__(parent)
        self._on_done, self._on_error, self._on_progress = on_done, on_error or _log_error, on_progress
        relay = _Relay()
        self.token = CancelToken(relay)
        self.running = True
        relay.done.connect(self._deliver_done)
        relay.failed.connect(self._deliver_error)
        relay.progress.connect(self._deliver_progress)
        self._runnable = _Runnable(fn, relay, self.token)

    @Slot(object)
    def _deliver_done(self, result: Any) -> None:
        self._finish(self._on_done, result)

    @Slot(object)
    def _deliver_error(self, exc: Any) -> None:
        self._finish(self._on_error, exc)

    @Slot(int, str)
    def _deliver_progress(self, percent: int, message: str) -> None:
        if self.running and self._on_progress is not None:
            self._on_progress(percent, message)

    def _finish(self, handler: Callable[[Any], None] | None, value: Any) -> None:
        if not self.running:
            return
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
