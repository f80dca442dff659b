"""The notification list: what happened to the memory while the operator worked, kept to reopen.

Merges of agent appends, reloads after a change on disk and conflicts used to flash in the status
bar for six seconds. :class:`NotificationButton` (in the status bar) keeps them: its text counts the
ones not seen yet ("Notices (2)"), and a click opens a list of all of them, newest first, with the
time each happened. The list is a panel laid over the window's bottom-right corner (not a separate
popup window: those grab the keyboard and cannot be raised everywhere); Esc, its Close button or
another click on the button closes it. It knows nothing of the editor: the window calls :meth:`add`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

MAX_KEPT = 200


@dataclass(frozen=True)
class Notification:
    """One thing that happened: when, what, and how much it matters (info, warning, error)."""

    when: datetime
    text: str
    level: str = "info"


class NotificationPopup(QFrame):
    """The list shown above the button; Esc or Close hides it."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("notificationPopup")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.title = QLabel("Notices", self)
        self.title.setObjectName("notificationTitle")
        self.clear_button = QPushButton("Clear", self)
        self.close_button = QPushButton("Close", self)
        self.close_button.clicked.connect(self.hide)
        self.list = QListWidget(self)
        self.list.setObjectName("notificationList")
        self.list.setWordWrap(True)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.clear_button)
        top.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addLayout(top)
        layout.addWidget(self.list, 1)
        self.hide()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Esc closes the list."""
        if event.key() == Qt.Key.Key_Escape:
            self.hide()
            return
        super().keyPressEvent(event)

    def set_items(self, items: list[Notification]) -> None:
        """Show ``items`` newest first."""
        self.list.clear()
        if not items:
            self.list.addItem("Nothing yet: merges of agent appends and reloads are listed here.")
        for note in reversed(items):
            mark = {"warning": "⚠ ", "error": "✖ "}.get(note.level, "")
            item = QListWidgetItem(f"{note.when:%H:%M:%S}  {mark}{note.text}")
            item.setToolTip(f"{note.when:%Y-%m-%d %H:%M:%S}")
            self.list.addItem(item)
        self.title.setText(f"Notices · {len(items)}")

    def texts(self) -> list[str]:
        """The rows shown, top to bottom."""
        return [self.list.item(i).text() for i in range(self.list.count())]


class NotificationButton(QToolButton):
    """Counts unseen notices; a click (or :meth:`open_list`) shows them all."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("notificationButton")
        self.setAutoRaise(True)
        self.setToolTip("Merges of agent appends, reloads and conflicts — click to see them all")
        self.items: list[Notification] = []
        self.unseen = 0
        self.popup = NotificationPopup(self)
        self.clicked.connect(self.toggle_list)
        self.popup.clear_button.clicked.connect(self.clear)
        self._show_count()

    def add(self, text: str, level: str = "info", when: datetime | None = None) -> None:
        """Keep a notice (the oldest go past :data:`MAX_KEPT`) and count it as unseen."""
        self.items.append(Notification(when or datetime.now(), text, level))
        del self.items[:-MAX_KEPT]
        self.unseen += 1
        if self.popup.isVisible():
            self.popup.set_items(self.items)
            self.unseen = 0
        self._show_count()

    def toggle_list(self) -> None:
        """Open the list, or close it when it is open."""
        if self.popup.isVisible():
            self.popup.hide()
        else:
            self.open_list()

    def open_list(self) -> None:
        """Show every notice above the button, over the window; they are seen now."""
        host = self.window()
        if self.popup.parentWidget() is not host:
            self.popup.setParent(host)
        self.popup.set_items(self.items)
        width = min(max(host.width() // 2, 360), 640, host.width() - 16)
        height = min(340, max(host.height() - 120, 160))
        self.popup.resize(width, height)
        corner = self.mapTo(host, QPoint(self.width(), 0))
        self.popup.move(max(corner.x() - width, 8), max(corner.y() - height - 4, 8))
        self.popup.show()
        self.popup.raise_()
        self.popup.list.setFocus()
        self.unseen = 0
        self._show_count()

    def clear(self) -> None:
        """Forget every notice."""
        self.items.clear()
        self.unseen = 0
        self.popup.set_items(self.items)
        self._show_count()

    def _show_count(self) -> None:
        self.setText(f"Notices ({self.unseen})" if self.unseen else "Notices")
        self.setProperty("unseen", self.unseen > 0)
        self.style().unpolish(self)
        self.style().polish(self)
