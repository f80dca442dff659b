"""The stored proposal under review: which one (a picker when several wait), what it holds, and its
proposed insights to accept or reject before the decisions are saved.

The panel does no I/O. ``runExtractionRequested`` and ``importRequested`` ask for a new proposal,
``proposalChosen(id)`` for another stored one, ``mergeRequested(accepted, rejected)`` hands over the
numbers of the insights the operator accepted and rejected.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from gui.models import ProposalTableModel, ReviewItem

NO_PROPOSAL = ("<b>No proposal under review.</b> Run an extraction (Ctrl+Shift+E) or import a saved reply; "
               "proposals stored by <code>memdesk extract</code> or the schedule show up here.")


def merge_text(accepted: int, rejected: int) -> str:
    """The merge button's text for the choices made so far."""
    if accepted and rejected:
        return f"Merge {accepted}, reject {rejected}"
    if rejected:
        return f"Reject {rejected}"
    return f"Merge accepted ({accepted})" if accepted else "Merge accepted"


class ProposalsPanel(QWidget):
    """The proposal under review and its proposed insights, with a check box (accept) per row."""

    runExtractionRequested = Signal()
    importRequested = Signal()
    proposalChosen = Signal(str)  # a stored proposal's id
    mergeRequested = Signal(list, list)  # numbers accepted, numbers rejected

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ProposalTableModel(self)
        self.title = QLabel("<b>Proposed insights</b>", self)
        self.run_button = QPushButton("Run extraction…", self)
        self.run_button.setToolTip("Ask a model provider for insights and a prune (Ctrl+Shift+E)")
        self.import_button = QPushButton("Import extraction result…", self)
        self.import_button.setToolTip("Store a saved AI reply (JSON, or text holding the JSON) for review")
        self.picker_label = QLabel("Pending proposals:", self)
        self.picker = QComboBox(self)
        self.picker.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.origin = QLabel(self)
        self.origin.setWordWrap(True)
        self.origin.setTextFormat(Qt.TextFormat.RichText)
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        self.table = QTableView(self)
        self.table.setModel(self.model)
        self.table.setWordWrap(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        for column in range(self.model.columnCount()):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        header.sectionResized.connect(lambda *_: self.table.resizeRowsToContents())
        self.accept_button = QPushButton("Accept", self)
        self.reject_button = QPushButton("Reject", self)
        self.accept_new_button = QPushButton("Accept all new", self)
        self.merge_button = QPushButton("Merge accepted", self)
        self.merge_button.setDefault(True)
        self.merge_button.setToolTip("Merge the accepted insights into .fusion/memory-insights.md and save "
                                     "every decision in the proposal")
        self.status = QLabel(self)
        self.status.setWordWrap(True)

        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.run_button)
        top.addWidget(self.import_button)
        picker_row = QHBoxLayout()
        picker_row.addWidget(self.picker_label)
        picker_row.addWidget(self.picker, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.accept_button)
        buttons.addWidget(self.reject_button)
        buttons.addWidget(self.accept_new_button)
        buttons.addStretch(1)
        buttons.addWidget(self.merge_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addLayout(picker_row)
        layout.addWidget(self.origin)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.status)

        self.run_button.clicked.connect(self.runExtractionRequested)
        self.import_button.clicked.connect(self.importRequested)
        self.picker.activated.connect(self._on_picked)
        self.accept_button.clicked.connect(lambda: self._choose_selected("accepted"))
        self.reject_button.clicked.connect(lambda: self._choose_selected("rejected"))
        self.accept_new_button.clicked.connect(self.accept_all_new)
        self.merge_button.clicked.connect(
            lambda: self.mergeRequested.emit(self.model.chosen("accepted"), self.model.chosen("rejected")))
        self.model.dataChanged.connect(lambda *_: self._update_buttons())
        self.model.modelReset.connect(self._update_buttons)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._update_buttons())
        self.set_choices([], None)
        self.set_proposal_text("", "")

    # -- setters -------------------------------------------------------------------------------------
    def set_choices(self, choices: list[tuple[str, str]], current: str | None) -> None:
        """List the stored proposals (``(id, label)``) to pick from; shown only when there are several."""
        self.picker.blockSignals(True)
        self.picker.clear()
        for proposal_id, label in choices:
            self.picker.addItem(label, proposal_id)
        self.picker.setCurrentIndex(max(0, self.picker.findData(current)) if choices else -1)
        self.picker.blockSignals(False)
        for widget in (self.picker_label, self.picker):
            widget.setVisible(len(choices) > 1)
        self.picker_label.setText(f"{len(choices)} proposals:")

    def set_proposal_text(self, origin_html: str, summary: str) -> None:
        """Say which proposal is under review (``origin_html``; empty: none) and the reply's ``summary``."""
        self.origin.setText(origin_html or NO_PROPOSAL)
        self.summary.setText(f"<i>“{summary}”</i>" if summary else "")
        self.summary.setVisible(bool(summary))

    def set_items(self, items: list[ReviewItem]) -> None:
        """Show the proposed insights."""
        self.model.set_rows(items)
        self.table.resizeRowsToContents()

    def set_row_choice(self, row: int, choice: str) -> None:
        """Choose ``accepted``, ``rejected`` or ``""`` for row ``row`` (as its buttons do)."""
        self.model.set_choice(row, choice)

    def select_row(self, row: int) -> None:
        """Select row ``row`` (as a click would)."""
        self.table.selectRow(row)
        self.table.setCurrentIndex(self.model.index(row, 0))
        self.table.scrollTo(self.model.index(row, 0), QAbstractItemView.ScrollHint.EnsureVisible)
        self.table.setFocus(Qt.FocusReason.OtherFocusReason)

    # -- choices -------------------------------------------------------------------------------------
    def _choose_selected(self, choice: str) -> None:
        for index in self.table.selectionModel().selectedRows():
            self.model.set_choice(index.row(), choice)

    def accept_all_new(self) -> None:
        """Accept every undecided insight the file does not hold yet."""
        for row, item in enumerate(self.model.rows):
            if item.state == "pending" and not item.duplicate:
                self.model.set_choice(row, "accepted")

    def _on_picked(self, index: int) -> None:
        proposal_id = self.picker.itemData(index)
        if proposal_id:
            self.proposalChosen.emit(str(proposal_id))

    def _update_buttons(self) -> None:
        items = self.model.rows
        selected = bool(self.table.selectionModel().selectedRows()) if self.table.selectionModel() else False
        self.accept_button.setEnabled(selected)
        self.reject_button.setEnabled(selected)
        self.accept_new_button.setEnabled(any(i.state == "pending" and not i.duplicate for i in items))
        accepted, rejected = len(self.model.chosen("accepted")), len(self.model.chosen("rejected"))
        self.merge_button.setEnabled(bool(accepted or rejected))
        self.merge_button.setText(merge_text(accepted, rejected))
        if items:
            decided = sum(i.state != "pending" for i in items)
            unsaved = accepted + rejected
            self.status.setText(f"{decided} of {len(items)} decided"
                                + (f" · {unsaved} not saved yet" if unsaved else " · all saved"))
        else:
            self.status.clear()
