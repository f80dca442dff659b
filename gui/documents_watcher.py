"""Watches a project's memory folders so the document list follows what agents create on disk.

An agent that starts a daily note or its own memory folder (``.fusion/memory/2026-12-01.md``,
``.fusion/agent-memory/reviewer/``) writes it with its own tools; the list must show it without F5,
and each row's size and last change must follow appends. A watchdog observer watches ``.fusion/``
recursively; events about markdown files and folders (never memdesk's own state under
``.fusion/memdesk/``, which changes on every save) poke a relay on the GUI thread, debounced, so a
burst of appends gives one ``changed`` signal and one listing. The receiver re-lists the documents.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QObject

from gui.watcher import ObservedFolder, Relay

DEBOUNCE_MS = 300
_EVENTS = frozenset({"created", "modified", "moved", "deleted", "closed"})
_FOLDER_EVENTS = frozenset({"created", "moved", "deleted"})  # a folder's "modified" is any entry in it
_OWN_STATE = f"{os.sep}.fusion{os.sep}memdesk"


class _Handler:
    """Pokes the relay for events about memory documents and folders (watchdog's thread)."""

    def __init__(self, relay: Relay) -> None:
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


class DocumentsWatcher(ObservedFolder):
    """Emits ``changed`` (GUI thread, debounced) when a memory document or folder appears, goes or changes."""

    def __init__(self, debounce_ms: int = DEBOUNCE_MS, parent: QObject | None = None) -> None:
        super().__init__(debounce_ms, parent)
        self.folder: Path | None = None

    def watch(self, root: Path | None) -> bool:
        """Watch ``root``'s ``.fusion/`` (replacing what was watched); False when there is none."""
        self.stop()
        folder = root / ".fusion" if root is not None else None
        if folder is None:
            return False
        if not self._observe(_Handler(self._relay), folder, recursive=True,  # at inotify's limit F5 still lists
                             refused=f"cannot watch {folder} for new documents", check=folder.is_dir):
            return False
        self.folder = folder
        return True

    def stop(self) -> None:
        """Stop watching."""
        self.folder = None
        self._stop_observer()
