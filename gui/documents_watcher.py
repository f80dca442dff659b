"""Watches a project's memory folders so the document list follows what agents create on disk.

An agent that starts a daily note or its own memory folder (``.fusion/memory/2026-12-01.md``,
``.fusion/agent-memory/reviewer/``) writes it with its own tools; the list must show it without F5,
and each row's size and last change must follow appends. A watchdog observer watches ``.fusion/``
recursively; events about markdown files and folders (never memdesk's own state under
``.fusion/memdesk/``, which changes on every save) poke a relay on the GUI thread, debounced, so a
burst of appends gives one ``changed`` signal and one listing. The receiver re-lists the documents.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

log = logging.getLogger(__name__)

DEBOUNCE_MS = 300
_EVENTS = frozenset({"created", "modified", "moved", "deleted", "closed"})
_FOLDER_EVENTS = frozenset({"created", "moved", "deleted"})  # a folder's "modified" is any entry in it
_OWN_STATE = f"{os.sep}.fusion{os.sep}memdesk"


class _Relay(QObject):
    poked = Signal()


class _Handler:
    """Pokes the relay for events about memory documents and folders (watchdog's thread)."""

    def __init__(self, relay: _Relay) -> None:
        self._relay = relay

    def dispatch(self, event: object) -> None:
        """Called by watchdog for every event under ``.fusion/``."""
        if getattr(event, "event_type", "") not in _EVENTS:
            return
        for raw in (getattr(event, "src_path", ""), getattr(event, "dest_path", "")):
            path = os.fsdecode(raw) if raw else ""
            if not path or _OWN_STATE in path:
                continue
            folder = getattr(event, "is_directory", False)
            if (folder and event.event_type in _FOLDER_EVENTS) or (not folder and path.endswith(".md")):
                self._relay.poked.emit()
                return


class DocumentsWatcher(QObject):
    """Emits ``changed`` (GUI thread, debounced) when a memory document or folder appears, goes or changes."""

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
        self.folder: Path | None = None

    def watch(self, root: Path | None) -> bool:
        """Watch ``root``'s ``.fusion/`` (replacing what was watched); False when there is none."""
        self.stop()
        folder = root / ".fusion" if root is not None else None
        if folder is None or not folder.is_dir():
            return False
        from watchdog.observers import Observer  # late: off the start-up path

        try:  # inotify creates its instance here: at the per-user limit, F5 still lists them
            observer = Observer()
            observer.schedule(_Handler(self._relay), os.fspath(folder.resolve()), recursive=True)
            observer.daemon = True
            observer.start()
        except OSError as exc:  # inotify limits: F5 still lists them
            log.warning("cannot watch %s for new documents: %s", folder, exc)
            return False
        self._observer, self.folder = observer, folder
        return True

    def stop(self) -> None:
        """Stop watching."""
        self._timer.stop()
        observer, self._observer, self.folder = self._observer, None, None
        if observer is not None:
            observer.stop()  # type: ignore[attr-defined]
            observer.join(timeout=2)  # type: ignore[attr-defined]

    @property
    def active(self) -> bool:
        """Whether a project's folders are watched."""
        return self._observer is not None
