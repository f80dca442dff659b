"""Prune review: the current working memory against the proposed prune, side by side, before anything is written.

The diff is computed off the GUI thread. Apply writes the candidate only if the memory still is what
the diff was computed against (its hash), keeps the old version in history and records the outcome
in the audit; Reject records the rejection and leaves the memory as it is.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from core import fileio
from core.diff import DiffResult, diff_texts
from core.insights import (
    MEMORY_WORKING_PATH,
    REQUIRED_MEMORY_SECTIONS,
    InsightExtractionResult,
    InsightParseError,
    PruneValidationResult,
    parse_insight_extraction_response,
    read_working_memory,
    validate_prune_candidate,
)
from core.review import ReviewedPrune, apply_reviewed_prune, reject_prune
from gui.session import ProjectSession
from gui.tasks import Operation, run_in_background
from gui.widgets.banner import Banner
from gui.widgets.colors import css
from gui.widgets.diff_view import SideBySideDiff

FROM_PROPOSAL = "the extraction reply under review"


@dataclass(frozen=True)
class PrunePreview:
    """What the worker computed: the memory it read (hash and size), the diff and the validation."""

    memory_hash: str
    memory_size: int
    diff: DiffResult
    validation: PruneValidationResult
    seconds: float


def compute_preview(root: Path, candidate: str) -> PrunePreview:
    """Read the working memory and diff it against ``candidate`` (runs on a worker thread)."""
    start = time.perf_counter()
    current = read_working_memory(root)
    diff = diff_texts(current, candidate)
    validation = validate_prune_candidate(candidate)
    return PrunePreview(fileio.content_hash(current), len(current), diff, validation,
                        time.perf_counter() - start)


class PruneView(QWidget):
    """Review a proposed prune of the working memory."""

    pruneApplied = Signal(object)  # ReviewedPrune
    pruneRejected = Signal(object)  # ReviewedPrune

    def __init__(self, session: ProjectSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.candidate: str | None = None
        self.origin = ""
        self.preview: PrunePreview | None = None
        self.operation: Operation | None = None
        self.banner = Banner(self)
        self.source_label = QLabel(self)
        self.source_label.setWordWrap(True)
        self.load_button = QPushButton("Load candidate file…", self)
        self.validation_label = QLabel(self)
        self.sections_label = QLabel(self)
        self.sizes_label = QLabel(self)
        self.diff = SideBySideDiff("Current memory (.fusion/memory.md)", "Proposed prune", self)
        self.outcome_label = QLabel(self)
        self.outcome_label.setWordWrap(True)
        self.reason_edit = QLineEdit(self)
        self.reason_edit.setPlaceholderText("Reason for rejecting (optional)")
        self.reason_edit.setMinimumWidth(self.reason_edit.fontMetrics().horizontalAdvance("x" * 40))
        self.reject_button = QPushButton("Reject", self)
        self.apply_button = QPushButton("Apply prune", self)

        header = QHBoxLayout()
        header.addWidget(self.source_label, 1)
        header.addWidget(self.load_button)
        facts = QHBoxLayout()
        for widget in (self.validation_label, self.sections_label, self.sizes_label):
            facts.addWidget(widget)
            facts.addSpacing(24)
        facts.addStretch(1)
        actions = QHBoxLayout()
        actions.addWidget(self.outcome_label, 1)
        actions.addWidget(self.reason_edit)
        actions.addWidget(self.reject_button)
        actions.addWidget(self.apply_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        layout.addLayout(header)
        layout.addLayout(facts)
        layout.addWidget(self.diff, 1)
        layout.addLayout(actions)

        self.load_button.clicked.connect(self._choose_file)
        self.apply_button.clicked.connect(self.apply)
        self.reject_button.clicked.connect(self.reject)
        session.proposalChanged.connect(self._take_proposal)
        session.memoryReplaced.connect(self._on_memory_replaced)
        self.refresh()

    # -- candidate -----------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Take the prune candidate from the session's proposal if it is new, else recompute the diff."""
        if self._take_proposal(self.session.proposal):
            return
        if self.candidate is not None:
            self.recompute()
        else:
            self._update_state()

    def _take_proposal(self, proposal: object) -> bool:
        """Follow the proposal's prune candidate; True when that changed what is reviewed."""
        pruned = getattr(proposal, "pruned_memory", None)
        if pruned is not None and (pruned != self.candidate or self.origin != FROM_PROPOSAL):
            self.banner.clear()
            self.set_candidate(pruned, FROM_PROPOSAL)
            return True
        if pruned is None and self.origin == FROM_PROPOSAL:
            self._clear("The extraction reply under review offers no prune.")
            return True
        return False

    def load_candidate_file(self, path: str | Path) -> bool:
        """Load a candidate from a file: an extraction reply (its ``prunedMemory``) or plain markdown."""
        path = Path(path)
        try:
            text = fileio.read_text(path) or ""
        except Exception as exc:
            self.banner.show_message(f"Cannot read {path.name}: {exc}", "error")
            return False
        candidate = text
        if path.suffix.lower() == ".json" or text.lstrip().startswith(("{", "```")):
            try:
                reply = parse_insight_extraction_response(text)
            except InsightParseError as exc:
                self.banner.show_message(f"{path.name} is not an extraction reply: {exc}", "error")
                return False
            if reply.pruned_memory is None:
                self.banner.show_message(f"{path.name} is an extraction reply without a prunedMemory.", "error")
                return False
            candidate = reply.pruned_memory
        self.banner.clear()
        self.set_candidate(candidate, path.name)
        return True

    def set_candidate(self, candidate: str, origin: str) -> None:
        """Review ``candidate`` (from ``origin``, said in the header)."""
        self.candidate, self.origin = candidate, origin
        self.outcome_label.clear()
        self.recompute()

    def recompute(self) -> None:
        """Diff the current memory against the candidate on a worker thread."""
        if self.operation is not None:
            self.operation.cancel()
        self.preview = None
        if self.candidate is None:
            return
        self.diff.set_busy("Computing diff…")
        self._update_state()
        candidate, root = self.candidate, self.session.root
        self.operation = run_in_background(lambda _token: compute_preview(root, candidate),
                                           self._on_preview, self._on_preview_error, parent=self)

    def _on_preview(self, preview: PrunePreview) -> None:
        self.operation = None
        self.preview = preview
        self.diff.set_diff(preview.diff)
        self._update_state()

    def _on_preview_error(self, exc: BaseException) -> None:
        self.operation = None
        self.diff.set_busy("The diff could not be computed.")
        self.banner.show_message(f"Cannot read {MEMORY_WORKING_PATH}: {exc}", "error")
        self._update_state()

    def _clear(self, message: str) -> None:
        if self.operation is not None:
            self.operation.cancel()
            self.operation = None
        self.candidate, self.origin, self.preview = None, "", None
        self.diff.set_busy(message)
        self._update_state()

    def _choose_file(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(
            self, "Load a prune candidate", str(self.session.root),
            "Extraction replies and markdown (*.json *.md *.txt);;All files (*)")
        if path:
            self.load_candidate_file(path)

    def _on_memory_replaced(self, source: str) -> None:
        if source != "prune" and self.candidate is not None:
            self.recompute()

    # -- state ---------------------------------------------------------------------------------------
    def _update_state(self) -> None:
        preview = self.preview
        if self.candidate is None:
            self.source_label.setText("<b>No prune candidate.</b> Import an extraction reply in Insights, "
                                      "or load a candidate file.")
        else:
            self.source_label.setText(f"<b>Prune candidate</b> from {self.origin}")
        for label in (self.validation_label, self.sections_label, self.sizes_label):
            label.setVisible(preview is not None)
        if preview is not None:
            self._show_validation(preview)
        can_write = self.session.can_write
        self.apply_button.setEnabled(preview is not None and preview.validation.valid and can_write)
        self.apply_button.setToolTip("" if can_write else
                                     f'The "{self.session.backend.id}" backend cannot write memory.')
        self.reject_button.setEnabled(self.candidate is not None)
        self.reason_edit.setEnabled(self.candidate is not None)

    def _show_validation(self, preview: PrunePreview) -> None:
        valid = preview.validation
        mark, colour = ("✓ Valid", "ok-fg") if valid.valid else ("✗ Invalid", "error-fg")
        self.validation_label.setText(f"<b style='color:{css(colour)}'>{mark}</b> — {valid.reason}")
        parts = []
        for name in REQUIRED_MEMORY_SECTIONS:
            kept = name in valid.found_sections
            parts.append(f"<span style='color:{css('ok-fg' if kept else 'error-fg')}'>"
                         f"{'✓' if kept else '✗'} {name}</span>")
        self.sections_label.setText("Sections kept: " + "  ".join(parts))
        before, after = preview.memory_size, valid.size + 1 if valid.size else 0
        delta = after - before
        percent = f", {delta / before:+.1%}" if before else ""
        self.sizes_label.setText(f"Size: {before:,} → {after:,} characters ({delta:+,}{percent})")
        self.sizes_label.setToolTip(f"Diff computed in {preview.seconds * 1000:.0f} ms")

    # -- decisions -----------------------------------------------------------------------------------
    def apply(self) -> ReviewedPrune | None:
        """Write the candidate if valid and the memory is unchanged since the diff; say what happened."""
        if self.preview is None or self.candidate is None or not self.apply_button.isEnabled():
            return None
        reviewed = apply_reviewed_prune(self.session.root, self.candidate, self.preview.memory_hash)
        outcome = reviewed.outcome
        if not outcome.applied:
            self.banner.show_message(f"Not applied: {outcome.reason}. The diff has been recomputed against "
                                     "the memory as it is now; review it again.", "error")
            self.recompute()
            return reviewed
        note = "" if reviewed.recorded else f" The audit could not be updated: {reviewed.audit_error}"
        self.banner.clear()
        from_proposal = self.origin == FROM_PROPOSAL
        self._clear("The prune was applied.")
        if from_proposal:
            self._drop_prune_from_proposal()
        self.outcome_label.setText(
            f"<b style='color:{css('ok-fg')}'>Applied.</b> Memory went from {outcome.original_size:,} to "
            f"{outcome.new_size:,} characters ({outcome.size_delta:+,}); the previous version is in history.{note}")
        self.session.memoryReplaced.emit("prune")
        self.session.auditChanged.emit()
        self.session.statusMessage.emit("Prune applied")
        self.pruneApplied.emit(reviewed)
        return reviewed

    def reject(self) -> ReviewedPrune | None:
        """Record the rejection (with the optional reason) and drop the candidate; memory is untouched."""
        if self.candidate is None:
            return None
        reviewed = reject_prune(self.session.root, self.reason_edit.text())
        self.reason_edit.clear()
        from_proposal = self.origin == FROM_PROPOSAL
        self._clear("The prune was rejected; the memory was not changed.")
        if from_proposal:
            self._drop_prune_from_proposal()
        self.outcome_label.setText("Rejected; the memory was not changed."
                                   + ("" if reviewed.recorded else f" (audit not updated: {reviewed.audit_error})"))
        self.session.auditChanged.emit()
        self.pruneRejected.emit(reviewed)
        return reviewed

    def _drop_prune_from_proposal(self) -> None:
        """Clear the prune from the session's proposal, keeping its insights for their own review."""
        proposal = self.session.proposal
        if isinstance(proposal, InsightExtractionResult) and proposal.pruned_memory is not None:
            self.session.set_proposal(dataclasses.replace(proposal, pruned_memory=None)
                                      if proposal.insights else None)
