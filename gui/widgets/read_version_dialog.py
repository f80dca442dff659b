"""What a client read: exactly the text one recorded read served (``core.storage.readlog.version_read``),
read-only, with the lines it served selected.

The Activity view opens it for a read (Shift+Enter): the operator sees what the agent loaded before it acted,
not the document as it is now.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontDatabase, QTextCursor
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from core.storage.readlog import ReadEvent


def read_title(event: ReadEvent) -> str:
    """One line naming the read: who, when, which document, which lines, which version."""
    who = event.client or (f"token {event.token}" if event.token else "an unnamed client")
    if event.token and event.client and event.token not in event.client:
        who = f"{event.client} (token {event.token})"
    return (f"{who} read {event.path} at {event.at[:19].replace('T', ' ')} UTC: lines {event.start_line:,}–"
            f"{event.end_line:,} of {event.total_lines:,} ({event.size:,} bytes, hash {event.hash[:12]}) via "
            f"{event.via}")


class ReadVersionDialog(QDialog):
    """The text ``event`` served, read-only; the lines it served selected and scrolled to."""

    def __init__(self, event: ReadEvent, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("readVersionDialog")
        self.setWindowTitle(f"What was read — {event.path}")
        self.event = event
        self.title = QLabel(read_title(event), self)
        self.title.setObjectName("readVersionTitle")
        self.title.setTextFormat(Qt.TextFormat.PlainText)  # a client's name is what it sent: never HTML
        self.title.setWordWrap(True)
        self.text_edit = QPlainTextEdit(self)
        self.text_edit.setObjectName("readVersionText")
        self.text_edit.setReadOnly(True)
        self.text_edit.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text_edit.setFont(QFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)))
        self.text_edit.setPlainText(text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.text_edit, 1)
        layout.addWidget(buttons)
        self.resize(760, 560)
        self._select_served()

    def _select_served(self) -> None:
        doc = self.text_edit.document()
        first = doc.findBlockByNumber(max(self.event.start_line, 1) - 1)
        if not first.isValid():
            return
        cursor = QTextCursor(first)
        last = doc.findBlockByNumber(max(self.event.end_line, self.event.start_line, 1) - 1)
        if last.isValid():
            cursor.setPosition(last.position() + last.length() - 1, QTextCursor.MoveMode.KeepAnchor)
        self.text_edit.setTextCursor(cursor)
        self.text_edit.centerCursor()

    def shown_text(self) -> str:
        """The text shown (tests)."""
        return self.text_edit.toPlainText()
