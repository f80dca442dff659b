"""The editor's find bar: a query field, "3 of 12", previous/next and close.

Enter finds the next match, Shift+Enter the previous one, Esc closes. The bar only reports intent;
the editor does the searching and tells the bar the count with :meth:`FindBar.set_count`.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget


class FindBar(QWidget):
    """Query field with match count; emits what the operator asked for."""

    queryChanged = Signal(str)
    nextRequested = Signal()
    previousRequested = Signal()
    closeRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("findBar")
        self.field = QLineEdit(self)
        self.field.setPlaceholderText("Find in memory")
        self.field.setClearButtonEnabled(True)
        self.count_label = QLabel("", self)
        self.count_label.setObjectName("findCount")
        self.count_label.setMinimumWidth(80)
        self._prev = self._button("↑", "Previous match (Shift+Enter)")
        self._next = self._button("↓", "Next match (Enter)")
        self._close = self._button("✕", "Close (Esc)")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.addWidget(QLabel("Find:", self))
        layout.addWidget(self.field, 1)
        layout.addWidget(self.count_label)
        layout.addWidget(self._prev)
        layout.addWidget(self._next)
        layout.addWidget(self._close)
        self._connect_signals()
        self.setVisible(False)

    def _button(self, text: str, tip: str) -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setToolTip(tip)
        button.setAutoRaise(True)
        return button

    def _connect_signals(self) -> None:
        self.field.textChanged.connect(self.queryChanged)
        self._prev.clicked.connect(self.previousRequested)
        self._next.clicked.connect(self.nextRequested)
        self._close.clicked.connect(self.closeRequested)
        self.field.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Enter / Shift+Enter step through matches; Esc closes."""
        if watched is self.field and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                    self.previousRequested.emit()
                else:
                    self.nextRequested.emit()
                return True
            if event.key() == Qt.Key.Key_Escape:
                self.closeRequested.emit()
                return True
        return super().eventFilter(watched, event)

    def open(self, query: str | None = None) -> None:
        """Show the bar, optionally with ``query``, and focus the field with its text selected."""
        self.setVisible(True)
        if query:
            self.field.setText(query)
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()

    def query(self) -> str:
        """The text searched for."""
        return self.field.text()

    def set_count(self, current: int, total: int) -> None:
        """Show "current of total" (1-based), "No matches", or nothing for an empty query."""
        if not self.field.text():
            self.count_label.setText("")
        elif total == 0:
            self.count_label.setText("No matches")
        else:
            self.count_label.setText(f"{current} of {total}")
        self.setProperty("notFound", bool(self.field.text()) and total == 0)
        self.field.style().unpolish(self.field)
        self.field.style().polish(self.field)
