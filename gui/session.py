"""``ProjectSession``: the open project as the GUI sees it, over :class:`core.project.Project`, with signals.

Views receive the session, call its methods and listen to its signals; they never build backends
or read settings files themselves. All disk access happens in ``core`` through the project model.
The session knows the *current document* (the one the editor shows: the layout's long-term file at
first) and turns what core operations changed (:class:`core.project.Changes`) into signals with
:meth:`ProjectSession.apply`. It also holds the stored proposal under review, which the insights
and prune views both follow. Opening a project creates nothing on disk.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from core.adapter import WriteOutcome
from core.automation.extraction import ExtractionRun
from core.backends import MemoryBackend, MemoryBackendRegistry
from core.documents.layout import DocumentInfo
from core.errors import MemoryBackendError, SettingsError
from core.project import Changes, forget_project, open_project
from core.proposals import Proposal, list_proposals, load_proposal
from core.settings import ProjectSettings
from core.storage import fileio
from core.storage.statefiles import set_process_writer
from core.storage.userdirs import local_author
from core.store import ProjectStore
from gui.serial_worker import SerialWorker

log = logging.getLogger(__name__)
#: How long after an outside append is seen it is recorded (memdesk's own appends are recorded by then).
APPEND_NOTICE_DELAY_MS = 1500


class _NoticeRelay(QObject):
    """Lives on the GUI thread: the watch's thread emits, the session's slot runs here (queued)."""

    arrived = Signal(object)


class DocumentAccess:
    """Reads and writes of the session's current document, adapter-style: reads never raise."""

    def __init__(self, session: ProjectSession) -> None:
        self._session = session
        #: The error of the last failed :meth:`read` (``None`` after a successful one).
        self.last_read_error: MemoryBackendError | None = None

    def _check_seen(self, path: str, text: str) -> None:
        """First read of ``path`` in this window: a change made while memdesk was closed is recorded (core.storage.noticed)."""
        checked = self.__dict__.setdefault("_seen_checked", set())
        if path in checked:
            return
        checked.add(path)
        try:
            from core.storage.noticed import check_seen

            check_seen(self._session.project, path, text)
        except Exception as exc:  # a safety net: the document opens either way
            log.warning("what %s held when memdesk last wrote it was not compared: %s", path, exc)

    def read(self) -> str:
        """The current document's text, ``""`` on any failure (kept in :attr:`last_read_error`)."""
        try:
            text = self._session.project.read(self._session.current_path)
            self._check_seen(self._session.current_path, text)
        except MemoryBackendError as exc:
            self.last_read_error = exc
            log.warning("read of %s failed: %s", self._session.current_path, exc)
            return ""
        except Exception as exc:
            self.last_read_error = MemoryBackendError(f"{type(exc).__name__}: {exc}", "READ_FAILED",
                                                      self._session.backend.id, exc)
            return ""
        self.last_read_error = None
        return text

    def write(self, content: str, *, expected_hash: str | None = None, source: str = "editor",
              path: str | None = None) -> WriteOutcome:
        """Write ``path`` (default: the current document) through the project (never raises; any thread)."""
        path = path or self._session.current_path
        try:
            result = self._session.project.write(path, content, expected_hash=expected_hash, source=source)
        except MemoryBackendError as exc:
            log.warning("write of %s failed (%s): %s", path, exc.code, exc.message)
            return WriteOutcome(False, f"Write failed ({exc.code}): {exc.message}", exc.code)
        except Exception as exc:
            log.warning("write of %s failed: %s", path, exc)
            return WriteOutcome(False, f"Write failed (WRITE_FAILED): {type(exc).__name__}: {exc}", "WRITE_FAILED")
        self._session.last_write = result
        return WriteOutcome(True)


class ProjectSession(QObject):
    """One open project folder: its settings, resolved backend and the adapter every write goes through."""

    settingsChanged = Signal(object)  # ProjectSettings
    backendChanged = Signal(object)  # MemoryBackend
    memoryReplaced = Signal(str)  # a core operation (prune, restore…) replaced the memory; arg: source
    insightsChanged = Signal()
    auditChanged = Signal()
    proposalChanged = Signal(object)  # Proposal | None: the stored proposal under review
    statusMessage = Signal(str)

    documentChanged = Signal(str)  # the editor's current document changed; arg: its relpath
    documentsChanged = Signal()  # documents were created, removed or resized: the picker refreshes
    changedElsewhere = Signal(str)  # another host committed a change to this relpath ("": re-read everything)
    noticedOutside = Signal(object)  # core.project.noticed_watch.Noticed: other programs' changes kept in history

    def __init__(self, root: str | Path, registry: MemoryBackendRegistry | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        #: Saves, reads, backend switches and connects run here, off the GUI thread, one at a time (gui.serial_worker).
        self.worker = SerialWorker(self)
        # The process's one model of this folder (issue 19); resolving its backend may open a database or
        # connect to a server: on the worker, the window painting meanwhile.
        self.project = self.worker.call(lambda: open_project(root, registry), "")
        self.project.default_author = local_author("operator")  # History's Author column for the app's writes
        set_process_writer(self.project.default_author)  # and the state log's writer of the app's state changes
        self.root = self.project.root
        self.registry = self.project.registry
        self.store = ProjectStore(self.root, project=self.project)
        #: The document the editor shows (project-relative).
        self.current_path: str = self.project.memory_path
        self.adapter = DocumentAccess(self)
        self.last_write: Any = None
        #: The stored proposal under review (insights to accept, a prune to apply), if any.
        self.proposal: Proposal | None = None
        #: Asked before a settings change switches the backend (the window lists unsaved documents);
        #: False keeps the backend and raises :class:`SettingsError`.
        self.confirm_backend_switch: Callable[[], bool] = lambda: True
        #: Whether :meth:`close` ran (a second close does nothing).
        self.closed = False

    # -- the project ---------------------------------------------------------------------------
    @property
    def backend(self) -> MemoryBackend:
        """The resolved backend."""
        return self.project.backend

    @property
    def settings(self) -> ProjectSettings:
        """The project's settings (defaults while ``settings_error`` is set)."""
        return self.project.settings

    @property
    def settings_error(self) -> SettingsError | None:
        """Why the settings could not be read, if they could not."""
        return self.project.settings_error

    def documents(self) -> list[DocumentInfo]:
        """Every memory document of the project, in design §2a order."""
        try:  # a database backend lists what it keeps with a query: on the worker
            return self.worker.call(self.project.documents, "")
        except Exception as exc:
            log.warning("cannot list the documents of %s: %s", self.root, exc)
            return []

    def set_document(self, relpath: str) -> None:
        """Make ``relpath`` the current document (the caller deals with unsaved edits first)."""
        if relpath != self.current_path:
            self.current_path = relpath
            self.documentChanged.emit(relpath)

    @property
    def document_exists(self) -> bool:
        """Whether the current document exists yet."""
        path = self.current_path
        try:  # a database backend syncs its mirror first (writes): on the worker
            return self.worker.call(lambda: self.project.exists(path), "")
        except MemoryBackendError:
            return True  # it exists but cannot be read: the editor shows why

    def create_current_document(self) -> Changes:
        """Create the current document with its layout's scaffold (the operator asked for it)."""
        path = self.current_path
        changes = self.worker.call(lambda: self.project.create_document(path), f"Creating {path}…")
        self.apply(changes, "create")
        return changes

    def apply(self, changes: Changes, source: str = "operation") -> None:
        """Emit the signals for what an operation changed, so each view refreshes what it shows."""
        if changes.documents:
            self.documentsChanged.emit()
            if self.current_path in changes.documents:
                self.memoryReplaced.emit(source)
        if changes.insights or self.project.insights_path in changes.documents:
            self.insightsChanged.emit()
        if changes.audit:
            self.auditChanged.emit()
        if changes.settings:
            self.settingsChanged.emit(self.settings)

    def changed_elsewhere(self, relpath: str) -> None:
        """Another host changed ``relpath`` (``""`` after a lost connection: anything may have changed)."""
        self.documentsChanged.emit()
        if relpath == self.project.insights_path or not relpath:
            self.insightsChanged.emit()
        self.changedElsewhere.emit(relpath)

    # -- proposals -----------------------------------------------------------------------------
    def set_proposal(self, proposal: Proposal | None) -> None:
        """Make ``proposal`` the one under review (``None``: nothing is)."""
        self.proposal = proposal
        self.proposalChanged.emit(proposal)

    def pending_proposals(self) -> list[Proposal]:
        """The stored proposals with something left to review, oldest first."""
        root = self.root  # the proposals folder is listed and each file read on the worker
        return self.worker.call(lambda: list_proposals(root, pending_only=True), "")

    def load_pending_proposal(self) -> Proposal | None:
        """Review the newest pending proposal (stored by a run, the CLI or the scheduler), if any."""
        pending = self.pending_proposals()
        self.set_proposal(pending[-1] if pending else None)
        return self.proposal

    def review_proposal(self, proposal_id: str) -> Proposal:
        """Load the stored proposal ``proposal_id`` and review it (raises ``ProposalError``)."""
        root = self.root
        proposal = self.worker.call(lambda: load_proposal(root, proposal_id), "")  # read on the worker
        self.set_proposal(proposal)
        return proposal

    def extraction_finished(self, run: ExtractionRun) -> Proposal | None:
        """Take a finished run: the audit changed; the proposal it stored becomes the one under review."""
        self.auditChanged.emit()
        if run.ok and run.proposal_id:
            return self.review_proposal(run.proposal_id)
        return None

    # -- settings ------------------------------------------------------------------------------
    def update_settings(self, patch: Mapping[str, Any], *, base: Mapping[str, Any] | None = None) -> ProjectSettings:
        """Persist a settings patch (raises :class:`SettingsError`), re-resolving the backend if needed.

        ``base``: the values the change was made against; a key changed elsewhere since is a conflict.
        """
        before = self.backend
        if _switches_backend(self.settings, patch) and not self.confirm_backend_switch():
            raise SettingsError("Not switched: the unsaved edits are kept (cancelled).", "memoryBackend")
        try:
            # Off the GUI thread (a new backend may open a database or connect to a server).
            self.worker.call(lambda: self.store.update_settings(patch, base=base), "Switching the backend…"
                             if "memoryBackend" in patch else "Saving settings…")
        finally:
            if getattr(self, "_settings_watch", None) is not None:
                self._settings_watch.invalidate()  # a change elsewhere back to the last token is not missed
        self.settingsChanged.emit(self.settings)
        if self.backend is not before:
            self._on_new_backend()
        return self.settings

    @property
    def settings_store(self) -> Any:
        """Where Fusion's settings of this project live (:class:`core.settings.store.StoreInfo`, or ``None``)."""
        return self.project.settings_store

    def watch_settings(self) -> None:
        """Notice settings changed elsewhere (within a second) and refresh every view that depends on them."""
        from gui.settings_watch import SettingsWatcher

        if getattr(self, "_settings_watch", None) is None:
            self._settings_watch = SettingsWatcher(self)
            self._settings_watch.start()

    def update_settings_in_background(self, patch: Mapping[str, Any], *, base: Mapping[str, Any] | None,
                                      on_done: Any, on_error: Any) -> Any:
        """:meth:`update_settings` for a store behind the network (Fusion's API): the store is changed on a
        worker thread, the result taken on the GUI thread (Fusion runs its own side effects)."""
        from core.settings import update_settings_read

        watch = getattr(self, "_settings_watch", None)
        if watch is not None:
            watch.invalidate()
        root = self.root

        def done(read: Any) -> None:
            before, project = self.backend, self.project
            # A new backend may open a database or connect to a server: on the worker.
            self.worker.call(lambda: project.adopt_settings(read.settings, read.store), "Applying the settings…")
            if watch is not None:
                watch.invalidate()
            self.settingsChanged.emit(self.settings)
            if self.backend is not before:
                self._on_new_backend()
            on_done(self.settings)

        from gui.tasks import run_in_background

        return run_in_background(lambda _token: update_settings_read(root, patch, base=base), on_done=done,
                                 on_error=on_error, parent=self)

    def refresh_settings_soon(self) -> None:
        """Look at the settings store now (off the GUI thread when the watcher runs; else read them here)."""
        watch = getattr(self, "_settings_watch", None)
        if watch is not None:
            watch.look()
            return
        self.worker.call(self.project.reload, "Reading the settings…")
        self._on_new_backend()
        self.settingsChanged.emit(self.settings)

    def adopt_settings(self, poll: Any) -> None:
        """Take what the watcher read (a change made elsewhere): settings, store, or why they cannot be read."""
        watch = getattr(self, "_settings_watch", None)
        if self.worker.busy and watch is not None:
            # A write runs (a settings save of this window, maybe): what the watcher read may be older than
            # it, and taking it after the write would undo it. The next look (within a second) reads again.
            watch.invalidate()
            return
        before, project = self.backend, self.project
        # A new backend may open a database or connect to a server: on the worker, after any write queued.
        if poll.read is not None:
            self.worker.call(lambda: project.adopt_settings(poll.read.settings, poll.read.store), "")
        else:
            self.worker.call(lambda: project.adopt_settings(project.settings, project.settings_store, poll.error), "")
        self.settingsChanged.emit(self.settings)
        if self.backend is not before:
            self._on_new_backend()

    def switch_backend(self, backend_id: str, config: Mapping[str, Any] | None = None) -> ProjectSettings:
        """Persist a new backend choice and its config, then re-resolve the backend.

        The operator's own choice of a team connection and project key confirms the binding (core.settings.bindings).
        """
        from core.settings.bindings import confirm, team_of

        team = team_of(config)
        if team is not None:  # memdesk's own bindings file: written on the worker
            root = self.project.root
            self.worker.call(lambda: confirm(root, *team), "Confirming the team binding…")
        return self.update_settings({"memoryBackend": backend_id, "memoryBackendConfig": dict(config or {})})

    def notice_external(self, before: str | None, after: str | None) -> None:
        """The current document changed on disk from ``before`` (what the editor held) to ``after`` without
        memdesk: keep the version before in history (writer kind ``program``; on history's thread)."""
        from core.storage.noticed import record_noticed

        project, path = self.project, self.current_path

        def record() -> None:
            try:
                record_noticed(project, path, before, after)
            except Exception as exc:  # recording is a safety net; the editor goes on either way
                log.warning("an outside change of %s was not recorded: %s", path, exc)

        if before and after is not None and after.startswith(before):
            # An append: memdesk's own processes record theirs just after writing; look once they have.
            QTimer.singleShot(APPEND_NOTICE_DELAY_MS, record)
        else:
            record()

    def watch_outside_changes(self) -> None:
        """Keep the version before of every memory document another program changes (core.project.noticed_watch),
        not only the open one; what was kept is announced by ``noticedOutside`` on the GUI thread."""
        from core.project.noticed_watch import NoticeWatch

        if getattr(self, "_notice_watch", None) is None:
            self._notice_relay = _NoticeRelay(self)
            self._notice_relay.arrived.connect(self._on_noticed)
            self._notice_watch = NoticeWatch(self.project, on_noticed=self._notice_relay.arrived.emit).start()

    def poke_outside_watch(self) -> None:
        """Something under the project changed on disk: compare the documents now."""
        if getattr(self, "_notice_watch", None) is not None:
            self._notice_watch.poke()

    def _on_noticed(self, noticed: Any) -> None:
        self.noticedOutside.emit(noticed)
        self.statusMessage.emit(noticed.describe())

    def binding_reason(self) -> str | None:
        """Why the memory is read-only until the operator confirms the project's team binding (``None``: it is not)."""
        from core.settings.bindings import binding_reason

        if self.project.backend.id != "readonly":
            return None
        root, settings = self.project.root, self.project.settings  # the binding file: read on the worker
        return self.worker.call(lambda: binding_reason(root, settings.memory_backend,
                                                       settings.memory_backend_config), "")

    def confirm_binding(self) -> None:
        """The operator confirms the team binding the project's settings name (the read-only banner's action)."""
        from core.settings.bindings import confirm, team_of

        team = team_of(self.project.settings.memory_backend_config)
        if team is None:
            return
        self.worker.call(lambda: confirm(self.project.root, *team), "Confirming the team binding…")
        self.reload_backend()

    def reload_backend(self) -> None:
        """Read the settings and resolve the configured backend again (falling back to ``file`` with a reason)."""
        self.worker.call(self.project.reload, "Connecting to the backend…")  # may open a database or connect
        self._on_new_backend()

    def _on_new_backend(self) -> None:
        if self.current_path not in {d.path for d in self.documents()} and self.current_path != self.project.memory_path:
            self.current_path = self.project.memory_path
            self.documentChanged.emit(self.current_path)
        self.documentsChanged.emit()
        self.backendChanged.emit(self.backend)

    # -- memory --------------------------------------------------------------------------------
    @property
    def memory_path(self) -> Path | None:
        """Absolute path of the current document's file (watched for external changes); ``None`` when the
        backend keeps it itself without a file."""
        if self.backend.is_primary(self.current_path) and self.backend.memory_path is None:
            return None
        return self.root / self.current_path

    @property
    def can_write(self) -> bool:
        """Whether the current backend can write memory."""
        return self.backend.has_capability("write")

    def write_block_reason(self) -> str | None:
        """Why the current document cannot be written (backend, permissions), or ``None``."""
        path = self.current_path
        try:  # stats of the document and its folders: on the worker
            return self.worker.call(lambda: self.project.writable(path), "")
        except MemoryBackendError as exc:
            return exc.message

    def read_memory(self) -> tuple[str, str]:
        """Return ``(content, content_hash)``; check ``adapter.last_read_error`` for a failed read.

        Read on the project's worker (a database backend syncs its mirror or asks its server; a 1 MiB
        file is read and hashed), the GUI painting meanwhile, after any write queued before it.
        """
        def read() -> tuple[str, str]:
            text = self.adapter.read()
            return text, fileio.content_hash(text)

        return self.worker.call(read, "")

    def write_memory(self, content: str, expected_hash: str | None, source: str = "editor") -> WriteOutcome:
        """Write the current document through the project (never raises)."""
        path = self.current_path  # the worker writes this one, whatever is shown meanwhile
        outcome = self.worker.call(lambda: self.adapter.write(content, expected_hash=expected_hash, source=source,
                                                              path=path), f"Saving {path.rsplit('/', 1)[-1]}…")
        if outcome.success:
            self.documentsChanged.emit()
            if self.current_path == self.project.insights_path:
                self.insightsChanged.emit()
        return outcome

    def close(self) -> None:
        """Stop watching the settings and shut the backend down.

        The joins (the outside-change watch's thread, the history worker, a database's connections) run
        on the project's worker after every write queued before them, the window painting meanwhile and
        the status bar saying "Closing …" when it takes a while (gui.serial_worker).
        """
        if self.closed:
            return
        self.closed = True
        if getattr(self, "_settings_watch", None) is not None:
            self._settings_watch.stop()
        notice, self._notice_watch = getattr(self, "_notice_watch", None), None
        project = self.project

        def shut() -> None:
            if notice is not None:
                notice.stop()  # joins its thread (waits for a scan under way)
            forget_project(project.root)  # closes it: the next window on this folder starts afresh
            project.close()

        try:
            self.worker.call(shut, f"Closing {self.root.name}…")
        except Exception as exc:  # a safety net: the window closes either way
            log.warning("closing %s failed: %s", self.root, exc)
        self.worker.shutdown()  # nothing is left to wait for


def _switches_backend(settings: ProjectSettings, patch: Mapping[str, Any]) -> bool:
    """Whether ``patch`` changes the backend or its config."""
    if "memoryBackend" in patch and patch["memoryBackend"] != settings.memory_backend:
        return True
    return "memoryBackendConfig" in patch and dict(patch["memoryBackendConfig"] or {}) != dict(
        settings.memory_backend_config or {})


def open_reason(exc: BaseException) -> str:
    """Why a project could not be opened, on one line: an OS error names its file and what to do."""
    if isinstance(exc, MemoryBackendError):
        return exc.message
    if isinstance(exc, OSError) and exc.filename is not None:
        from core.storage.safepath import os_reason

        return os_reason(exc.filename, exc, "read")
    return str(exc) or type(exc).__name__
