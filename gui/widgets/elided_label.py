"""A one-line label that gives up width when the window is narrow, eliding its text ("QMD (Quan…").

A plain QLabel asks for its whole text as its minimum width, so a status bar of long labels forces
the window wider than the screen allows (at 800 px); this one asks for a little and shows the rest
in its tooltip when it is cut.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QWidget

MIN_CHARS = 8


class ElidedLabel(QLabel):
    """A QLabel whose text is elided at the right when it gets less room than it would like."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        self._tip = ""
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 (Qt override)
        """Show ``text`` (elided to the width the label gets)."""
        self._full = text
        self.updateGeometry()
        self._elide()

    def setToolTip(self, text: str) -> None:  # noqa: N802 (Qt override)
        """The tooltip (the whole text is added when the label is cut)."""
        self._tip = text
        self._elide()

    def text(self) -> str:
        """The whole text, as set (not the elided one shown)."""
        return self._full

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        margins = self.contentsMargins()
        width = self.fontMetrics().horizontalAdvance(self._full) + margins.left() + margins.right() + 4
        return QSize(width, super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        width = min(self.sizeHint().width(), self.fontMetrics().averageCharWidth() * MIN_CHARS)
        return QSize(width, super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        room = max(self.contentsRect().width(), 0)
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, room) if room else self._full
        QLabel.setText(self, shown)
        cut = shown != self._full
        QLabel.setToolTip(self, "\n".join(t for t in (self._full if cut else "", self._tip) if t))
