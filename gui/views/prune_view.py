"""Prune review: the current working memory against the stored proposal's prune, change by change.

The prune comes from the session's proposal (:class:`core.proposals.Proposal`); the diff is computed
off the GUI thread. Its changes (hunks) are listed with the reason the proposer gave for each removed
line; the operator accepts or rejects each one (none starts accepted: Shift+A accepts them all). Apply builds the text of the
accepted changes, validates it again, and goes through ``core.proposals.apply_prune``, which writes
it only if the memory is still the one the extraction read (else it marks the prune stale), keeps
the old version in history and records the outcome in the audit; Reject records the rejection and
leaves the memory as it is. A stale or invalid prune shows why and cannot be applied.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from core.automation.extraction import store_imported_reply
from core.documents.diff import DiffResult, apply_hunks, diff_texts
from core.errors import MemoryBackendError
from core.insights import (
    PruneValidationResult,
    read_working_memory,
    validate_prune_candidate,
)
from core.project import Changes
from core.proposals import (
    Proposal,
    ProposalError,
    PruneReview,
    apply_prune,
    reject_prune,
    store_prune_candidate,
)
from core.storage import fileio
from gui.proposal_text import STALE_BANNER, proposal_origin
from gui.session import ProjectSession
from gui.tasks import Operation, run_in_background
from gui.widgets.banner import Banner
from gui.widgets.colors import css
from gui.widgets.diff_view import SideBySideDiff
from gui.widgets.hunk_list import HunkList, reason_of
from gui.widgets.parts import view_action
from gui.widgets.prune_facts import PruneFacts

REVIEWABLE = ("pending", "stale", "invalid")
DECIDED = {"applied": "The prune of this proposal was applied.",
           "rejected": "The prune of this proposal was rejected; the memory was not changed."}
#: The view's keys (besides the change list's), for the tooltips and the Help menu's list.
SHORTCUTS = (("Ctrl+Return", "Apply prune (the accepted changes)"), ("Ctrl+Shift+R", "Reject the whole prune"),
             ("F7 / Shift+F7", "Next / previous change in the diff"))


@dataclass(frozen=True)
class PrunePreview:
    """What the worker computed: the memory it read (its text, hash and size), the diff and the validation."""

    memory_hash: str
    memory_size: int
    diff: DiffResult
    validation: PruneValidationResult
    seconds: float
    memory_text: str = ""
    #: What each agent chosen for the memory loads before → after the whole prune (design §8).
    budget: tuple[str, ...] = ()


def _budget_lines(root: Path, before: str, after: str) -> tuple[str, ...]:
    """The load budget of the memory before and after the prune, for its chosen consumers (never raises)."""
    try:
        from core.budget import chosen_consumer_ids, prune_budget
        from core.project import open_project

        project = open_project(root)
        ids = chosen_consumer_ids(project.memory_path, project.settings)
        return tuple(b.summary() for b in prune_budget(before, after, ids, project.memory_path))
    except Exception as exc:  # the budget is a help for the review, never a reason to fail it
        return (f"Load budget unavailable: {exc}",)


def compute_preview(root: Path, candidate: str) -> PrunePreview:
    """Read the working memory and diff it against ``candidate`` (runs on a worker thread)."""
    start = time.perf_counter()
    current = read_working_memory(root)
    diff = diff_texts(current, candidate)
    validation = validate_prune_candidate(candidate)
    return PrunePreview(fileio.content_hash(current), len(current), diff, validation,
                        time.perf_counter() - start, current, _budget_lines(root, current, candidate))


class PruneView(QWidget):
    """Review the prune of the stored proposal under review."""

    pruneApplied = Signal(object)  # PruneReview
    pruneRejected = Signal(object)  # PruneReview
    runExtractionRequested = Signal()

    def __init__(self, session: ProjectSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.proposal: Proposal | None = None
        self.preview: PrunePreview | None = None
        self.operation: Operation | None = None
        self._selection: tuple[tuple[object, ...], str, PruneValidationResult] | None = None
        self.banner = Banner(self)
        self.source_label = QLabel(self)
        self.source_label.setWordWrap(True)
        self.run_button = QPushButton("Run a new extraction…", self)
        self.load_button = QPushButton("Load candidate file…", self)
        self.load_button.setToolTip("Review a prune candidate from a file: an extraction reply, or markdown")
        self.facts = PruneFacts(self)
        self.budget_label = QLabel(self)
        self.budget_label.setObjectName("pruneBudget")
        self.budget_label.setWordWrap(True)
        self.budget_label.setVisible(False)
        self.validation_label = self.facts.validation_label
        self.sections_label = self.facts.sections_label
        self.sizes_label = self.facts.sizes_label
        self.hunks = HunkList(self)
        self.diff = SideBySideDiff(f"Current memory ({session.project.memory_path})", "Proposed prune", self)
        self.outcome_label = QLabel(self)
        self.outcome_label.setWordWrap(True)
        self.reason_edit = QLineEdit(self)
        self.reason_edit.setPlaceholderText("Reason for rejecting (optional)")
        self.reject_button = QPushButton("Reject prune", self)
        self.apply_button = QPushButton("Apply prune", self)
        self.apply_button.setDefault(True)
        for button, key, slot in ((self.apply_button, "Ctrl+Return", self.apply),
                                  (self.reject_button, "Ctrl+Shift+R", self.reject)):
            view_action(self, button.text(), key, slot)
            button.clicked.connect(slot)
        self.reject_button.setToolTip("Reject the whole prune; the memory stays as it is (Ctrl+Shift+R)")

        header = QHBoxLayout()
        header.addWidget(self.source_label, 1)
        header.addWidget(self.run_button)
        header.addWidget(self.load_button)
        self.splitter = splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.hunks)
        splitter.addWidget(self.diff)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        actions = QHBoxLayout()
        actions.addWidget(self.reason_edit, 1)
        actions.addWidget(self.reject_button)
        actions.addWidget(self.apply_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        layout.addLayout(header)
        layout.addWidget(self.facts)
        layout.addWidget(self.budget_label)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.outcome_label)
        layout.addLayout(actions)

        self.run_button.clicked.connect(self.runExtractionRequested)
        self.load_button.clicked.connect(self._choose_file)
        self.hunks.choicesChanged.connect(self._on_choices)
        self.hunks.hunkSelected.connect(self.diff.go_to_hunk)
        session.proposalChanged.connect(self._take_proposal)
        session.memoryReplaced.connect(self._on_memory_replaced)
        self._take_proposal(session.proposal)

    # -- the proposal --------------------------------------------------------------------------------
    @property
    def candidate(self) -> str | None:
        """The prune under review, or ``None``."""
        proposal = self.proposal
        return proposal.pruned_memory if proposal is not None and proposal.prune_status in REVIEWABLE else None

    @property
    def stale(self) -> bool:
        """True when the memory is no longer the one the extraction read (stored as stale, or seen so now)."""
        if self.proposal is None or self.candidate is None:
            return False
        if self.proposal.prune_status == "stale":
            return True
        return self.preview is not None and self.preview.memory_hash != self.proposal.memory_hash_at_start

    def refresh(self) -> None:
        """Recompute the diff against the memory as it is now."""
        self.recompute()

    def _take_proposal(self, proposal: Proposal | None) -> None:
        before = (self.proposal.id, self.candidate) if self.proposal is not None else None
        self.proposal = proposal
        same_prune = self.candidate is not None and before == (proposal.id, self.candidate)
        if not same_prune:
            self.banner.clear()
            self.outcome_label.clear()
            self.recompute()
        else:
            self._update_state()

    def recompute(self) -> None:
        """Diff the current memory against the candidate on a worker thread."""
        if self.operation is not None:
            self.operation.cancel()
            self.operation = None
        self.preview = None
        candidate, root = self.candidate, self.session.root
        self.hunks.set_hunks(None, {})
        if candidate is None:
            self.diff.set_busy(self._no_candidate_text())
            self._update_state()
            return
        self.diff.set_busy("Computing diff…")
        self._update_state()
        self.operation = run_in_background(lambda _token: compute_preview(root, candidate),
                                           self._on_preview, self._on_preview_error, parent=self)

    def _on_preview(self, preview: PrunePreview) -> None:
        self.operation = None
        self.preview = preview
        self.diff.set_diff(preview.diff)
        self.hunks.set_hunks(preview.diff, self.reasons)  # none accepted: the operator decides each
        total = sum(self.splitter.sizes())
        if total > 0:  # the change list as tall as its rows (up to a third), the diff gets the rest
            want = min(self.hunks.sizeHint().height(), total // 3)
            self.splitter.setSizes([want, total - want])

    @property
    def reasons(self) -> dict[str, str]:
        """The proposer's reason per removed line (stripped), from the reply's optional ``pruneReasons``."""
        proposal = self.proposal
        return {r.line.strip(): r.reason for r in proposal.prune_reasons} if proposal is not None else {}

    # -- the operator's selection of changes ------------------------------------------------------------
    def selection(self) -> tuple[str, PruneValidationResult] | None:
        """The text of the accepted changes and its validation (``None`` before the diff is ready)."""
        preview, candidate = self.preview, self.candidate
        if preview is None or candidate is None:
            return None
        accepted = tuple(self.hunks.accepted())
        if len(accepted) == len(preview.diff.hunks):
            return candidate, preview.validation
        key = (id(preview), candidate, accepted)
        if self._selection is None or self._selection[0] != key:  # asked for several times per change
            text = apply_hunks(preview.memory_text, candidate, preview.diff.hunks, accepted)
            self._selection = (key, text, validate_prune_candidate(text))
        return self._selection[1], self._selection[2]

    def _on_choices(self) -> None:
        preview = self.preview
        if preview is None:
            return
        rejected = set(self.hunks.rejected())
        self.diff.set_excluded([h for h in preview.diff.hunks if h.index in rejected])
        notes = {}
        for hunk in preview.diff.hunks:
            for row in range(hunk.row_start, hunk.row_end):
                line = preview.diff.rows[row].left
                reason = reason_of(line, self.reasons) if line is not None else ""
                if reason:
                    notes[row] = f"kept (you rejected this change); {reason}" if hunk.index in rejected else reason
        self.diff.set_notes(notes)
        self._update_state()

    def _on_preview_error(self, exc: BaseException) -> None:
        self.operation = None
        self.diff.set_busy("The diff could not be computed.")
        self.banner.show_message(f"Cannot read {self.session.project.memory_path}: {exc}", "error")
        self._update_state()

    def _no_candidate_text(self) -> str:
        proposal = self.proposal
        if proposal is None:
            return "No prune to review."
        if proposal.prune_status in DECIDED:
            return DECIDED[proposal.prune_status]
        return "There is no prune to review: the reply under review had no prunedMemory."

    def _on_memory_replaced(self, source: str) -> None:
        if source != "prune" and self.candidate is not None:
            self.recompute()

    # -- loading a candidate from a file ---------------------------------------------------------------
    def load_candidate_file(self, path: str | Path) -> bool:
        """Store a candidate from a file as a proposal and review it: an extraction reply or plain markdown."""
        path = Path(path)
        root = self.session.root
        try:
            text = self.session.worker.call(lambda: fileio.read_text(path), "")
            if text is None:
                raise ProposalError(f"{path} does not exist", "NOT_FOUND")
            if path.suffix.lower() == ".json" or text.lstrip().startswith(("{", "```")):
                run = self.session.worker.call(lambda: store_imported_reply(root, text, path.name),
                                               f"Importing {path.name}…")
                if run.ok and run.proposal_id is None:
                    raise ProposalError("the reply offers no prune and nothing new", "NOTHING")
                proposal = self.session.extraction_finished(run)
                if not run.ok:
                    raise ProposalError(run.message, run.error_kind or "failed")
            else:
                proposal = self.session.worker.call(lambda: store_prune_candidate(root, text, path.name),
                                                    f"Importing {path.name}…")
                self.session.set_proposal(proposal)
        except (ProposalError, MemoryBackendError) as exc:
            self.banner.show_message(f"Cannot review {path.name}: {exc}. Nothing was changed.", "error")
            return False
        if proposal is not None and not proposal.has_prune:
            self.banner.show_message(f"{path.name} is an extraction reply without a prunedMemory; its insights "
                                     "wait for review in Insights.", "warning")
        return True

    def _choose_file(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(
            self, "Load a prune candidate", str(self.session.root),
            "Extraction replies and markdown (*.json *.md *.txt);;All files (*)")
        if path:
            self.load_candidate_file(path)

    # -- state ---------------------------------------------------------------------------------------
    def apply_refusal(self) -> str | None:
        """Why Apply is disabled now (``None`` when it is enabled)."""
        proposal, preview = self.proposal, self.preview
        if proposal is None or self.candidate is None:
            return "There is no prune to apply."
        if self.stale:
            return STALE_BANNER
        if proposal.prune_status == "invalid" or (preview is not None and not preview.validation.valid):
            reason = preview.validation.reason if preview is not None else proposal.prune_message
            return f"The proposed prune cannot be applied: {reason}"
        if not self.session.can_write:
            return f'The "{self.session.backend.id}" backend cannot write memory.'
        if preview is None:
            return "The diff is being computed."
        if preview.diff.hunks and not self.hunks.accepted():
            return "No change is accepted: accept one, or reject the prune."
        selection = self.selection()
        if selection is not None and not selection[1].valid:
            return f"The accepted changes cannot be applied: {selection[1].reason}"
        return None

    def _update_state(self) -> None:
        proposal, preview = self.proposal, self.preview
        if proposal is None:
            self.source_label.setText("<b>No prune candidate.</b> Run an extraction, or import a reply in "
                                      "Insights, or load a candidate file.")
        else:
            self.source_label.setText(f"<b>Prune proposed by</b> {proposal_origin(proposal)}")
        self.facts.setVisible(preview is not None)
        selection = self.selection()
        if preview is not None:
            self.facts.show_facts(selection[1] if selection is not None else preview.validation,
                                  preview.memory_size, preview.seconds)
        self.budget_label.setVisible(bool(preview and preview.budget))
        if preview is not None and preview.budget:
            self.budget_label.setText("What agents load (before, then after the whole prune) — "
                                      + "; ".join(preview.budget))
        refusal = self.apply_refusal()
        total, accepted = len(preview.diff.hunks) if preview else 0, len(self.hunks.accepted())
        self.apply_button.setText("Apply prune" if accepted == total else f"Apply {accepted} of {total} changes")
        self.apply_button.setEnabled(refusal is None)
        self.apply_button.setToolTip(refusal or f"Replace {self.session.project.memory_path} with the accepted changes "
                                     "of the prune (the current version is kept in history) (Ctrl+Return)")
        if self.stale:
            self.banner.show_message(STALE_BANNER, "warning")
        elif self.banner.text() == STALE_BANNER:
            self.banner.clear()
        if refusal is not None and preview is not None and self.candidate is not None:
            self.outcome_label.setText(f"<b style='color:{css('error-fg')}'>Apply is disabled.</b> {refusal}")
        elif "Apply is disabled." in self.outcome_label.text():
            self.outcome_label.clear()  # the refusal is gone (a change accepted again)
        can_reject = proposal is not None and proposal.prune_status in ("pending", "stale")
        self.reject_button.setEnabled(can_reject)
        self.reason_edit.setEnabled(can_reject)
        self.run_button.setVisible(self.stale)

    # -- decisions -----------------------------------------------------------------------------------
    def apply(self) -> PruneReview | None:
        """Apply the prune through ``core.proposals`` (refused, and marked stale, if the memory changed)."""
        proposal, preview = self.proposal, self.preview
        if proposal is None or preview is None or not self.apply_button.isEnabled():
            return None
        selection = self.selection()
        partial = len(self.hunks.accepted()) < len(preview.diff.hunks)
        if selection is None or not selection[1].valid:  # validated again right before the write
            self.banner.show_message(f"Not applied: {self.apply_refusal()}", "error")
            return None
        try:
            candidate = selection[0] if partial else None
            review = self.session.worker.call(  # off the GUI thread: validates, writes 1 MiB, records history
                lambda: apply_prune(self.session.root, proposal.id, candidate=candidate), "Applying the prune…",
                disable=(self.apply_button, self.reject_button))
        except (ProposalError, MemoryBackendError) as exc:
            self.banner.show_message(f"Not applied: {exc}", "error")
            return None
        if review.outcome is not None:
            self.session.auditChanged.emit()
        if not review.applied:
            self.session.set_proposal(review.proposal)
            if review.proposal.prune_status != "stale":
                self.banner.show_message(f"Not applied: {review.message}", "error")
            self.recompute()
            return review
        outcome = review.outcome
        accepted, total = len(self.hunks.accepted()), len(preview.diff.hunks)
        self.session.set_proposal(review.proposal)
        which = f"{accepted} of {total} changes" if partial else "all changes"
        self.outcome_label.setText(
            f"<b style='color:{css('ok-fg')}'>Applied</b> ({which}). Memory went from {outcome.original_size:,} to "
            f"{outcome.new_size:,} characters ({outcome.size_delta:+,}); the previous version is in history.")
        self.session.apply(Changes(documents=frozenset({self.session.project.memory_path})), "prune")
        self.session.statusMessage.emit("Prune applied")
        self.pruneApplied.emit(review)
        return review

    def reject(self) -> PruneReview | None:
        """Reject the prune (with the optional reason); the memory is untouched and the audit says so."""
        proposal = self.proposal
        if proposal is None or not self.reject_button.isEnabled():
            return None
        try:
            reason = self.reason_edit.text()
            review = self.session.worker.call(lambda: reject_prune(self.session.root, proposal.id, reason=reason),
                                              "Rejecting the prune…", disable=(self.apply_button, self.reject_button))
        except (ProposalError, MemoryBackendError) as exc:
            self.banner.show_message(f"Not rejected: {exc}", "error")
            return None
        self.reason_edit.clear()
        self.session.set_proposal(review.proposal)
        self.outcome_label.setText(review.message if review.outcome is not None else f"Not rejected: {review.message}")
        if review.outcome is not None:
            self.session.auditChanged.emit()
            self.session.statusMessage.emit("Prune rejected")
        self.pruneRejected.emit(review)
        return review
