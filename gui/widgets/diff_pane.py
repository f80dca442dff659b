"""One side of a side-by-side diff: read-only text with line numbers and change colours.

Only the visible lines are painted: the line backgrounds, the changed words and the hatched filler
rows (where the other side has a line alone) are drawn under the text in ``paintEvent``, so a
1 MiB diff costs no more to show than a small one. A filler row can carry a note (why the line on
the other side goes); rows of a change the operator left out are painted neutral.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontDatabase, QPainter, QPaintEvent, QResizeEvent, QTextLine
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from core.documents.diff import DiffRow
from gui.widgets.colors import colour, help_colour

LEFT, RIGHT = "left", "right"
_BLOCK_BREAKS = str.maketrans({"\r": "␍", "\u2029": "¶", "\u2028": "↵", "\x0b": "␋", "\x0c": "␌"})


def _x_of(line: QTextLine, position: int) -> float:
    x = line.cursorToX(position)
    return float(x[0] if isinstance(x, tuple) else x)


class _Gutter(QWidget):
    def __init__(self, pane: DiffPane) -> None:
        super().__init__(pane)
        self.pane = pane

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return QSize(self.pane.gutter_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        self.pane.paint_gutter(self, event)


class DiffPane(QPlainTextEdit):
    """Shows one side (``LEFT`` = before, ``RIGHT`` = after) of a list of :class:`DiffRow`."""

    def __init__(self, side: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.side = side
        self.kinds: list[str] = []
        self.numbers: list[int | None] = []
        self.spans: list[tuple[tuple[int, int], ...]] = []
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setUndoRedoEnabled(False)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse
                                     | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self.notes: dict[int, str] = {}
        self.excluded: frozenset[int] = frozenset()
        self.gutter = _Gutter(self)
        self.blockCountChanged.connect(lambda _n: self._update_margins())
        self.updateRequest.connect(self._on_update_request)
        self._pick_colours()
        self._update_margins()

    def _pick_colours(self) -> None:
        changed = "removed" if self.side == LEFT else "added"
        palette = self.palette()
        self._line_brush = QBrush(colour(f"{changed}-line", palette))
        self._word_brush = QBrush(colour(f"{changed}-word", palette))
        self._filler_brush = QBrush(colour("filler-hatch", palette), Qt.BrushStyle.BDiagPattern)
        self._filler_fill = colour("filler", palette)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt override)
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._pick_colours()  # a theme switch recolours the diff too
            self.viewport().update()

    def set_rows(self, rows: Sequence[DiffRow]) -> None:
        """Show this pane's side of ``rows`` (one text line per row; fillers are empty lines)."""
        left = self.side == LEFT
        self.kinds = [("filler" if (r.left if left else r.right) is None else r.kind) for r in rows]
        self.numbers = [r.left_no if left else r.right_no for r in rows]
        self.spans = [r.left_spans if left else r.right_spans for r in rows]
        texts = [(r.left if left else r.right) or "" for r in rows]
        # One row per block: characters Qt would break a block at are shown as symbols instead.
        self.setPlainText("\n".join(texts).translate(_BLOCK_BREAKS))
        self.notes, self.excluded = {}, frozenset()
        self._update_margins()

    def set_notes(self, notes: dict[int, str]) -> None:
        """Write ``notes[row]`` in the filler rows (a reason for the line the other side drops)."""
        self.notes = dict(notes)
        self.viewport().update()

    def set_excluded(self, rows: frozenset[int]) -> None:
        """Paint ``rows`` neutral: their change is left out."""
        self.excluded = rows
        self.viewport().update()

    def clear_rows(self) -> None:
        """Show nothing."""
        self.kinds, self.numbers, self.spans = [], [], []
        self.notes, self.excluded = {}, frozenset()
        self.clear()

    def line_kind(self, row: int) -> str:
        """The kind of row ``row`` on this side: ``equal``, ``replace``, ``delete``, ``insert`` or ``filler``."""
        return self.kinds[row]

    def scroll_to_row(self, row: int) -> None:
        """Scroll so that row ``row`` is near the top."""
        self.verticalScrollBar().setValue(max(0, row - 3))

    # -- gutter ----------------------------------------------------------------------------------
    def gutter_width(self) -> int:
        digits = len(str(max((n for n in self.numbers if n), default=1)))
        return 14 + self.fontMetrics().horizontalAdvance("9") * max(digits, 3)

    def _update_margins(self) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def _on_update_request(self, rect: QRect, dy: int) -> None:
        if dy:
            self.gutter.scroll(0, dy)
        else:
            self.gutter.update(0, rect.y(), self.gutter.width(), rect.height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        area = self.contentsRect()
        self.gutter.setGeometry(QRect(area.left(), area.top(), self.gutter_width(), area.height()))

    def paint_gutter(self, gutter: QWidget, event: QPaintEvent) -> None:
        painter = QPainter(gutter)
        painter.fillRect(event.rect(), self.palette().color(self.palette().ColorRole.AlternateBase))
        painter.setPen(help_colour(self.palette()))
        painter.setFont(self.font())
        for row, top, height in self._visible_rows(event.rect().bottom()):
            number = self.numbers[row] if row < len(self.numbers) else None
            if number is not None:
                painter.drawText(QRect(0, top, gutter.width() - 6, height),
                                 Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, str(number))
        painter.end()

    # -- change colours --------------------------------------------------------------------------
    def _visible_rows(self, bottom: int):
        block = self.firstVisibleBlock()
        offset = self.contentOffset()
        while block.isValid():
            geometry = self.blockBoundingGeometry(block).translated(offset)
            if geometry.top() > bottom:
                break
            yield block.blockNumber(), round(geometry.top()), round(geometry.height())
            block = block.next()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        if self.kinds:
            painter = QPainter(self.viewport())
            width = self.viewport().width()
            x0 = self.contentOffset().x()
            for row, top, height in self._visible_rows(event.rect().bottom()):
                kind = self.kinds[row] if row < len(self.kinds) else "equal"
                band = QRect(0, top, width, height)
                if kind == "filler":
                    painter.fillRect(band, self._filler_fill)
                    painter.fillRect(band, self._filler_brush)
                    if row in self.notes:
                        self._paint_note(painter, band, self.notes[row])
                elif row in self.excluded:
                    painter.fillRect(band, self._filler_fill)
                elif kind != "equal":
                    painter.fillRect(band, self._line_brush)
                    self._paint_words(painter, row, top, height, x0)
            painter.end()
        super().paintEvent(event)

    def _paint_words(self, painter: QPainter, row: int, top: int, height: int, x0: float) -> None:
        spans = self.spans[row] if row < len(self.spans) else ()
        if not spans:
            return
        block = self.document().findBlockByNumber(row)
        layout = block.layout()
        if layout is None or layout.lineCount() == 0:
            return
        line = layout.lineAt(0)
        base = x0 + layout.position().x()
        for start, end in spans:
            left, right = base + _x_of(line, start), base + _x_of(line, end)
            painter.fillRect(QRectF(left, top, max(right - left, 2.0), height), self._word_brush)

    def _paint_note(self, painter: QPainter, band: QRect, note: str) -> None:
        font = QFont(self.font())
        font.setItalic(True)
        painter.setFont(font)
        metrics = painter.fontMetrics()
        text = metrics.elidedText(note, Qt.TextElideMode.ElideRight, max(0, band.width() - 16))
        painter.fillRect(QRect(band.left() + 3, band.top() + 1, metrics.horizontalAdvance(text) + 8,
                               band.height() - 2), self._filler_fill)  # the hatch stays out from under the text
        painter.setPen(self.palette().color(self.palette().ColorRole.Text))
        painter.drawText(band.adjusted(7, 0, -6, 0), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)

    def word_colour(self) -> QColor:
        """The colour of changed words on this side."""
        return self._word_brush.color()
