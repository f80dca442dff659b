"""``ProjectSession``: the open project as the GUI sees it (settings, backend, adapter), with signals.

Views receive the session, call its methods and listen to its signals; they never build backends
or read settings files themselves. All disk access happens in ``core``. The session also holds the
stored proposal (:class:`core.proposals.Proposal`) under review, which the insights and prune views
both follow.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from core import fileio
from core.adapter import MemoryFileAdapter, WriteOutcome
from core.backends import MemoryBackend, MemoryBackendRegistry, default_registry, resolve_memory_backend
from core.errors import SettingsError
from core.extraction import ExtractionRun
from core.proposals import Proposal, list_proposals, load_proposal
from core.settings import ProjectSettings
from core.store import ProjectStore

log = logging.getLogger(__name__)


class ProjectSession(QObject):
    """One open project folder: its settings, resolved backend and the adapter every write goes through."""

    settingsChanged = Signal(object)  # ProjectSettings
    backendChanged = Signal(object)  # MemoryBackend
    memoryReplaced = Signal(str)  # a core operation (prune, restore…) replaced the memory; arg: source
    insightsChanged = Signal()
    auditChanged = Signal()
    proposalChanged = Signal(object)  # Proposal | None: the stored proposal under review
    statusMessage = Signal(str)

    def __init__(self, root: str | Path, registry: MemoryBackendRegistry | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.root = Path(root).resolve()
        self.registry = registry or default_registry()
        self.store = ProjectStore(self.root)
        self.settings_error: SettingsError | None = None
        self.settings = self._load_settings()
        self.store.init()
        self.backend: MemoryBackend = resolve_memory_backend(self.settings, self.root, self.registry)
        self.adapter = MemoryFileAdapter(self.backend)
        #: The stored proposal under review (insights to accept, a prune to apply), if any.
        self.proposal: Proposal | None = None

    # -- proposals -----------------------------------------------------------------------------
    def set_proposal(self, proposal: Proposal | None) -> None:
        """Make ``proposal`` the one under review (``None``: nothing is)."""
        self.proposal = proposal
        self.proposalChanged.emit(proposal)

    def pending_proposals(self) -> list[Proposal]:
        """The stored proposals with something left to review, oldest first."""
        return list_proposals(self.root, pending_only=True)

    def load_pending_proposal(self) -> Proposal | None:
        """Review the newest pending proposal (stored by a run, the CLI or the scheduler), if any."""
        pending = self.pending_proposals()
        self.set_proposal(pending[-1] if pending else None)
        return self.proposal

    def review_proposal(self, proposal_id: str) -> Proposal:
        """Load the stored proposal ``proposal_id`` and review it (raises ``ProposalError``)."""
        proposal = load_proposal(self.root, proposal_id)
        self.set_proposal(proposal)
        return proposal

    def extraction_finished(self, run: ExtractionRun) -> Proposal | None:
        """Take a finished run: the audit changed; the proposal it stored becomes the one under review."""
        self.auditChanged.emit()
        if run.ok and run.proposal_id:
            return self.review_proposal(run.proposal_id)
        return None

    # -- settings ------------------------------------------------------------------------------
    def _load_settings(self) -> ProjectSettings:
        try:
            self.settings_error = None
            return self.store.settings()
        except SettingsError as exc:
            self.settings_error = exc
            log.warning("settings unreadable, using defaults: %s", exc)
            return ProjectSettings()

    def update_settings(self, patch: Mapping[str, Any]) -> ProjectSettings:
        """Persist a settings patch (raises :class:`SettingsError`), re-resolving the backend if needed."""
        before = self.settings
        self.settings = self.store.update_settings(patch)
        self.settings_error = None
        self.settingsChanged.emit(self.settings)
        if (self.settings.memory_backend, self.settings.memory_backend_config) != (
            before.memory_backend, before.memory_backend_config
        ):
            self.reload_backend()
        return self.settings

    def switch_backend(self, backend_id: str, config: Mapping[str, Any] | None = None) -> ProjectSettings:
        """Persist a new backend choice and its config, then re-resolve the backend."""
        return self.update_settings({"memoryBackend": backend_id, "memoryBackendConfig": dict(config or {})})

    def reload_backend(self) -> None:
        """Resolve the configured backend again (falling back to ``file`` with a reason)."""
        old = self.backend
        self.backend = resolve_memory_backend(self.settings, self.root, self.registry)
        self.adapter = MemoryFileAdapter(self.backend)
        try:
            old.shutdown()
        except Exception as exc:
            log.warning("backend %s shutdown failed: %s", old.id, exc)
        self.backendChanged.emit(self.backend)

    # -- memory --------------------------------------------------------------------------------
    @property
    def memory_path(self) -> Path | None:
        """Absolute path of the file the current backend exposes (watched for external changes)."""
        rel = self.backend.memory_path
        return self.root / rel if rel else None

    @property
    def can_write(self) -> bool:
        """Whether the current backend can write memory."""
        return self.backend.has_capability("write")

    def read_memory(self) -> tuple[str, str]:
        """Return ``(content, content_hash)``; check ``adapter.last_read_error`` for a failed read."""
        text = self.adapter.read()
        return text, fileio.content_hash(text)

    def write_memory(self, content: str, expected_hash: str | None, source: str = "editor") -> WriteOutcome:
        """Write through :class:`MemoryFileAdapter` (never raises)."""
        return self.adapter.write(content, expected_hash=expected_hash, source=source)

    def close(self) -> None:
        """Shut the backend down."""
        try:
            self.backend.shutdown()
        except Exception as exc:
            log.warning("backend shutdown failed: %s", exc)
