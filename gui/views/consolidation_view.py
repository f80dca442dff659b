"""Consolidation review: run dreams or a compaction, then review its one proposal change by change.

The changes of every document the run touches are listed with check boxes (A / R / Space); the diff
of the selected change's document is beside them, with the ledger (each removed or rewritten entry's
fate) and the conservation check ("3 facts would be lost", each fact with its line) for the accepted
changes. Apply writes only the accepted changes through ``core.consolidation.apply_proposal`` (re-based
onto newer text, or refused as a conflict); a selection that would lose facts needs the "apply anyway"
box ticked. Runs go off the GUI thread with progress and Cancel; a cancelled run stages nothing.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from core.consolidation import (
    ConsolidationProposal,
    RunCancelled,
    apply_proposal,
    list_agents,
    list_consolidations,
    load,
    reject_proposal,
    run_compact,
    run_dream,
    selected_texts,
)
from core.consolidation.stage import context_for, lost_for
from core.documents.diff import diff_texts
from core.project import Changes, Project
from core.proposals import ProposalError
from gui.session import ProjectSession
from gui.tasks import Operation, run_in_background
from gui.views import consolidation_sources as sources
from gui.widgets.banner import Banner
from gui.widgets.colors import css
from gui.widgets.consolidation_panels import ChangeList, LedgerPanel, LostFactsPanel
from gui.widgets.diff_view import SideBySideDiff
from gui.widgets.parts import view_action

SHORTCUTS = (("Ctrl+Return", "Apply the accepted changes"), ("Ctrl+Shift+R", "Reject the proposal"),
             ("A / R / Space", "Accept / reject / toggle the selected change"))


class ConsolidationView(QWidget):
    """Run and review dreams and compactions."""

    proposalApplied = Signal(object)  # ApplyOutcome

    def __init__(self, session: ProjectSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.proposal: ConsolidationProposal | None = None
        self.operation: Operation | None = None
        self._diff_path: str | None = None
        self.banner = Banner(self)
        self.picker = QComboBox(self)
        self.picker.setObjectName("consolidationPicker")
        self.scope = QComboBox(self)
        self.provider = QComboBox(self)
        self.provider.setEditable(True)
        self.provider.addItem("offline")
        for combo, chars in ((self.picker, 16), (self.scope, 6), (self.provider, 6)):  # the view fits 800 px
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(chars)
        self.unattended = QCheckBox("Unattended", self)
        self.unattended.setObjectName("consolidationUnattended")
        self.dream_button = QPushButton("Dream now", self)
        self.compact_button = QPushButton("Compact", self)
        self.compact_button.setToolTip("Compact the long-term memory (MEMORY.md, or memory.md in the seed layout)")
        self.progress = QProgressBar(self)
        self.progress_label = QLabel(self)
        self.cancel_button = QPushButton("Cancel", self)
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        self.changes = ChangeList(self)
        self.diff = SideBySideDiff("Before", "After", self)
        self.facts = LostFactsPanel(self)
        self.ledger = LedgerPanel(self)
        self.allow_loss = QCheckBox("Apply anyway", self)
        self.allow_loss.setToolTip("Apply even though facts would be lost (read them first)")
        self.outcome = QLabel(self)
        self.outcome.setWordWrap(True)
        self.reject_button = QPushButton("Reject proposal", self)
        self.stage_button = QPushButton(self)
        self.stage_button.setVisible(False)
        self.apply_button = QPushButton("Apply", self)
        self.apply_button.setDefault(True)
        view_action(self, "Apply consolidation", "Ctrl+Return", self.apply)
        view_action(self, "Reject consolidation", "Ctrl+Shift+R", self.reject)

        picking = QHBoxLayout()
        picking.addWidget(QLabel("Proposal:", self))
        picking.addWidget(self.picker, 1)
        picking.addWidget(self.unattended)  # here, not on the run row: that row alone must fit 800 px
        runs = QHBoxLayout()
        runs.addWidget(QLabel("Run for:", self))
        runs.addWidget(self.scope)
        runs.addWidget(QLabel("Provider:", self))
        runs.addWidget(self.provider)
        runs.addWidget(self.dream_button)
        runs.addWidget(self.compact_button)
        runs.addStretch(1)
        busy = QHBoxLayout()
        busy.addWidget(self.progress, 1)
        busy.addWidget(self.progress_label, 2)
        busy.addWidget(self.cancel_button)
        side = QSplitter(Qt.Orientation.Vertical, self)
        side.addWidget(self.facts)
        side.addWidget(self.ledger)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(self.changes)
        self.splitter.addWidget(self.diff)
        self.splitter.addWidget(side)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setStretchFactor(2, 2)
        self.splitter.setSizes([260, 620, 480])
        for pane in (self.changes, self.diff, side):
            pane.setMinimumWidth(120)
        actions = QHBoxLayout()
        actions.addWidget(self.outcome, 1)
        actions.addWidget(self.stage_button)
        actions.addWidget(self.allow_loss)
        actions.addWidget(self.reject_button)
        actions.addWidget(self.apply_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        layout.addLayout(picking)
        layout.addLayout(runs)
        layout.addLayout(busy)
        layout.addWidget(self.summary)
        layout.addWidget(self.splitter, 1)
        layout.addLayout(actions)

        self.picker.currentIndexChanged.connect(self._picked)
        self.dream_button.clicked.connect(self.dream)
        self.compact_button.clicked.connect(self.compact)
        self.cancel_button.clicked.connect(self.cancel)
        self.apply_button.clicked.connect(self.apply)
        self.reject_button.clicked.connect(self.reject)
        self.stage_button.clicked.connect(self.stage_source)
        self.changes.changeSelected.connect(self._show_change)
        self.changes.choicesChanged.connect(self._update_state)
        self.allow_loss.toggled.connect(self._update_state)
        self._show_policy()
        self.unattended.toggled.connect(self._set_unattended)
        self._set_busy(False)
        session.noticedOutside.connect(lambda n: n.rewritten and self.refresh(select=self.picker.currentData()))
        self.refresh()

    # -- proposals -----------------------------------------------------------------------------------
    def refresh(self, select: str | None = None) -> None:
        """Reload the proposals (pending first, then the last reviewed) and the run scopes."""
        project, root = self.session.project, self.session.root
        layered = project.layout.layered
        warnings: list[str] = []
        # The agents' folders and the stored proposals are listed on the project's worker.
        agents, items = self.session.worker.call(
            lambda: (list_agents(project) if layered else [],
                     list_consolidations(root, pending_only=False, warnings=warnings)), "")
        self.scope.clear()
        if layered:
            self.scope.addItem("the project", None)
            for agent in agents:
                self.scope.addItem(f"agent {agent}", agent)
        self.dream_button.setEnabled(layered)
        items.sort(key=lambda p: (p.status != "pending", [-ord(c) for c in p.id]))
        try:  # other programs' runs (history) and Fusion's backups: read on the project's worker
            found = self.session.worker.call(lambda: sources.source_items(project), "")
        except Exception as exc:  # history or backups unreadable: memdesk's own proposals still show
            found = []
            warnings.append(f"other programs' runs and backups not listed: {exc}")
        self.picker.blockSignals(True)
        self.picker.clear()
        for p in items[:50]:
            self.picker.addItem(f"{p.kind} · {p.scope} · {p.created_at[:16].replace('T', ' ')} · {p.status} · "
                                f"{len(p.lost_facts)} facts lost", p.id)
        for label, data in found:
            self.picker.addItem(label, data)
        self.picker.blockSignals(False)
        index = self.picker.findData(select) if select else 0
        self.picker.setCurrentIndex(max(index, 0) if self.picker.count() else -1)
        self._picked()
        if warnings:
            self.banner.show_message("; ".join(warnings), "warning")

    def _picked(self) -> None:
        pid = self.picker.currentData()
        note, action = "No dream or compaction waits for review. Run one above.", ""
        project, root = self.session.project, self.session.root
        if isinstance(pid, str) and pid.startswith((sources.RUN, sources.BACKUP)):  # history, backups: on the worker
            self.proposal, note, action = self.session.worker.call(lambda: sources.describe(project, pid), "")
        else:
            try:
                self.proposal = self.session.worker.call(lambda: load(root, pid), "") if pid else None
            except ProposalError as exc:
                self.proposal, note = None, str(exc)
        self.stage_button.setText(action)
        self.stage_button.setVisible(bool(action))
        self._diff_path = None
        self.changes.set_changes(self.proposal)
        if self.proposal is None:
            self.diff.set_busy(note)
            self.ledger.set_entries(None, None)
        self.allow_loss.setChecked(False)
        self._update_state()

    def _show_change(self, number: int) -> None:
        proposal = self.proposal
        change = next((c for c in proposal.changes if c.number == number), None) if proposal else None
        if change is None:
            return
        if change.path != self._diff_path:
            doc = proposal.document(change.path)
            done = proposal.kind == "program" and proposal.status == "applied"
            self.diff.set_titles(f"{change.path} before" if done else f"{change.path} now" if doc.before is not None
                                 else f"{change.path} (new)", "after the other program's run" if done
                                 else "after the consolidation")
            self.diff.set_diff(diff_texts(doc.before or "", doc.after))
            self._diff_path = change.path
            self.ledger.set_entries(proposal, change.path)
        self.diff.go_to_hunk(change.index)

    def lost_with_selection(self) -> list:
        """The facts the accepted changes would lose (the whole proposal's when all are accepted)."""
        proposal = self.proposal
        if proposal is None:
            return []
        accepted = self.changes.accepted()
        if set(accepted) == {c.number for c in proposal.changes}:
            return list(proposal.lost_facts)
        befores = {d.path: d.before for d in proposal.documents}
        texts = selected_texts(proposal, accepted) if accepted else {}
        project = self.session.project
        context = self.session.worker.call(lambda: context_for(project, proposal), "")  # reads documents
        return lost_for(befores, {**context, **{p: b or "" for p, b in befores.items()}, **texts}, proposal.ledger)

    def _update_state(self) -> None:
        proposal = self.proposal
        lost = self.lost_with_selection()
        if proposal is not None:
            wait = proposal.extra.get("waitReason")
            self.summary.setText(f"<b>{proposal.summary}</b> — {len(proposal.changes)} changes in "
                                 f"{len(proposal.documents)} documents; {proposal.status}"
                                 + (f"; waited for review: {wait}" if wait else "")
                                 + (f". {proposal.message}" if proposal.message else ""))
            self.facts.set_facts(lost, proposal.facts_total,
                                 selection=len(self.changes.accepted()) < len(proposal.changes),
                                 done=proposal.kind == "program" and proposal.origin == "program"
                                 and proposal.status == "applied")
        else:
            self.summary.setText("")
            self.facts.set_facts([], 0)
        pending = proposal is not None and proposal.status in ("pending", "partly-applied")
        accepted = [n for n in self.changes.accepted() if proposal and n not in proposal.applied_changes]
        self.allow_loss.setVisible(bool(lost) and pending)
        refusal = self.apply_refusal(lost, accepted, pending)
        self.apply_button.setEnabled(refusal is None and self.operation is None)
        self.apply_button.setToolTip(refusal or "Write the accepted changes (the versions before go to history)")
        self.apply_button.setText(f"Apply {len(accepted)} of {len(proposal.changes)} changes"
                                  if proposal and pending and len(accepted) < len(proposal.changes) else "Apply")
        self.reject_button.setEnabled(proposal is not None and proposal.status == "pending")

    def apply_refusal(self, lost: list, accepted: list[int], pending: bool) -> str | None:
        """Why Apply is disabled (``None`` when it is enabled)."""
        if self.proposal is None or not pending:
            return "There is no proposal waiting for review."
        if not accepted:
            return "No change is accepted."
        if lost and not self.allow_loss.isChecked():
            return f"{len(lost)} facts would be lost: tick “Apply anyway” after reading them."
        return None

    # -- decisions -----------------------------------------------------------------------------------
    def apply(self) -> object | None:
        """Apply the accepted changes."""
        proposal = self.proposal
        if proposal is None or not self.apply_button.isEnabled():
            return None
        try:
            accepted, allow_loss = self.changes.accepted(), self.allow_loss.isChecked()
            outcome = self.session.worker.call(  # off the GUI thread: several documents written, history kept
                lambda: apply_proposal(self.session.project, proposal.id, accepted, allow_loss=allow_loss,
                                       author="operator"), "Applying the consolidation…", disable=(self.apply_button,))
        except Exception as exc:
            self.banner.show_message(f"Not applied: {exc}", "error")
            return None
        colour = css("ok-fg") if outcome.applied else css("error-fg")
        self.outcome.setText(f"<b style='color:{colour}'>{outcome.status}</b>: {outcome.message}")
        if outcome.written:
            self.session.apply(Changes(documents=frozenset(outcome.written), history=True), proposal.kind)
            self.session.statusMessage.emit(f"Consolidation applied to {len(outcome.written)} documents")
        self.refresh(select=proposal.id)
        self.proposalApplied.emit(outcome)
        return outcome

    def stage_source(self) -> None:
        """Stage the undo of the shown run, or the restore of the shown backup, and review it."""
        data = self.picker.currentData()
        try:
            project = self.session.project
            proposal = self.session.worker.call(lambda: sources.stage(project, data), "Staging it for review…")
        except Exception as exc:
            self.banner.show_message(f"Cannot stage it: {exc}", "error")
            return
        self.outcome.setText(f"Staged {proposal.summary}: review it, then Apply.")
        self.refresh(select=proposal.id)
        self.changes.list.setFocus()  # the button just pressed is hidden now; review starts at the changes

    def reject(self) -> None:
        """Reject the whole proposal; memory is untouched."""
        if self.proposal is None or not self.reject_button.isEnabled():
            return
        project, pid = self.session.project, self.proposal.id
        outcome = self.session.worker.call(lambda: reject_proposal(project, pid), "Rejecting the proposal…")
        self.outcome.setText(outcome.message)
        self.refresh(select=self.proposal.id)

    # -- the unattended policy (memdesk's own state) ------------------------------------------------------
    def _show_policy(self) -> None:
        from core.consolidation.policy import load_policy

        root = self.session.root
        try:  # memdesk's own state file: read on the project's worker
            policy = self.session.worker.call(lambda: load_policy(root), "")
        except Exception as exc:
            self.unattended.setEnabled(False)
            self.unattended.setToolTip(f"The policy cannot be read: {exc}")
            return
        self.unattended.blockSignals(True)
        self.unattended.setChecked(policy.unattended)
        self.unattended.blockSignals(False)
        self.unattended.setToolTip(
            "Scheduled dreams and compactions (Fusion's memoryDreamsSchedule, memoryAutoSummarizeSchedule) apply "
            f"themselves only when nothing would be lost and the change is at most {policy.max_change_bytes:,} bytes; "
            "otherwise they wait here for review")

    def _set_unattended(self, on: bool) -> None:
        from core.consolidation.policy import change_policy

        try:
            root = self.session.root
            self.session.worker.call(lambda: change_policy(root, unattended=on),
                                     "Saving the consolidation policy…")
        except Exception as exc:
            self.banner.show_message(f"The unattended setting was not saved: {exc}", "error")
            self._show_policy()
            return
        self.session.statusMessage.emit(f"Unattended consolidation {'on' if on else 'off'}")

    # -- runs ------------------------------------------------------------------------------------------
    def _provider(self) -> object:
        from core.providers import resolve_provider

        name = self.provider.currentText().strip() or "offline"
        return self.session.worker.call(lambda: resolve_provider(name), "")  # the user config: read on the worker

    def dream(self) -> None:
        """Dream for the chosen scope on a worker thread."""
        agent = self.scope.currentData()
        self._start(lambda project, provider, token: run_dream(
            project, provider, agent=agent, cancel=lambda: token.cancelled, progress=token.progress))

    def compact(self) -> None:
        """Compact the long-term memory on a worker thread."""
        path = self.session.project.memory_path
        self._start(lambda project, provider, token: run_compact(
            project, path, provider, cancel=lambda: token.cancelled, progress=token.progress))

    def _start(self, work) -> None:  # noqa: ANN001 - a callable of (project, provider, token)
        if self.operation is not None:
            return
        try:
            provider = self._provider()
        except Exception as exc:
            self.banner.show_message(f"Cannot run: {exc}", "error")
            return
        root = self.session.root
        self.banner.clear()
        self._set_busy(True)
        self.operation = run_in_background(lambda token: work(Project(root), provider, token), self._finished,
                                           self._failed, self._on_progress, parent=self)

    def _on_progress(self, percent: int, message: str) -> None:
        self.progress.setValue(percent)
        self.progress_label.setText(message)

    def cancel(self) -> None:
        """Cancel the running dream or compaction: nothing is staged or written."""
        if self.operation is not None:
            self.operation.cancel()
            self.operation = None
        self._set_busy(False)
        self.outcome.setText("Cancelled; nothing was staged or written.")

    def _finished(self, outcome: object) -> None:
        self.operation = None
        self._set_busy(False)
        self.outcome.setText(outcome.message)  # type: ignore[attr-defined]
        if not outcome.ok:  # type: ignore[attr-defined]
            self.banner.show_message(outcome.message, "error")  # type: ignore[attr-defined]
        proposal = outcome.proposal  # type: ignore[attr-defined]
        self.refresh(select=proposal.id if proposal is not None else None)

    def _failed(self, exc: BaseException) -> None:
        self.operation = None
        self._set_busy(False)
        text = "Cancelled; nothing was staged or written." if isinstance(exc, RunCancelled) else f"The run failed: {exc}"
        self.banner.show_message(text, "error")

    def _set_busy(self, busy: bool) -> None:
        for widget in (self.progress, self.progress_label, self.cancel_button):
            widget.setVisible(busy)
        self.progress.setValue(0)
        self.dream_button.setEnabled(not busy and self.session.project.layout.layered)
        self.compact_button.setEnabled(not busy)
        self._update_state() if hasattr(self, "facts") else None
