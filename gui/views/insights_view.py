"""Insights: the insights file grouped by category (or raw, to edit), and the proposed insights to review.

Importing a saved AI extraction reply makes it the session's proposal: its insights are listed for
review (duplicates of existing bullets flagged "already present") and its prune candidate goes to
the prune view. "Merge accepted" writes only the accepted insights, through ``core.review``.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFileDialog, QSplitter, QVBoxLayout, QWidget

from core import fileio
from core.errors import MemoryBackendError
from core.insights import (
    MEMORY_INSIGHTS_PATH,
    InsightParseError,
    MemoryInsight,
    is_duplicate_insight,
    parse_insight_extraction_response,
    read_insights_memory,
)
from core.review import AcceptOutcome, accept_insights
from gui.models import ReviewItem
from gui.session import ProjectSession
from gui.widgets.banner import Banner
from gui.widgets.insights_file_panel import InsightsFilePanel
from gui.widgets.proposals_panel import ProposalsPanel


class InsightsView(QWidget):
    """The insights file beside the proposals waiting for review."""

    insightsMerged = Signal(object)  # AcceptOutcome

    def __init__(self, session: ProjectSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.text: str | None = None
        self.raw_base_hash = fileio.content_hash("")
        self.banner = Banner(self)
        self.file_panel = InsightsFilePanel(self)
        self.proposals = ProposalsPanel(self)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(self.file_panel)
        splitter.addWidget(self.proposals)
        splitter.setSizes([620, 660])
        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        layout.addWidget(splitter, 1)

        self.file_panel.saveRequested.connect(self.save_raw)
        self.file_panel.reloadRequested.connect(lambda: self.refresh(keep_edits=False))
        self.proposals.importRequested.connect(self._choose_reply)
        self.proposals.mergeRequested.connect(self.merge)
        session.insightsChanged.connect(self.refresh)
        session.proposalChanged.connect(self._show_proposal)
        self.refresh()
        self._show_proposal(session.proposal)

    # -- the insights file ---------------------------------------------------------------------------
    def refresh(self, keep_edits: bool = True) -> None:
        """Re-read the insights file; raw edits in progress are kept unless ``keep_edits`` is False."""
        try:
            text = read_insights_memory(self.session.root)
        except MemoryBackendError as exc:
            self.banner.show_message(f"Cannot read {MEMORY_INSIGHTS_PATH}: {exc}", "error")
            self.text = None
            self.file_panel.set_text(None, keep_edits=False)
            self.file_panel.set_read_only(True, "The file cannot be read, so it cannot be edited here.")
            return
        self.banner.clear()
        self.text = text
        self.file_panel.set_read_only(False)
        if not (keep_edits and self.file_panel.raw_modified()):
            self.raw_base_hash = fileio.content_hash(text or "")
        self.file_panel.set_text(text, keep_edits=keep_edits)
        self._reflag_duplicates()

    def save_raw(self, text: str) -> bool:
        """Save the raw text, unless the file changed since it was loaded (then nothing is written)."""
        try:
            fileio.replace_text(self.session.root, MEMORY_INSIGHTS_PATH, text,
                                expected_hash=self.raw_base_hash, source="insights-edit")
        except MemoryBackendError as exc:
            if exc.code == "CONFLICT":
                self.banner.show_message(
                    f"Not saved: {MEMORY_INSIGHTS_PATH} changed on disk since you started editing it. Your text "
                    "is kept in the editor; copy what you need, then Reload to see the file as it is now.",
                    "error")
            else:
                self.banner.show_message(f"Not saved: {exc}", "error")
            return False
        self.file_panel.mark_saved(f"Saved {MEMORY_INSIGHTS_PATH}.")
        self.session.insightsChanged.emit()  # refreshes this view too
        return True

    # -- proposals -----------------------------------------------------------------------------------
    def import_reply(self, path: str | Path) -> bool:
        """Read a saved AI extraction reply and make it the proposal under review; a bad file changes nothing."""
        path = Path(path)
        try:
            text = fileio.read_text(path)
            if text is None:
                raise FileNotFoundError(f"{path} does not exist")
            result = parse_insight_extraction_response(text)
        except (MemoryBackendError, InsightParseError, FileNotFoundError) as exc:
            self.banner.show_message(f"Could not import {path.name}: {exc}. Nothing was changed.", "error")
            return False
        self.banner.clear()
        self.session.set_proposal(result)
        present = sum(p.duplicate for p in self.proposals.model.proposals)
        prune = " and a prune candidate (review it in Prune)" if result.pruned_memory is not None else ""
        message = (f"Imported {len(result.insights)} proposed insights ({present} already present){prune} "
                   f"from {path.name}.")
        self.proposals.status.setText(message)
        self.session.statusMessage.emit(message)
        return True

    def _choose_reply(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(
            self, "Import an extraction result", str(self.session.root),
            "AI replies (*.json *.txt *.md);;All files (*)")
        if path:
            self.import_reply(path)

    def _show_proposal(self, proposal: object) -> None:
        insights = tuple(getattr(proposal, "insights", ()) or ())
        shown = tuple(p.insight for p in self.proposals.model.proposals)
        summary = str(getattr(proposal, "summary", "") or "")
        if insights == shown and shown:
            return  # the same proposal (its prune was decided): keep the decisions made so far
        rows = [ReviewItem(i, is_duplicate_insight(self.text, i.content)) for i in insights]
        self.proposals.set_proposals(rows, summary)

    def _reflag_duplicates(self) -> None:
        model = self.proposals.model
        rows = [ReviewItem(p.insight, is_duplicate_insight(self.text, p.insight.content), p.decision)
                for p in model.proposals]
        if rows != model.proposals:
            self.proposals.set_proposals(rows, self.proposals.summary.text())

    def merge(self, insights: list[MemoryInsight]) -> AcceptOutcome | None:
        """Merge the accepted ``insights`` into the insights file and mark them merged."""
        if not insights:
            return None
        try:
            outcome = accept_insights(self.session.root, insights)
        except MemoryBackendError as exc:
            self.banner.show_message(f"Not merged: {exc}", "error")
            return None
        model = self.proposals.model
        for row, proposal in enumerate(model.proposals):
            if proposal.decision == "accepted" and proposal.insight in insights:
                model.set_decision(row, "merged")
        skipped = f" ({len(outcome.skipped)} already present)" if outcome.skipped else ""
        message = f"Merged {outcome.added_count} insights into {MEMORY_INSIGHTS_PATH}{skipped}."
        self.session.insightsChanged.emit()  # refreshes this view too
        self.proposals.status.setText(message)
        self.session.statusMessage.emit(message)
        self.insightsMerged.emit(outcome)
        return outcome
