"""Recently opened project folders, remembered in ``QSettings`` (newest first, at most ten)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings

MAX_RECENT = 10
_KEY = "recentProjects"


class RecentProjects:
    """The recent-projects list in ``settings`` (tests pass an INI file); ``persist=False`` keeps it in memory."""

    def __init__(self, settings: QSettings | None = None, *, persist: bool = True,
                 limit: int = MAX_RECENT) -> None:
        self._settings = settings if settings is not None or not persist else QSettings("memdesk", "memdesk")
        self._memory: list[str] = []
        self._limit = limit

    def paths(self) -> list[Path]:
        """Return the remembered folders that still exist, newest first."""
        return [p for p in self._stored() if p.is_dir()][: self._limit]

    def add(self, folder: str | Path) -> list[Path]:
        """Put ``folder`` first (once), keep at most the limit, save, and return the new list."""
        path = Path(folder).resolve()
        items = [path, *(p for p in self._stored() if p != path)][: self._limit]
        self._save([str(p) for p in items])
        return self.paths()

    def clear(self) -> None:
        """Forget every recent project."""
        self._save([])

    def _save(self, items: list[str]) -> None:
        if self._settings is None:
            self._memory = items
            return
        self._settings.setValue(_KEY, items)
        self._settings.sync()

    def _stored(self) -> list[Path]:
        raw = self._memory if self._settings is None else self._settings.value(_KEY, [])
        if isinstance(raw, str):  # QSettings gives a bare string for a one-item list
            raw = [raw]
        return [Path(str(p)) for p in (raw or []) if str(p)]
