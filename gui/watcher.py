"""Watches the memory file for changes made by other programs (agents, Fusion, an editor).

A watchdog observer watches the file's folder (not recursively); events for that one file are
relayed to the GUI thread and debounced, so a burst of writes gives one ``changed`` signal. The
receiver compares the disk content with what it has, which is how our own saves are told apart.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

log = logging.getLogger(__name__)

DEBOUNCE_MS = 150
# Reads (ours included) give opened/closed_no_write events; only these mean the content may differ.
_CHANGE_EVENTS = frozenset({"created", "modified", "moved", "deleted", "closed"})


class _Relay(QObject):
    poked = Signal()


class _Handler:
    """A watchdog event handler that pokes the relay for events about one file."""

    def __init__(self, target: Path, relay: _Relay) -> None:
        self._target = os.path.normcase(os.fspath(target))
        self._relay = relay

    def dispatch(self, event: object) -> None:
        """Called by watchdog on its thread for every event in the folder."""
        if getattr(event, "is_directory", False) or getattr(event, "event_type", "") not in _CHANGE_EVENTS:
            return
        paths = (getattr(event, "src_path", ""), getattr(event, "dest_path", ""))
        if any(p and os.path.normcase(os.fsdecode(p)) == self._target for p in paths):
            self._relay.poked.emit()


class MemoryFileWatcher(QObject):
    """Emits ``changed`` (on the GUI thread, debounced) when the watched file changes on disk."""

    changed = Signal()

    def __init__(self, debounce_ms: int = DEBOUNCE_MS, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._relay = _Relay(self)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._relay.poked.connect(self._timer.start)
        self._timer.timeout.connect(self.changed)
        self._observer: object | None = None
        self.path: Path | None = None

    def watch(self, path: Path | None) -> bool:
        """Watch ``path`` (replacing what was watched); False when its folder does not exist."""
        self.stop()
        if path is None or not path.parent.is_dir():
            return False
        from watchdog.observers import Observer  # imported late: keeps it off the start-up path

        observer = Observer()
        observer.schedule(_Handler(path.resolve(), self._relay), os.fspath(path.parent.resolve()),
                          recursive=False)
        observer.daemon = True
        try:
            observer.start()
        except OSError as exc:  # inotify limits, a vanished folder: editing still works
            log.warning("cannot watch %s for changes: %s", path, exc)
            return False
        self._observer = observer
        self.path = path
        return True

    def stop(self) -> None:
        """Stop watching."""
        self._timer.stop()
        observer, self._observer, self.path = self._observer, None, None
        if observer is not None:
            observer.stop()  # type: ignore[attr-defined]
            observer.join(timeout=2)  # type: ignore[attr-defined]

    @property
    def active(self) -> bool:
        """Whether a file is being watched."""
        return self._observer is not None
