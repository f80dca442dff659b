"""The changes (hunks) of a diff as a list to accept or reject one by one, each with the reasons the
proposer gave for the lines it removes.

A / R accept or reject the selected changes and move on, Space toggles one, Shift+A / Shift+R decide
them all. ``choicesChanged()`` says the choices changed; ``hunkSelected(index)`` that the operator
moved to a change (the diff scrolls to it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QAction, QFont, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.documents.diff import DiffResult, Hunk
from gui.widgets.colors import help_colour

#: The list's keys, for the buttons, the tooltips and the Help menu's list.
SHORTCUTS = (("A", "Accept the selected change"), ("R", "Reject the selected change (keep those lines)"),
             ("Space", "Toggle the selected change"), ("Shift+A", "Accept every change"),
             ("Shift+R", "Reject every change"))


def removed_lines(result: DiffResult, hunk: Hunk) -> list[str]:
    """The old lines ``hunk`` takes out (changed ones included)."""
    return [row.left for row in result.rows[hunk.row_start:hunk.row_end] if row.left is not None]


def reason_of(line: str, reasons: dict[str, str]) -> str:
    """The reason given for removing ``line`` (``""`` when none was given)."""
    return reasons.get(line.strip(), "")


def hunk_label(result: DiffResult, hunk: Hunk, reasons: dict[str, str]) -> str:
    """``Lines 12–18 · −7 · dated entry older than 30 days (7)``: where, what, and why."""
    if hunk.removed > 1:
        place = f"Lines {hunk.old_start + 1}–{hunk.old_end}"
    elif hunk.removed == 1:
        place = f"Line {hunk.old_start + 1}"
    else:
        place = f"After line {hunk.old_start}"
    what = " ".join(part for part in (f"−{hunk.removed}" if hunk.removed else "",
                                      f"+{hunk.added}" if hunk.added else "") if part)
    lines = removed_lines(result, hunk)
    counts = Counter(r for r in (reason_of(line, reasons) for line in lines) if r)
    why = "; ".join(f"{reason} ({n})" if n > 1 else reason for reason, n in counts.most_common())
    first = next((line.strip() for line in lines if line.strip()), "")
    if not first:
        first = next((row.right.strip() for row in result.rows[hunk.row_start:hunk.row_end] if row.right), "")
    quote = f"“{first[:100]}{'…' if len(first) > 100 else ''}”" if first else "blank lines"
    return " · ".join(part for part in (place, what, why, quote) if part)


class HunkList(QWidget):
    """Every change of a diff with a check box (accepted) and the reasons for what it removes."""

    choicesChanged = Signal()
    hunkSelected = Signal(int)  # a hunk's index

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: DiffResult | None = None
        self._accepted: list[bool] = []  # mirrors the check boxes: reading 2,700 of them per key press is slow
        self.title = QLabel(self)
        self.title.setWordWrap(True)
        self.list = QListWidget(self)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.list.setUniformItemSizes(True)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setTabKeyNavigation(False)
        self.accept_action = self._action("Accept change", "A", lambda: self.choose(True))
        self.reject_action = self._action("Reject change", "R", lambda: self.choose(False))
        self.accept_all_action = self._action("Accept all changes", "Shift+A", lambda: self.choose_all(True))
        self.reject_all_action = self._action("Reject all changes", "Shift+R", lambda: self.choose_all(False))
        buttons = QHBoxLayout()
        for text, action in (("Accept (A)", self.accept_action), ("Reject (R)", self.reject_action),
                             ("Accept all", self.accept_all_action), ("Reject all", self.reject_all_action)):
            button = QPushButton(text, self)
            button.setToolTip(f"{action.text()} ({action.shortcut().toString()})")
            button.clicked.connect(action.trigger)
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(3)
        layout.addWidget(self.title)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)
        self.list.itemChanged.connect(self._on_item_changed)
        self.list.currentRowChanged.connect(lambda row: row >= 0 and self.hunkSelected.emit(row))
        self.set_hunks(None, {})

    def _action(self, text: str, key: str, slot: Callable[[], object]) -> QAction:
        action = QAction(text, self.list)
        action.setShortcut(QKeySequence(key))
        action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)  # on the list only
        action.triggered.connect(slot)
        self.list.addAction(action)
        return action

    def set_hunks(self, result: DiffResult | None, reasons: dict[str, str], *, accepted: bool = False) -> None:
        """List the hunks of ``result`` (``None``: nothing), none accepted (``accepted``: all): a review
        starts with nothing decided, so one click on Apply removes nothing the operator did not accept;
        ``reasons`` maps a removed line to its reason."""
        self.result = result
        self._accepted = [accepted] * (len(result.hunks) if result is not None else 0)
        self.list.blockSignals(True)
        self.list.clear()
        for hunk in result.hunks if result is not None else []:
            label = hunk_label(result, hunk, reasons)
            item = QListWidgetItem(label, self.list)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if accepted else Qt.CheckState.Unchecked)
            lines = removed_lines(result, hunk)
            preview = "\n".join(f"− {line[:120]}" + (f"   ← {reason_of(line, reasons)}" if reason_of(line, reasons) else "")
                                for line in lines[:12])
            item.setToolTip(label + ("\n\n" + preview if preview else "") + ("\n…" if len(lines) > 12 else ""))
        self.list.blockSignals(False)
        self._changed(range(self.list.count()))

    def preferred_height(self, most_rows: int = 8) -> int:
        """The height that shows the changes (at most ``most_rows`` of them), the title and the buttons."""
        rows = max(1, min(self.list.count(), most_rows))
        row_height = self.list.sizeHintForRow(0) if self.list.count() else self.list.fontMetrics().height() + 4
        chrome = super().sizeHint().height() - self.list.sizeHint().height()
        return chrome + rows * row_height + 2 * self.list.frameWidth() + 2

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return QSize(super().sizeHint().width(), self.preferred_height())

    def accepted(self) -> list[int]:
        """The indexes of the accepted hunks."""
        return [row for row, on in enumerate(self._accepted) if on]

    def rejected(self) -> list[int]:
        """The indexes of the rejected hunks."""
        return [row for row, on in enumerate(self._accepted) if not on]

    def set_accepted(self, rows: list[int], accepted: bool) -> None:
        """Accept (or reject) the hunks ``rows``."""
        state = Qt.CheckState.Checked if accepted else Qt.CheckState.Unchecked
        self.list.blockSignals(True)
        for row in rows:
            self.list.item(row).setCheckState(state)
            self._accepted[row] = accepted
        self.list.blockSignals(False)
        self._changed(rows)

    def _on_item_changed(self, item: QListWidgetItem) -> None:
        row = self.list.row(item)
        accepted = item.checkState() == Qt.CheckState.Checked
        if 0 <= row < len(self._accepted) and self._accepted[row] != accepted:
            self._accepted[row] = accepted
            self._changed([row])

    def choose(self, accepted: bool) -> None:
        """Accept or reject the selected hunks, then move to the next one."""
        rows = sorted({self.list.row(item) for item in self.list.selectedItems()} or
                      ({self.list.currentRow()} if self.list.currentRow() >= 0 else set()))
        if not rows:
            return
        self.set_accepted(rows, accepted)
        if rows[-1] + 1 < self.list.count():
            self.list.setCurrentRow(rows[-1] + 1)

    def choose_all(self, accepted: bool) -> None:
        """Accept or reject every hunk."""
        self.set_accepted(list(range(self.list.count())), accepted)

    def _changed(self, rows: range | list[int]) -> None:
        total, accepted = len(self._accepted), sum(self._accepted)
        self.list.blockSignals(True)  # restyling an item is an itemChanged too
        for row in rows:
            item = self.list.item(row)
            font = QFont(self.list.font())
            kept = not self._accepted[row]
            font.setStrikeOut(kept)
            item.setFont(font)
            item.setForeground(help_colour(self.list.palette()) if kept else self.list.palette().text())
        self.list.blockSignals(False)
        self.title.setText(f"<b>Changes:</b> {accepted} of {total} accepted · A / R or Space to choose, "
                           "unchecked ones keep those lines" if total else "<b>Changes:</b> none")
        for action in (self.accept_action, self.reject_action, self.accept_all_action, self.reject_all_action):
            action.setEnabled(total > 0)
        self.choicesChanged.emit()
