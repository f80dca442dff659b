"""``ProjectStore``: one project's settings and memory bootstrap, with non-fatal memory setup.

The bootstrap creates the layout's own long-term file (``.fusion/memory.md`` in the seed layout,
``.fusion/memory/MEMORY.md`` in the layered one), never a file of the other layout. Surfaces call
:meth:`ProjectStore.init` only when the operator asked for memory to be created: opening a folder
creates nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.project_memory import ensure_memory_file
from core.settings import model as settings_mod
from core.settings.model import ProjectSettings

log = logging.getLogger(__name__)


class ProjectStore:
    """A project folder: ``init()`` bootstraps memory, ``update_settings()`` persists a settings patch."""

    def __init__(self, root: str | Path, *, project: Any = None) -> None:
        self.root = Path(root)
        #: The :class:`core.project.Project` this store serves, when a surface has one open.
        self.project = project

    def settings(self) -> ProjectSettings:
        """Load the current settings (raises :class:`~core.errors.SettingsError` on a bad config)."""
        return settings_mod.load_settings(self.root)

    def init(self) -> ProjectSettings | None:
        """Bootstrap the memory file when memory is enabled. Never raises: failures are logged."""
        try:
            current = self.settings()
        except Exception as exc:
            log.warning("memory bootstrap skipped: cannot read settings: %s", exc)
            return None
        if current.memory_enabled:
            self._ensure_memory()
        return current

    def update_settings(self, patch: Mapping[str, Any], *, base: Mapping[str, Any] | None = None) -> ProjectSettings:
        """Save ``patch``; creates the memory file when memory is switched on (non-fatal).

        Invalid patches raise :class:`~core.errors.SettingsError` and change nothing.
        """
        try:
            previous = self.settings()
        except Exception:
            previous = None
        if self.project is not None:  # the project writes the settings, re-resolves its backend, creates memory
            self.project.update_settings(patch, base=base)
            updated = self.project.settings
            if previous is None or _schedule_fields(previous) != _schedule_fields(updated):
                self._sync_schedule(updated)
            return updated
        updated = settings_mod.update_settings(self.root, patch, base=base)
        if updated.memory_enabled and (previous is None or not previous.memory_enabled):
            self._ensure_memory()
        if previous is None or _schedule_fields(previous) != _schedule_fields(updated):
            self._sync_schedule(updated)
        return updated

    def _sync_schedule(self, current: ProjectSettings) -> None:
        """Keep the stored extraction schedule in step with the settings (non-fatal)."""
        try:
            from core.insights import sync_insight_extraction_automation

            sync_insight_extraction_automation(self.root, current)
        except Exception as exc:
            log.warning("extraction schedule not updated (non-fatal): %s", exc)

    def _ensure_memory(self) -> None:
        try:
            if self.project is not None and self.project.writable() is not None:
                return  # a read-only backend or folder: nothing to create
            if ensure_memory_file(self.root):
                log.info("created the memory file of %s", self.root)
        except Exception as exc:  # non-fatal invariant: setup failures never block
            log.warning("memory bootstrap failed (non-fatal): %s", exc)


def _schedule_fields(s: ProjectSettings) -> tuple[bool, str]:
    return s.insight_extraction_enabled, s.insight_extraction_schedule
