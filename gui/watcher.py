"""Watches the memory for changes made by other programs (agents, Fusion, an editor, another host).

:class:`MemoryFileWatcher`: a watchdog observer watches the file's folder (not recursively); events for
that one file are relayed to the GUI thread and debounced, so a burst of writes gives one ``changed``
signal. The receiver compares the disk content with what it has, which is how our own saves are told apart.

:class:`BackendChangeWatcher`: a backend that announces committed changes itself (``postgres``:
``LISTEN``/``NOTIFY``, through its ``watch(callback)``) is subscribed to instead of polled. The callback
runs on the backend's feed thread; the change is relayed to the GUI thread by a queued Qt signal,
changes this backend made itself (``own``) are dropped, and a burst is coalesced briefly so an
append storm re-reads a document once. After a lost connection (``resync``) everything is re-read.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from gui.serial_worker import SerialWorker

log = logging.getLogger(__name__)

DEBOUNCE_MS = 150
# Reads (ours included) give opened/closed_no_write events; only these mean the content may differ.
_CHANGE_EVENTS = frozenset({"created", "modified", "moved", "deleted", "closed"})


class Relay(QObject):
    poked = Signal()


class _Handler:
    """A watchdog event handler that pokes the relay for events about one file."""

    def __init__(self, target: Path, relay: Relay) -> None:
        self._target = os.path.normcase(os.fspath(target))
        self._relay = relay

    def dispatch(self, event: object) -> None:
        """Called by watchdog on its thread for every event in the folder."""
        if getattr(event, "is_directory", False) or getattr(event, "event_type", "") not in _CHANGE_EVENTS:
            return
        paths = (getattr(event, "src_path", ""), getattr(event, "dest_path", ""))
        if any(p and os.path.normcase(os.fsdecode(p)) == self._target for p in paths):
            self._relay.poked.emit()


class ObservedFolder(QObject):
    """A watchdog observer over one folder whose handler pokes a relay; ``changed`` is emitted on the GUI
    thread, debounced. Subclasses say what is watched and which events count (their handler)."""

    changed = Signal()

    def __init__(self, debounce_ms: int, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._relay = Relay(self)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._relay.poked.connect(self._timer.start)
        self._timer.timeout.connect(self.changed)
        self._observer: object | None = None
        #: Starts and stops observers off the GUI thread (an inotify watch lists the folders it watches; a
        #: stop joins the observer's threads), one after the other.
        self._worker = SerialWorker(self)
        self._worker.pool.setExpiryTimeout(30_000)
        self._generation = 0  # a watch() or stop() made while a start ran on the worker wins over it
        # The running observer, also in reach of the hook below: a watcher deleted without stop() (its
        # window deleted after a refused close) must not keep the observer's thread and inotify instance.
        self._running: list[Any] = []
        self.destroyed.connect(functools.partial(_stop_observers, self._running))

    def _off_gui(self, fn: Any) -> Any:
        """``fn()`` on this watcher's worker (it stats, lists or resolves the folder), the GUI painting meanwhile."""
        return self._worker.call(fn, "")

    def _observe(self, handler: object, folder: Path, *, recursive: bool, refused: str,
                 check: Any = None) -> bool:
        """Start an observer of ``folder`` with ``handler`` on the worker (after ``check()``, if given, says
        True); False, ``refused`` logged, when it cannot start."""
        generation = self._generation

        def start() -> Any:
            from watchdog.observers import Observer  # imported late: keeps it off the start-up path

            if check is not None and not check():
                return None
            try:  # inotify creates its instance in Observer(): its limits are met here too
                observer = Observer()
                observer.schedule(handler, os.fspath(folder.resolve()), recursive=recursive)  # type: ignore[arg-type]
                observer.daemon = True
                observer.start()  # a recursive watch lists every folder below: here, off the GUI thread
            except (OSError, RuntimeError) as exc:  # inotify limits, a vanished folder, a link loop: editing still works
                log.warning("%s: %s", refused, exc)
                return None
            return observer

        observer = self._off_gui(start)
        if observer is None:
            return False
        if generation != self._generation:  # watched again or stopped while it started: that call wins
            self._worker.pool.start(functools.partial(_stop_and_join, observer))
            return False
        self._observer = observer
        self._running.append(observer)
        return True

    def _stop_observer(self) -> None:
        self._generation += 1
        self._timer.stop()
        observer, self._observer = self._observer, None
        self._running.clear()
        if observer is not None:  # joined on the worker: the GUI thread does not wait for its threads
            self._worker.pool.start(functools.partial(_stop_and_join, observer))

    @property
    def active(self) -> bool:
        """Whether something is being watched."""
        return self._observer is not None


def _stop_and_join(observer: Any) -> None:
    observer.stop()
    observer.join(timeout=2)


def _stop_observers(running: list[Any], *_destroyed: object) -> None:
    """Stop the observers of a watcher that is being destroyed (its Qt object, timer included, is gone)."""
    for observer in running:
        observer.stop()
    running.clear()


class MemoryFileWatcher(ObservedFolder):
    """Emits ``changed`` (on the GUI thread, debounced) when the watched file changes on disk."""

    def __init__(self, debounce_ms: int = DEBOUNCE_MS, parent: QObject | None = None) -> None:
        super().__init__(debounce_ms, parent)
        self.path: Path | None = None

    def watch(self, path: Path | None) -> bool:
        """Watch ``path`` (replacing what was watched); False when its folder does not exist."""
        if path is not None and path == self.path and self._observer is not None \
                and self._off_gui(path.parent.is_dir):
            return True  # already watched (a settings change): no observer thread to stop and join here
        self.stop()
        if path is None:
            return False
        generation = self._generation

        def target() -> Path | None:  # stats and resolves: on the worker
            if not path.parent.is_dir():
                return None
            try:
                return path.resolve()
            except (OSError, RuntimeError):  # a symbolic link loop (RuntimeError on Python 3.11): nothing to watch
                return None

        real = self._off_gui(target)
        if real is None or generation != self._generation:
            return False
        if not self._observe(_Handler(real, self._relay), path.parent, recursive=False,
                             refused=f"cannot watch {path} for changes"):
            return False
        self.path = path
        return True

    def stop(self) -> None:
        """Stop watching."""
        self.path = None
        self._stop_observer()


#: How long changes announced by the backend are gathered before the GUI re-reads (well under the 300 ms
#: an operator would notice; an append storm from many hosts still costs one read per document).
COALESCE_MS = 20
RESYNC = ""  # the path ``changed`` carries after a resync: anything may have changed


class _ChangeRelay(QObject):
    """Lives on the GUI thread; emitting it from the feed thread queues the call there."""

    arrived = Signal(str, bool)  # path (RESYNC when resync), resync


def _stop_feed(handle: Any) -> None:
    try:
        handle.stop()
    except Exception as exc:
        log.warning("stopping the change feed failed: %s", exc)


class BackendChangeWatcher(QObject):
    """Emits ``changed(path)`` on the GUI thread for another host's committed change (``""``: re-read all)."""

    changed = Signal(str)

    def __init__(self, coalesce_ms: int = COALESCE_MS, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._relay = _ChangeRelay(self)
        self._relay.arrived.connect(self._on_arrived)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(coalesce_ms)
        self._timer.timeout.connect(self._flush)
        self._pending: set[str] = set()
        self._handle: Any = None
        self._live = threading.Event()  # cleared before the handle stops: a late callback emits nothing
        self.error: str | None = None
        # Subscribing connects to the server (postgres LISTEN) and stopping waits for the feed's thread (up
        # to its 250 ms poll): both on this worker, never on the GUI thread, in the order asked.
        self._worker = SerialWorker(self)

    def watch(self, backend: object | None) -> bool:
        """Subscribe to ``backend``'s changes (replacing the previous subscription); False when it has none."""
        self.stop()
        subscribe = getattr(backend, "watch", None)
        if backend is None or not callable(subscribe):
            return False
        self._live.set()
        try:
            self._handle = self._worker.call(lambda: subscribe(self._on_change), "")
        except Exception as exc:  # server gone since the project opened: editing still works, the file watcher too
            self._live.clear()
            self.error = f"live changes from other hosts are off: {exc}"
            log.warning("%s", self.error)
            return False
        self.error = None
        return True

    def _on_change(self, change: Any) -> None:
        """On the feed thread: relay what another host committed (own writes are already on screen)."""
        if not self._live.is_set() or getattr(change, "own", False):
            return
        resync = bool(getattr(change, "resync", False))
        path = getattr(change, "path", None)
        if not resync and not isinstance(path, str):
            return
        self._relay.arrived.emit(RESYNC if resync else path, resync)

    def _on_arrived(self, path: str, resync: bool) -> None:
        if not self._live.is_set():
            return
        self._pending.add(RESYNC if resync else path)
        if not self._timer.isActive():
            self._timer.start()

    def _flush(self) -> None:
        pending, self._pending = self._pending, set()
        if RESYNC in pending:
            self.changed.emit(RESYNC)
            return
        for path in sorted(pending):
            self.changed.emit(path)

    def stop(self) -> None:
        """Unsubscribe (waits for the feed thread) and drop what was not yet delivered."""
        self._live.clear()
        self._timer.stop()
        self._pending.clear()
        handle, self._handle = self._handle, None
        if handle is not None:  # nothing it delivers from now on is emitted (_live); it ends on the worker
            self._worker.pool.start(functools.partial(_stop_feed, handle))

    @property
    def active(self) -> bool:
        """Whether a backend's changes are being listened to."""
        return self._handle is not None
