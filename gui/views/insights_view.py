"""Insights: the insights file grouped by category (or raw, to edit), and the stored proposal under review.

The proposal under review is the session's (:class:`core.proposals.Proposal`): one stored by a run
in the app, by ``memdesk extract`` or the schedule, or by importing a saved AI reply. Its insights
are listed for review, grouped by category (those the file holds meanwhile are flagged "already
present"), each with the line of the working memory it came from: ``openSourceRequested(path, line)``
asks for that line. Its prune goes to the prune view. "Merge" saves the decisions through
``core.proposals``: the accepted insights are merged into the file, the rejected ones marked rejected.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFileDialog, QSplitter, QVBoxLayout, QWidget

from core.automation.extraction import ExtractionRun, store_imported_reply
from core.errors import MemoryBackendError
from core.insights import is_duplicate_insight
from core.project import Changes
from core.proposals import Proposal, ProposalError, accept_insights, reject_insights
from core.storage import fileio
from gui.models import ReviewItem
from gui.proposal_text import (
    find_source_lines,
    plural,
    proposal_facts,
    proposal_label,
    proposal_origin,
    run_outcome,
)
from gui.session import ProjectSession
from gui.widgets.banner import Banner
from gui.widgets.insights_file_panel import InsightsFilePanel
from gui.widgets.proposals_panel import ProposalsPanel


class InsightsView(QWidget):
    """The insights file beside the proposals waiting for review."""

    insightsMerged = Signal(object)  # the Proposal after the decisions were saved
    runExtractionRequested = Signal()
    openSourceRequested = Signal(str, int)  # a memory document's project-relative path, a 1-based line

    def __init__(self, session: ProjectSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.text: str | None = None
        self.raw_base_hash = fileio.content_hash("")
        self.shown_id: str | None = None
        self.banner = Banner(self)
        self.file_panel = InsightsFilePanel(self)
        self.proposals = ProposalsPanel(self)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(self.file_panel)
        splitter.addWidget(self.proposals)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)
        splitter.setSizes([500, 780])
        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        layout.addWidget(splitter, 1)

        self.file_panel.saveRequested.connect(self.save_raw)
        self.file_panel.reloadRequested.connect(lambda: self.refresh(keep_edits=False))
        self.proposals.importRequested.connect(self._choose_reply)
        self.proposals.runExtractionRequested.connect(self.runExtractionRequested)
        self.proposals.proposalChosen.connect(self.review)
        self.proposals.mergeRequested.connect(self.merge)
        self.proposals.sourceRequested.connect(self.open_source)
        session.insightsChanged.connect(self.refresh)
        session.proposalChanged.connect(self._show_proposal)
        session.memoryReplaced.connect(lambda _source: self._relocate_sources())
        self.refresh()
        self._show_proposal(session.proposal)

    @property
    def insights_path(self) -> str:
        """Where this project's layout keeps the insights."""
        return self.session.project.insights_path

    # -- the insights file ---------------------------------------------------------------------------
    def refresh(self, keep_edits: bool = True) -> None:
        """Re-read the insights file; raw edits in progress are kept unless ``keep_edits`` is False."""
        try:
            project = self.session.project
            text = self.session.worker.call(lambda: project.read_insights(), "")  # through the backend
        except MemoryBackendError as exc:
            self.banner.show_message(f"Cannot read {self.insights_path}: {exc}", "error")
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
            base = self.raw_base_hash
            result = self.session.worker.call(
                lambda: self.session.project.write_insights(text, expected_hash=base, source="insights-edit"),
                f"Saving {self.insights_path}…")
        except MemoryBackendError as exc:
            if exc.code == "CONFLICT":
                self.banner.show_message(
                    f"Not saved: {self.insights_path} changed on disk since you started editing it. Your text "
                    "is kept in the editor; copy what you need, then Reload to see the file as it is now.",
                    "error")
            else:
                self.banner.show_message(f"Not saved: {exc}", "error")
            return False
        self.file_panel.mark_saved(f"Saved {self.insights_path}.")
        self.session.apply(result.changes | Changes(insights=True), "insights-edit")  # refreshes this view too
        return True

    # -- the proposal under review -------------------------------------------------------------------
    def _show_proposal(self, proposal: Proposal | None) -> None:
        """Show ``proposal``; choices not saved yet are kept while it is the same one."""
        keep = {i.number: i.choice for i in self.proposals.model.rows
                if self.shown_id is not None and proposal is not None and proposal.id == self.shown_id}
        self.shown_id = proposal.id if proposal is not None else None
        self._list_choices(proposal)
        if proposal is None:
            self.proposals.set_proposal_text("", "")
            self.proposals.set_items([])
            return
        self.proposals.set_proposal_text(
            f"<b>Under review:</b> from {proposal_origin(proposal)} · {proposal_facts(proposal)}", proposal.summary)
        lines = self._source_lines([(i.insight.content, i.insight.source) for i in proposal.insights])
        items = [ReviewItem(i.number, i.insight, i.status, is_duplicate_insight(self.text, i.insight.content),
                            keep.get(i.number, "") if i.status != "accepted" else "", line)
                 for i, line in zip(proposal.insights, lines, strict=True)]
        self.proposals.set_items(items)

    # -- where each insight came from ------------------------------------------------------------------
    def _source_lines(self, proposals: list[tuple[str, str | None]]) -> list[int | None]:
        try:
            project = self.session.project  # the long-term document the extraction read (on the worker)
            memory = self.session.worker.call(lambda: project.read(), "")
        except MemoryBackendError:
            return [None] * len(proposals)  # the links are a convenience; the review goes on without them
        return find_source_lines(memory, proposals)

    def _relocate_sources(self) -> None:
        model = self.proposals.model
        lines = self._source_lines([(i.insight.content, i.insight.source) for i in model.rows])
        items = [replace(i, source_line=line) for i, line in zip(model.rows, lines, strict=True)]
        if items != model.rows:
            self.proposals.set_items(items)

    def open_source(self, number: int) -> bool:
        """Ask for the memory line insight ``number`` came from; False (and says so) when it was not found."""
        item = next((i for i in self.proposals.model.rows if i.number == number), None)
        if item is None:
            return False
        path = self.session.project.memory_path
        if item.source_line is None:
            self.proposals.status.setText(f"Insight {number}'s source ({item.insight.source or 'none given'}) "
                                          f"is not in {path} any more.")
            return False
        self.openSourceRequested.emit(path, item.source_line)
        return True

    def _list_choices(self, current: Proposal | None) -> None:
        try:
            pending = self.session.pending_proposals()
        except Exception as exc:  # the picker is a convenience; the proposal under review still shows
            self.banner.show_message(f"Cannot list the stored proposals: {exc}", "error")
            pending = []
        if current is not None and all(p.id != current.id for p in pending):
            pending.append(current)
        choices = [(p.id, proposal_label(p)) for p in reversed(pending)]  # newest first
        self.proposals.set_choices(choices, current.id if current else None)

    def _reflag_duplicates(self) -> None:
        model = self.proposals.model
        items = [replace(i, duplicate=is_duplicate_insight(self.text, i.insight.content)) for i in model.rows]
        if items != model.rows:
            self.proposals.set_items(items)

    def review(self, proposal_id: str) -> bool:
        """Review the stored proposal ``proposal_id`` instead."""
        try:
            self.session.review_proposal(proposal_id)
        except (ProposalError, MemoryBackendError) as exc:
            self.banner.show_message(f"Cannot open proposal {proposal_id}: {exc}", "error")
            self._list_choices(self.session.proposal)
            return False
        self.banner.clear()
        return True

    def _show_stored(self, proposal_id: str) -> None:
        try:
            self.session.review_proposal(proposal_id)
        except (ProposalError, MemoryBackendError):
            self.session.set_proposal(None)

    def merge(self, accepted: list[int], rejected: list[int]) -> Proposal | None:
        """Save the decisions: merge the ``accepted`` insights into the file, mark the ``rejected`` ones."""
        proposal = self.session.proposal
        if proposal is None or not (accepted or rejected):
            return None
        added = present = 0
        root, pid = self.session.root, proposal.id

        def decide() -> tuple[int, int, Proposal]:  # on the project's worker: merges into the insights file
            added, present, result = 0, 0, proposal
            if accepted:
                review = accept_insights(root, pid, accepted)
                added, present, result = review.added, review.already_present, review.proposal
            if rejected:
                result = reject_insights(root, pid, rejected).proposal
            return added, present, result

        try:
            added, present, proposal = self.session.worker.call(decide, "Saving the insight decisions…")
        except (ProposalError, MemoryBackendError) as exc:
            self.banner.show_message(f"Not saved: {exc}", "error")
            self._show_stored(proposal.id)  # what did get saved
            return None
        self.banner.clear()
        parts = []
        if accepted:
            parts.append(f"Merged {plural(added, 'insight')} into {self.insights_path}"
                         + (f" ({present} already present)" if present else ""))
        if rejected:
            parts.append(f"rejected {plural(len(rejected), 'insight')}")
        message = "; ".join(parts) + "."
        message = message[0].upper() + message[1:]
        self.session.set_proposal(proposal)
        if added:  # refreshes this view too
            self.session.apply(Changes(documents=frozenset({self.insights_path}), insights=True, audit=True),
                               "insights-merge")
        self.proposals.status.setText(message)
        self.session.statusMessage.emit(message)
        self.insightsMerged.emit(proposal)
        return proposal

    # -- importing a saved reply ---------------------------------------------------------------------
    def import_reply(self, path: str | Path) -> bool:
        """Store a saved AI extraction reply as a proposal and review it; a bad file changes nothing."""
        path = Path(path)
        try:
            root = self.session.root

            def store() -> object:  # on the project's worker: reads the reply, writes the proposal
                text = fileio.read_text(path)
                if text is None:
                    raise ProposalError(f"{path} does not exist", "NOT_FOUND")
                return store_imported_reply(root, text, path.name)

            run = self.session.worker.call(store, f"Importing {path.name}…")
        except (MemoryBackendError, ProposalError) as exc:
            self.banner.show_message(f"Could not import {path.name}: {exc}. Nothing was changed.", "error")
            return False
        return self._take_import(run, path.name)

    def _take_import(self, run: ExtractionRun, name: str) -> bool:
        try:
            proposal = self.session.extraction_finished(run)
        except (ProposalError, MemoryBackendError) as exc:
            self.banner.show_message(f"Imported {name}, but its proposal cannot be opened: {exc}", "error")
            return False
        if not run.ok:
            self.banner.show_message(f"Could not import {name}: {run.message}. Only the audit records it.", "error")
            return False
        self.banner.clear()
        message = f"Imported {name}: " + run_outcome(run, proposal).removeprefix("Extraction done: ")
        self.proposals.status.setText(message)
        self.session.statusMessage.emit(message)
        return True

    def _choose_reply(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(
            self, "Import an extraction result", str(self.session.root),
            "AI replies (*.json *.txt *.md);;All files (*)")
        if path:
            self.import_reply(path)
