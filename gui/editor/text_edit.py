"""The memory text field: a ``QPlainTextEdit`` with a monospace font, line numbers in a gutter,
go-to-line, and folder drops left to the window.

A folder dragged onto the text is ignored here so that the drop reaches the main window, which
opens it as a project; dropped text is inserted as usual.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QEvent, QMimeData
from PySide6.QtGui import (
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QFontDatabase,
    QKeyEvent,
    QKeySequence,
    QResizeEvent,
    QTextBlock,
    QTextCursor,
    QTextOption,
)
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from gui import gc_guard
from gui.editor.gutter import LineNumberGutter
from gui.editor.placement import show_in_upper_third


def _has_folder(mime: QMimeData) -> bool:
    return mime.hasUrls() and any(u.isLocalFile() and Path(u.toLocalFile()).is_dir() for u in mime.urls())


class MemoryTextEdit(QPlainTextEdit):
    """Plain-text markdown field: fixed-pitch font, soft wrap, 4-space tab stops."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("memoryText")
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSize(max(font.pointSize(), 10))
        self.setFont(font)
        # WordWrap, not WrapAtWordBoundaryOrAnywhere: that one is quadratic on a pasted unbroken line.
        self.setWordWrapMode(QTextOption.WrapMode.WordWrap)
        self.setTabStopDistance(self.fontMetrics().horizontalAdvance(" ") * 4)
        self.setCenterOnScroll(False)
        self._reserved: set[str] = set()
        self.gutter = LineNumberGutter(self)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Keep the line-number gutter along the left edge."""
        super().resizeEvent(event)
        self.gutter.place()

    def current_line(self) -> int:
        """The cursor's line (0-based)."""
        return self.textCursor().blockNumber()

    def first_visible_line(self) -> int:
        """The line at the top of the view (0-based)."""
        return self.firstVisibleBlock().blockNumber()

    def go_to_line(self, line: int) -> int:
        """Put the cursor at the start of ``line`` (0-based, clamped) near the top of the view."""
        doc = self.document()
        line = min(max(line, 0), doc.blockCount() - 1)
        cursor = QTextCursor(doc.findBlockByNumber(line))
        self.setTextCursor(cursor)
        show_in_upper_third(self)  # its context shows above it
        return line

    def visible_blocks(self) -> tuple[QTextBlock, int]:
        """The first line in view and (at least) how many lines fit in the view."""
        lines = self.viewport().height() // max(self.fontMetrics().lineSpacing(), 1) + 2
        return self.firstVisibleBlock(), lines

    def reserve_shortcuts(self, sequences: Iterable[QKeySequence]) -> None:
        """Let these key sequences reach the window's actions even where the text has a binding.

        (On Linux, Ctrl+E is "end of line" in Qt text fields; memdesk uses it to toggle the preview.)
        """
        self._reserved = {seq.toString() for seq in sequences if not seq.isEmpty()}

    def event(self, event: QEvent) -> bool:
        """Decline shortcut overrides for reserved sequences so the window's action runs; a key typed
        holds off the garbage collector until typing pauses (:mod:`gui.gc_guard`)."""
        kind = event.type()
        if kind == QEvent.Type.KeyPress:
            gc_guard.note_input()
        elif kind == QEvent.Type.ShortcutOverride and self._reserved:
            assert isinstance(event, QKeyEvent)
            if QKeySequence(event.keyCombination()).toString() in self._reserved:
                event.ignore()
                return False
        return super().event(event)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        """Leave folder drags to the window (they open a project)."""
        if _has_folder(event.mimeData()):
            event.ignore()
            return
        super().dragEnterEvent(event)

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        """Leave folder drags to the window."""
        if _has_folder(event.mimeData()):
            event.ignore()
            return
        super().dragMoveEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:
        """Leave folder drops to the window."""
        if _has_folder(event.mimeData()):
            event.ignore()
            return
        super().dropEvent(event)
