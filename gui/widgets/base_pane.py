"""The conflict view's third pane (three-way): the text both sides started from, the *base*.

Shown with "Show base" (Ctrl+Shift+B) left of "Yours" and "On disk": the version the editor's
edits are based on (what was on disk when editing began). Lines of the base that your edits changed
are tinted as yours, lines the other program changed as disk's, lines both changed in red: those are
the real conflicts, where "Merge by hand" will put markers. It scrolls with the other two panes.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QSizePolicy, QTextEdit, QVBoxLayout, QWidget

from gui.widgets.colors import is_dark
from gui.widgets.diff_navigator import diff_hunks

_MINE = ("#fff1cc", "#4a3b00")
_DISK = ("#dcefff", "#0f2f4a")
_BOTH = ("#fde7e9", "#4b1c20")


def base_changes(base: str, mine: str, disk: str) -> tuple[set[int], set[int]]:
    """The 0-based base lines changed by ``mine`` and by ``disk``."""
    by_mine, _, _ = diff_hunks(base, mine)
    by_disk, _, _ = diff_hunks(base, disk)
    return by_mine, by_disk


class BasePane(QWidget):
    """The base text, read-only, tinted by who changed each line; :attr:`summary` says how many."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("basePane")
        self.title = QLabel("Base — on disk when you started editing", self)
        self.title.setObjectName("conflictPaneTitle")
        self.title.setMinimumWidth(1)  # clipped when narrow: three panes fit beside the document list at 800 px
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.text = QPlainTextEdit(self)
        self.text.setObjectName("baseText")
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.summary = ""
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.text, 1)

    def set_texts(self, base: str, mine: str, disk: str) -> None:
        """Show ``base`` tinted by the lines ``mine`` and ``disk`` changed."""
        self.text.setPlainText(base)
        by_mine, by_disk = base_changes(base, mine, disk)
        both = by_mine & by_disk
        dark = is_dark()
        selections = []
        doc = self.text.document()
        for lines, colours in ((by_mine - both, _MINE), (by_disk - both, _DISK), (both, _BOTH)):
            fmt = QTextCharFormat()
            fmt.setBackground(QColor(colours[dark]))
            fmt.setProperty(QTextFormat.Property.FullWidthSelection, True)
            for number in sorted(lines):
                block = doc.findBlockByNumber(number)
                if block.isValid():
                    sel = QTextEdit.ExtraSelection()
                    sel.cursor = QTextCursor(block)
                    sel.format = fmt
                    selections.append(sel)
        self.text.setExtraSelections(selections)
        self.summary = (f"Base: {len(by_mine - both)} line(s) changed by you, {len(by_disk - both)} on disk, "
                        f"{len(both)} by both")
        self.title.setToolTip(self.summary)
