"""Proposed insights under review: accept or reject each, then ask for the accepted ones to be merged.

The panel does no I/O: ``importRequested`` asks for a reply file to be chosen and read,
``mergeRequested(insights)`` hands over the accepted insights.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from gui.models import ProposalTableModel, ReviewItem


class ProposalsPanel(QWidget):
    """The proposed insights as a table with a check box (accept) per row."""

    importRequested = Signal()
    mergeRequested = Signal(list)  # list[MemoryInsight]

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ProposalTableModel(self)
        self.title = QLabel("<b>Proposed insights</b>", self)
        self.import_button = QPushButton("Import extraction result…", self)
        self.import_button.setToolTip("Open a saved AI reply (JSON, or text holding the JSON)")
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
        self.status = QLabel(self)
        self.status.setWordWrap(True)

        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.import_button)
        buttons = QHBoxLayout()
        buttons.addWidget(self.accept_button)
        buttons.addWidget(self.reject_button)
        buttons.addWidget(self.accept_new_button)
        buttons.addStretch(1)
        buttons.addWidget(self.merge_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.status)

        self.import_button.clicked.connect(self.importRequested)
        self.accept_button.clicked.connect(lambda: self._decide_selected("accepted"))
        self.reject_button.clicked.connect(lambda: self._decide_selected("rejected"))
        self.accept_new_button.clicked.connect(self.accept_all_new)
        self.merge_button.clicked.connect(lambda: self.mergeRequested.emit(self.model.accepted()))
        self.model.dataChanged.connect(lambda *_: self._update_buttons())
        self.model.modelReset.connect(self._update_buttons)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._update_buttons())
        self.set_proposals([], "")

    def set_proposals(self, proposals: list[ReviewItem], summary: str) -> None:
        """Show ``proposals`` (with the reply's ``summary``)."""
        self.model.set_proposals(proposals)
        self.summary.setText(summary)
        self.summary.setVisible(bool(summary))
        self.table.resizeRowsToContents()
        if not proposals:
            self.status.setText("No proposals: import an extraction result to review its insights.")

    def set_row_decision(self, row: int, decision: str) -> None:
        """Mark row ``row`` ``accepted``, ``rejected`` or ``pending`` (as its buttons do)."""
        self.model.set_decision(row, decision)

    def _decide_selected(self, decision: str) -> None:
        for index in self.table.selectionModel().selectedRows():
            if self.model.proposals[index.row()].decision != "merged":
                self.model.set_decision(index.row(), decision)

    def accept_all_new(self) -> None:
        """Accept every pending proposal not already present in the file."""
        for row, proposal in enumerate(self.model.proposals):
            if proposal.decision == "pending" and not proposal.duplicate:
                self.model.set_decision(row, "accepted")

    def _update_buttons(self) -> None:
        has_rows = self.model.rowCount() > 0
        selected = bool(self.table.selectionModel().selectedRows()) if self.table.selectionModel() else False
        self.accept_button.setEnabled(selected)
        self.reject_button.setEnabled(selected)
        self.accept_new_button.setEnabled(any(p.decision == "pending" and not p.duplicate
                                              for p in self.model.proposals))
        count = len(self.model.accepted())
        self.merge_button.setEnabled(count > 0)
        self.merge_button.setText(f"Merge accepted ({count})" if count else "Merge accepted")
        if has_rows:
            decided = sum(p.decision != "pending" for p in self.model.proposals)
            self.status.setText(f"{decided} of {len(self.model.proposals)} reviewed · {count} to merge")

    def select_row(self, row: int) -> None:
        """Select row ``row`` (as a click would)."""
        self.table.selectRow(row)
        self.table.setCurrentIndex(self.model.index(row, 0))
        self.table.scrollTo(self.model.index(row, 0), QAbstractItemView.ScrollHint.EnsureVisible)
        self.table.setFocus(Qt.FocusReason.OtherFocusReason)
