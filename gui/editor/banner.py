"""A one-line (wrapping) message strip above the editor: why it is read-only, what a save did."""

from __future__ import annotations

from typing import Literal

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

Level = Literal["info", "warning", "error"]


class Banner(QFrame):
    """Shows a message at a level (styled by the ``level`` property); hidden while empty."""

    dismissed = Signal()

    def __init__(self, *, closable: bool = True, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self._label = QLabel(self)
        self._label.setWordWrap(True)
        self._label.setTextFormat(Qt.TextFormat.PlainText)
        self._label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._close = QToolButton(self)
        self._close.setText("✕")
        self._close.setToolTip("Dismiss")
        self._close.setAutoRaise(True)
        self._close.setVisible(closable)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        layout.addWidget(self._label, 1)
        layout.addWidget(self._close, 0, Qt.AlignmentFlag.AlignTop)
        self._close.clicked.connect(self._on_close_clicked)
        self.setVisible(False)

    def show_message(self, text: str, level: Level = "info") -> None:
        """Show ``text`` at ``level``."""
        self._label.setText(text)
        self.setProperty("level", level)
        self.style().unpolish(self)
        self.style().polish(self)
        self.setVisible(True)

    def clear(self) -> None:
        """Hide the banner and forget its text."""
        self._label.clear()
        self.setVisible(False)

    def text(self) -> str:
        """The message shown ("" when hidden)."""
        return self._label.text() if not self.isHidden() else ""

    def level(self) -> str:
        """The level of the message shown."""
        return str(self.property("level") or "")

    def _on_close_clicked(self) -> None:
        self.clear()
        self.dismissed.emit()
