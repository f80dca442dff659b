"""Draws where an agent stops loading across a ``QPlainTextEdit``: a dashed line above the first line that
is not loaded, a short label at its right end, and a faint tint over the lines past it.

:class:`CutLineOverlay` is a transparent widget laid over the text field's viewport; it paints nothing but the
line and the tint, lets every mouse event through and repaints when the text scrolls or changes. Give it
the cut with :meth:`CutLineOverlay.set_cut` (a 1-based line, ``None`` to hide).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRect, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QWidget

LINE_COLOUR = QColor(200, 69, 60)
WINDOW_COLOUR = QColor(201, 150, 43)
TINT_ALPHA = 22


class CutLineOverlay(QWidget):
    """The cut line over ``edit``'s text; ``kind`` ``window`` (a read's end) is drawn amber, not red."""

    def __init__(self, edit: QPlainTextEdit) -> None:
        # A child of the field laid over its viewport, not of the viewport: scrolling moves the
        # viewport's children along with the text.
        super().__init__(edit)
        self.setObjectName("cutLine")
        self.edit = edit
        self.line: int | None = None
        self.resume_line: int | None = None
        self.label = ""
        self.kind = "cut"
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self._viewport = edit.viewport()
        self._viewport.installEventFilter(self)
        edit.updateRequest.connect(self._follow)
        self.setGeometry(edit.viewport().geometry())
        self.hide()

    def set_cut(self, line: int | None, label: str = "", kind: str = "cut", resume_line: int | None = None) -> None:
        """Draw the cut above ``line`` (``None`` hides it); a middle cut also marks where loading resumes."""
        if (line, label, kind, resume_line) == (self.line, self.label, self.kind, self.resume_line):
            return
        self.line, self.label, self.kind, self.resume_line = line, label, kind, resume_line
        self.setVisible(line is not None)
        self.update()

    def _follow(self, rect: QRect, dy: int) -> None:
        """Repaint what the text repaints: all of it on a scroll, else only the strip that changed. (A
        transparent overlay repainted whole makes Qt repaint all the text under it, at every keystroke.)"""
        if self.isVisible():
            self.update() if dy else self.update(rect.intersected(self.rect()))

    def line_y(self, line: int) -> int | None:
        """The viewport y of the top of ``line`` (1-based), ``None`` past the end of the text."""
        block = self.edit.document().findBlockByNumber(line - 1)
        if not block.isValid():
            return None
        return self.edit.cursorRect(QTextCursor(block)).top()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Follow the viewport's size."""
        # Only the viewport is touched here: while the field is being destroyed its wrapper is gone.
        if watched is self._viewport and event.type() in (QEvent.Type.Resize, QEvent.Type.Move):
            self.setGeometry(self._viewport.geometry())
        return False

    def paintEvent(self, event: QPaintEvent) -> None:
        """The tint past the cut, the dashed line and its label (only what is in view is painted)."""
        if self.line is None:
            return
        top = self.line_y(self.line)
        if top is None:
            return
        bottom = self.height()
        if self.resume_line is not None:
            resumed = self.line_y(self.resume_line)
            bottom = resumed if resumed is not None else bottom
        if top > self.height() or bottom < 0:
            return
        colour = WINDOW_COLOUR if self.kind == "window" else LINE_COLOUR
        painter = QPainter(self)
        tint = QColor(colour)
        tint.setAlpha(TINT_ALPHA)
        painter.fillRect(QRect(0, max(top, 0), self.width(), max(bottom - max(top, 0), 0)), tint)
        pen = QPen(colour, 1.5, Qt.PenStyle.DashLine)
        painter.setPen(pen)
        for y in {top, bottom} if self.resume_line is not None else {top}:
            if 0 <= y <= self.height():
                painter.drawLine(0, y, self.width(), y)
        if self.label and 0 <= top <= self.height():
            font = painter.font()
            font.setPointSizeF(max(font.pointSizeF() * 0.85, 7))
            painter.setFont(font)
            metrics = painter.fontMetrics()
            width = metrics.horizontalAdvance(self.label) + 10
            # Below the line, over text that is not loaded anyway; above it near the bottom of the view.
            box = QRect(self.width() - width - 6, top + 2, width, metrics.height() + 2)
            if box.bottom() > self.height():
                box.moveBottom(top - 2)
            background = QColor(self.palette().base().color())
            background.setAlpha(235)
            painter.fillRect(box, background)
            painter.drawText(box, Qt.AlignmentFlag.AlignCenter, self.label)
        painter.end()


def mark_cut_in_markdown(text: str, line: int, label: str) -> str:
    """``text`` with ``label`` in bold at the end of the last line loaded (before ``line``), so the preview
    shows where loading stops without a line being added (the preview's line numbers stay right)."""
    if line <= 1:
        return f"**{label}** {text}"
    end = -1
    for _ in range(line - 1):
        end = text.find("\n", end + 1)
        if end < 0:
            return text
    return f"{text[:end]} **{label}**{text[end:]}"
