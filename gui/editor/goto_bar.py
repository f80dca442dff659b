"""The editor's Go to line bar (Ctrl+G): "Go to line [   ] of 1,294", Enter jumps, Esc closes.

A strip like the find bar, not a modal dialog: the text stays visible and usable. The bar only
reports the line asked for (``lineRequested``, 0-based); the editor moves the cursor.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QIntValidator, QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget


class GoToLineBar(QWidget):
    """A line-number field with the line count beside it."""

    lineRequested = Signal(int)  # 0-based
    closeRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("gotoBar")
        self.field = QLineEdit(self)
        self.field.setObjectName("gotoField")
        self.field.setPlaceholderText("line")
        self.field.setMaximumWidth(110)
        self._validator = QIntValidator(1, 1, self)
        self.field.setValidator(self._validator)
        self.count_label = QLabel("", self)
        self.count_label.setObjectName("gotoCount")
        close = QToolButton(self)
        close.setText("✕")
        close.setToolTip("Close (Esc)")
        close.setAutoRaise(True)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.addWidget(QLabel("Go to line:", self))
        layout.addWidget(self.field)
        layout.addWidget(self.count_label)
        layout.addStretch(1)
        layout.addWidget(close)
        close.clicked.connect(self.closeRequested)
        self.field.installEventFilter(self)
        self.setVisible(False)

    def open(self, current_line: int, line_count: int) -> None:
        """Show the bar for a text of ``line_count`` lines, the current line (0-based) pre-filled."""
        self._validator.setTop(max(line_count, 1))
        self.count_label.setText(f"of {line_count:,} (Enter to go, Esc to close)")
        self.field.setText(str(current_line + 1))
        self.setVisible(True)
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Enter jumps to the line typed; Esc closes."""
        if watched is self.field and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                if self.field.text().isdigit():  # past the end goes to the last line
                    self.lineRequested.emit(min(max(int(self.field.text()), 1), self._validator.top()) - 1)
                return True
            if event.key() == Qt.Key.Key_Escape:
                self.closeRequested.emit()
                return True
        return super().eventFilter(watched, event)
