"""The conflict view: the operator's unsaved text beside the changed disk version, and three choices.

Shown when memory changed on disk in a way that is not a pure append while the editor had unsaved
edits (or when a save found the file changed). Both sides are read-only; lines that differ are
tinted. The view only reports the choice: "Keep mine" (Ctrl+Shift+K), "Take disk's" (Ctrl+Shift+D)
or "Merge by hand" (Ctrl+Shift+M); the shortcuts are actions of the view, listed in Help.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction, QColor, QKeySequence, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from gui.tasks import Operation, run_in_background
from gui.widgets.base_pane import BasePane
from gui.widgets.colors import is_dark
from gui.widgets.diff_navigator import DiffNavigator, diff_hunks
from gui.widgets.parts import view_action

_MINE_TINT = ("#fff1cc", "#4a3b00")  # light, dark
_DISK_TINT = ("#dcefff", "#0f2f4a")
SHORTCUTS = {"merge": "Ctrl+Shift+M", "take_disk": "Ctrl+Shift+D", "keep_mine": "Ctrl+Shift+K",
             "next_difference": "F7", "previous_difference": "Shift+F7", "base": "Ctrl+Shift+B"}


def _pane(title: str, parent: QWidget) -> tuple[QWidget, QPlainTextEdit, QLabel]:
    box = QWidget(parent)
    label = QLabel(title, box)
    label.setObjectName("conflictPaneTitle")
    label.setToolTip(title)
    label.setMinimumWidth(1)  # clipped when narrow: the panes (three with the base) fit at 800 px
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
    text = QPlainTextEdit(box)
    text.setReadOnly(True)
    text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(label)
    layout.addWidget(text, 1)
    return box, text, label


class ConflictView(QWidget):
    """Mine beside disk's, with the three ways out."""

    keepMineRequested = Signal()
    takeDiskRequested = Signal()
    mergeRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("conflictView")
        self.headline = QLabel(self)
        self.headline.setObjectName("conflictHeadline")
        self.headline.setWordWrap(True)
        self.summary = QLabel("", self)
        self.summary.setObjectName("conflictSummary")
        self.summary.setWordWrap(True)
        mine_box, self.mine, self.mine_title = _pane("Yours — unsaved, in the editor", self)
        disk_box, self.disk, self.disk_title = _pane("On disk now — changed by another program", self)
        # Three-way: the base both sides started from, shown with "Show base" (gui.widgets.base_pane).
        self.base_pane = BasePane(self)
        self.base_pane.setVisible(False)
        self._base: str | None = None
        split = QSplitter(self)
        split.addWidget(self.base_pane)
        split.addWidget(mine_box)
        split.addWidget(disk_box)
        self.keep_mine_button = QPushButton("Keep mine", self)
        self.keep_mine_button.setToolTip(
            "Keep editing your version; the next save replaces the disk version (kept in history).")
        self.take_disk_button = QPushButton("Take disk's", self)
        self.take_disk_button.setToolTip("Load the disk version into the editor (Ctrl+Z brings yours back).")
        self.merge_button = QPushButton("Merge by hand", self)
        self.merge_button.setToolTip(
            "Combine both: changes on one side are taken, overlapping changes are marked "
            "<<<<<<< mine / ======= / >>>>>>> disk in the editor for you to resolve.")
        # Next / previous difference (gui.widgets.diff_navigator): F7 / Shift+F7.
        self.navigator = DiffNavigator(self.mine, self.disk, self)
        self.position_label = QLabel("", self)
        self.position_label.setObjectName("conflictPosition")
        self.position_label.setWordWrap(True)  # at 800 px, with a document beside, it wraps, never widens
        self.previous_button = QPushButton("↑ Previous", self)
        self.previous_button.setToolTip("Previous difference")
        self.next_button = QPushButton("↓ Next", self)
        self.next_button.setToolTip("Next difference")
        self.base_button = QPushButton("Show base", self)
        self.base_button.setCheckable(True)
        self.base_button.setToolTip("Three-way: show the text both sides started from, tinted by who changed what")
        # Two rows that fit 800 px with a document beside: where you are among the differences beside
        # the buttons that move, what differs beside the three choices (each label wraps in the room left).
        navigation = QHBoxLayout()
        navigation.addWidget(self.position_label, 1)
        navigation.addWidget(self.base_button)
        navigation.addWidget(self.previous_button)
        navigation.addWidget(self.next_button)
        buttons = QHBoxLayout()
        buttons.addWidget(self.summary, 1)
        buttons.addWidget(self.merge_button)
        buttons.addWidget(self.take_disk_button)
        buttons.addWidget(self.keep_mine_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.headline)
        layout.addWidget(split, 1)
        layout.addLayout(navigation)
        layout.addLayout(buttons)
        self._diff_op: Operation | None = None
        self._mine = self._disk = ""
        self.actions_by_name = {
            "merge": self._action("Merge by hand", SHORTCUTS["merge"], self.merge_button),
            "take_disk": self._action("Take disk's version", SHORTCUTS["take_disk"], self.take_disk_button),
            "keep_mine": self._action("Keep my version", SHORTCUTS["keep_mine"], self.keep_mine_button),
            "next_difference": self._action("Next difference", SHORTCUTS["next_difference"], self.next_button),
            "previous_difference": self._action("Previous difference", SHORTCUTS["previous_difference"],
                                                self.previous_button),
            "base": self._action("Show the base (three-way)", SHORTCUTS["base"], self.base_button),
        }
        self._connect_signals()

    def _action(self, text: str, keys: str, button: QPushButton) -> QAction:
        """A shortcut that works anywhere in the view while it is shown, named in Help ▸ Shortcuts."""
        action = view_action(self, text, keys, button.click)
        action.setProperty("shortcutScope", "Conflict")
        native = QKeySequence(keys).toString(QKeySequence.SequenceFormat.NativeText)
        button.setToolTip(f"{button.toolTip()} ({native})")
        return action

    def _connect_signals(self) -> None:
        self.keep_mine_button.clicked.connect(self.keepMineRequested)
        self.take_disk_button.clicked.connect(self.takeDiskRequested)
        self.merge_button.clicked.connect(self.mergeRequested)
        self.base_button.toggled.connect(self._show_base)
        self.next_button.clicked.connect(self.navigator.next)
        self.previous_button.clicked.connect(self.navigator.previous)
        self.navigator.moved.connect(lambda i, n: self.position_label.setText(DiffNavigator.describe(i, n)))
        # Scroll both sides together: most lines are the same, so they stay side by side.
        mine_bar, disk_bar = self.mine.verticalScrollBar(), self.disk.verticalScrollBar()
        mine_bar.valueChanged.connect(lambda v: disk_bar.value() != v and disk_bar.setValue(v))
        base_bar = self.base_pane.text.verticalScrollBar()
        mine_bar.valueChanged.connect(lambda v: base_bar.value() != v and base_bar.setValue(v))
        disk_bar.valueChanged.connect(lambda v: mine_bar.value() != v and mine_bar.setValue(v))

    def set_texts(self, mine: str, disk: str, headline: str) -> None:
        """Show both versions and why the view opened; tint the differing lines when known."""
        self.headline.setText(headline)
        self._mine = mine
        self.mine.setPlainText(mine)
        self._set_disk_text(disk)

    def set_base(self, base: str | None) -> None:
        """The text both sides started from (``None``: not known; the base pane cannot be shown)."""
        self._base = base
        self.base_button.setEnabled(base is not None)
        if base is None:
            self.base_button.setChecked(False)
        self._show_base(self.base_button.isChecked())

    def _show_base(self, shown: bool) -> None:
        shown = shown and self._base is not None
        self.base_pane.setVisible(shown)
        if shown:
            assert self._base is not None
            self.base_pane.set_texts(self._base, self._mine, self._disk)

    def set_disk(self, disk: str) -> None:
        """Update the disk side (it changed again while the view was open)."""
        self._set_disk_text(disk)

    def mine_text(self) -> str:
        """The operator's side as shown."""
        return self._mine

    def disk_text(self) -> str:
        """The disk side as shown."""
        return self._disk

    def cancel(self) -> None:
        """Drop a diff still being computed."""
        if self._diff_op is not None:
            self._diff_op.cancel()
            self._diff_op = None

    def _set_disk_text(self, disk: str) -> None:
        self._disk = disk
        self.disk.setPlainText(disk)
        if self.base_pane.isVisible():
            self._show_base(True)
        self.summary.setText("Comparing…")
        self.cancel()
        mine = self._mine
        self._diff_op = run_in_background(lambda _t: diff_hunks(mine, disk), on_done=self._on_diff,
                                          parent=self)
        self._diff_op.finished.connect(self._diff_op.deleteLater)

    def _on_diff(self, result: tuple[set[int], set[int], list]) -> None:
        self._diff_op = None
        only_mine, only_disk, hunks = result
        self.navigator.set_hunks(hunks)
        dark = is_dark()
        self._tint(self.mine, only_mine, _MINE_TINT[dark])
        self._tint(self.disk, only_disk, _DISK_TINT[dark])
        self.summary.setText(f"{len(only_mine)} line(s) only in yours, {len(only_disk)} only on disk")

    @staticmethod
    def _tint(edit: QPlainTextEdit, lines: set[int], color: str) -> None:
        fmt = QTextCharFormat()
        fmt.setBackground(QColor(color))
        fmt.setProperty(QTextFormat.Property.FullWidthSelection, True)
        selections = []
        doc = edit.document()
        for number in sorted(lines):
            block = doc.findBlockByNumber(number)
            if not block.isValid():
                continue
            sel = QTextEdit.ExtraSelection()
            sel.cursor = QTextCursor(block)
            sel.format = fmt
            selections.append(sel)
        edit.setExtraSelections(selections)
