"""The parts of the consolidation review beside the diff: the changes to accept, the ledger, the lost facts.

``ChangeList``: every change of a proposal (all documents) with a check box, A / R / Space to decide,
``changeSelected(number)`` when the operator moves to one and ``choicesChanged()`` when a box flips.
``LedgerPanel``: the fate of each removed or rewritten entry of a document. ``LostFactsPanel``: "N facts
would be lost", each fact with its document and line, or that every fact survives.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from core.consolidation import ConsolidationProposal
from core.consolidation.facts import LostFact
from gui.widgets.colors import css
from gui.widgets.parts import view_action

__all__ = ["ChangeList", "LedgerPanel", "LostFactsPanel", "change_label"]


def _name(path: str) -> str:
    parts = path.split("/")
    return "/".join(parts[-2:]) if path.startswith(".fusion/agent-memory/") else parts[-1]


def change_label(change: object) -> str:
    """``3 · DREAMS.md · −0 +79 · “## 2026-08-19”``."""
    first = next((x.strip() for x in (*change.removed, *change.added) if x.strip()), "")  # type: ignore[attr-defined]
    quote = f" · “{first[:70]}{'…' if len(first) > 70 else ''}”" if first else ""
    return (f"{change.number} · {_name(change.path)} · −{len(change.removed)} +{len(change.added)}"  # type: ignore[attr-defined]
            f"{quote}")


class ChangeList(QWidget):
    """The proposal's changes, each accepted (checked) or not."""

    changeSelected = Signal(int)  # a change's number
    choicesChanged = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel("<b>Changes</b>", self)
        self.list = QListWidget(self)
        self.list.setObjectName("consolidationChanges")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.list, 1)
        self.list.currentRowChanged.connect(self._moved)
        self.list.itemChanged.connect(lambda _item: self.choicesChanged.emit())
        view_action(self, "Accept change", "A", lambda: self.choose(True))
        view_action(self, "Reject change", "R", lambda: self.choose(False))
        view_action(self, "Toggle change", "Space", self.toggle)

    def set_changes(self, proposal: ConsolidationProposal | None) -> None:
        """Show ``proposal``'s changes, all accepted (those applied already checked and locked)."""
        self.list.blockSignals(True)
        self.list.clear()
        for change in proposal.changes if proposal is not None else ():
            item = QListWidgetItem(change_label(change))
            item.setData(Qt.ItemDataRole.UserRole, change.number)
            done = change.number in proposal.applied_changes
            flags = Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled
            item.setFlags(flags if done else flags | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            if done:
                item.setText(item.text() + " (applied)")
            self.list.addItem(item)
        self.list.blockSignals(False)
        self.title.setText(f"<b>Changes</b> ({self.list.count()})")
        if self.list.count():
            self.list.setCurrentRow(0)

    def accepted(self) -> list[int]:
        """The numbers of the accepted changes."""
        return [self.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.list.count())
                if self.list.item(i).checkState() == Qt.CheckState.Checked]

    def choose(self, accepted: bool) -> None:
        """Accept or reject the selected change and move to the next."""
        item = self.list.currentItem()
        if item is not None and item.flags() & Qt.ItemFlag.ItemIsUserCheckable:
            item.setCheckState(Qt.CheckState.Checked if accepted else Qt.CheckState.Unchecked)
        row = self.list.currentRow()
        if row + 1 < self.list.count():
            self.list.setCurrentRow(row + 1)

    def toggle(self) -> None:
        """Flip the selected change."""
        item = self.list.currentItem()
        if item is not None and item.flags() & Qt.ItemFlag.ItemIsUserCheckable:
            checked = item.checkState() == Qt.CheckState.Checked
            item.setCheckState(Qt.CheckState.Unchecked if checked else Qt.CheckState.Checked)

    def _moved(self, row: int) -> None:
        if row >= 0:
            self.changeSelected.emit(self.list.item(row).data(Qt.ItemDataRole.UserRole))


class LedgerPanel(QWidget):
    """The ledger of one document: each removed or rewritten entry and its fate."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel("<b>Ledger</b>", self)
        self.title.setWordWrap(True)  # "(N entries removed or rewritten)" wraps in the narrow column at 800 px
        self.list = QListWidget(self)
        self.list.setObjectName("consolidationLedger")
        self.list.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.list, 1)

    def set_entries(self, proposal: ConsolidationProposal | None, path: str | None) -> None:
        """Show the ledger entries of ``path`` (every document when ``None``)."""
        self.list.clear()
        entries = [e for e in (proposal.ledger if proposal else ()) if path is None or e.path == path]
        for entry in entries:
            first = " ".join(entry.text.split("\n", 1)[0].split())
            item = QListWidgetItem(f"line {entry.line}: {first[:90]}{'…' if len(first) > 90 else ''}\n"
                                   f"    → {entry.describe()}")
            if entry.fate == "removed":
                item.setForeground(QBrush(QColor(css("error-fg"))))
            self.list.addItem(item)
        where = f" of {_name(path)}" if path else ""
        self.title.setText(f"<b>Ledger{where}</b> ({len(entries)} entries removed or rewritten)")


class LostFactsPanel(QWidget):
    """The conservation check: what would be lost, fact by fact, or that nothing would."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel(self)
        self.title.setObjectName("lostFactsTitle")
        self.title.setWordWrap(True)
        self.list = QListWidget(self)
        self.list.setObjectName("lostFacts")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.list, 1)

    def set_facts(self, facts: tuple[LostFact, ...] | list[LostFact], total: int, *, selection: bool = False,
                  done: bool = False) -> None:
        """Show the lost facts (of the accepted changes when ``selection``; ``done``: a change already made)."""
        self.list.clear()
        for fact in facts:
            self.list.addItem(f"{_name(fact.path)}:{fact.line}  {fact.kind}  {fact.fact}   — in “{fact.entry[:80]}”")
        which = " with the accepted changes" if selection else ""
        if facts:
            n = len(facts)
            verb = ("was" if n == 1 else "were") if done else "would be"
            self.title.setText(f"<b style='color:{css('error-fg')}'>{n} fact{'s' if n != 1 else ''} {verb} lost"
                               f"{which}</b> (found nowhere in the result, not marked dropped in the ledger)")
        else:
            self.title.setText(f"<b style='color:{css('ok-fg')}'>Nothing {'was' if done else 'would be'} lost"
                               f"{which}</b>: all {total:,} "
                               "distinctive facts are in the result or marked dropped")
        self.list.setVisible(bool(facts))
