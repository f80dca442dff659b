"""A type-to-filter popup list at the top of the window: quick open (Ctrl+P) and the command palette
(Ctrl+Shift+P) are both one of these.

The list filters on every keystroke (:mod:`gui.fuzzy`; within a frame for 600 documents), the best
match selected, the matched characters in bold. Up/Down (and Page Up/Down) move the selection while
the field keeps the focus, Enter chooses, Esc or a click elsewhere closes. Choosing emits
``chosen`` with the item's key and closes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRect,
    QSize,
    QStringListModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QFont, QFontMetrics, QKeyEvent, QPainter, QPalette
from PySide6.QtWidgets import (
    QDialog,
    QLabel,
    QLineEdit,
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from gui import gc_guard
from gui.fuzzy import FuzzyIndex, FuzzyMatch, match_positions
from gui.widgets.raise_window import bring_forward

#: Rows listed at most (the best ones; the count says how many matched).
SHOWN = 200
#: Rows shown before the list scrolls.
MAX_ROWS = 12


@dataclass(frozen=True)
class PickItem:
    """One row: ``text`` is what the query matches, ``detail`` greyed beside it (a folder, a shortcut)."""

    text: str
    detail: str = ""
    key: Any = None


class _Model(QStringListModel):
    """The rows shown. A ``QStringListModel``, not a Python ``QAbstractListModel``: the view asks
    ``rowCount`` ~300 times per keystroke, each a call into Python (measured in ``python -m bench gui``'s
    quick open); here it stays in C++, and a keystroke's reset is one ``setStringList``."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.items: list[PickItem] = []
        self.rows: list[FuzzyMatch] = []
        self.query = ""

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.UserRole and index.isValid():
            return self.item(index.row())
        if role == Qt.ItemDataRole.ToolTipRole and index.isValid():
            return self.item(index.row()).text
        return super().data(index, role)

    def item(self, row: int) -> PickItem:
        """The item shown at ``row``."""
        return self.items[self.rows[row].index]

    def set_rows(self, rows: list[FuzzyMatch], query: str) -> None:
        self.rows, self.query = rows, query
        items = self.items
        self.setStringList([f"{items[m.index].text}  {items[m.index].detail}".rstrip() for m in rows])


_ALIGN = int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft)
_ALIGN_RIGHT = int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight)


class _Delegate(QStyledItemDelegate):
    """Paints a row: the text with the matched characters bold, then the detail greyed.

    The runs of plain and bold text are computed once per row and query, the fonts' metrics once
    per font: a keystroke repaints only the rows in view, each a few drawText calls.
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._runs: dict[str, list[tuple[str, bool, int]]] = {}
        self._query = ""
        self._fonts: tuple[QFont, QFont, QFontMetrics, QFontMetrics] | None = None
        self._font_key = ""

    def _metrics(self, font: QFont) -> tuple[QFont, QFont, QFontMetrics, QFontMetrics]:
        key = font.key()
        if self._fonts is None or key != self._font_key:
            plain, bold = QFont(font), QFont(font)  # copies: the option's font goes with the option
            bold.setBold(True)
            self._fonts, self._font_key = (plain, bold, QFontMetrics(plain), QFontMetrics(bold)), key
            self._runs.clear()
        return self._fonts

    def _runs_of(self, text: str, query: str, metrics: tuple[QFont, QFont, QFontMetrics, QFontMetrics]) -> list[tuple[str, bool, int]]:
        if query != self._query:
            self._runs.clear()
            self._query = query
        runs = self._runs.get(text)
        if runs is None:
            marked = set(match_positions(query, text)) if query else set()
            pieces: list[list] = []
            for i, ch in enumerate(text):
                flag = i in marked
                if pieces and pieces[-1][1] == flag:
                    pieces[-1][0] += ch
                else:
                    pieces.append([ch, flag])
            runs = [(t, f, (metrics[3] if f else metrics[2]).horizontalAdvance(t)) for t, f in pieces]
            self._runs[text] = runs
        return runs

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        model = index.model()
        assert isinstance(model, _Model)
        item = model.item(index.row())
        # No initStyleOption: it asks the model for a dozen roles, each a call into Python, for a text and an
        # icon this delegate draws itself; the view's option has the state, palette, font and rect needed.
        opt = option
        style = opt.widget.style() if opt.widget else None
        if style is not None:  # the row's background: selection, hover, focus
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        palette = opt.palette
        color = palette.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text)
        dim = palette.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.PlaceholderText)
        metrics = self._metrics(opt.font)
        plain, bold, plain_metrics = metrics[0], metrics[1], metrics[2]
        rect = opt.rect.adjusted(8, 0, -8, 0)
        x, top, height, right = rect.left(), rect.top(), rect.height(), rect.right()
        painter.save()
        painter.setPen(color)
        for text, flag, width in self._runs_of(item.text, model.query, metrics):
            painter.setFont(bold if flag else plain)
            painter.drawText(QRect(x, top, right - x, height), _ALIGN, text)
            x += width
            if x >= right:
                break
        if item.detail and x < right - 40:
            painter.setFont(plain)
            painter.setPen(dim)
            detail = plain_metrics.elidedText(item.detail, Qt.TextElideMode.ElideMiddle, right - x - 16)
            painter.drawText(QRect(x + 16, top, right - x - 16, height), _ALIGN_RIGHT, detail)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        return QSize(option.rect.width(), QFontMetrics(option.font).height() + 10)


class FuzzyPicker(QDialog):
    """The popup: a field over a filtered list of :class:`PickItem`."""

    chosen = Signal(object)  # the chosen item's key

    def __init__(self, placeholder: str, parent: QWidget | None = None, *, name: str = "fuzzyPicker") -> None:
        # A frameless dialog rather than a Qt popup: it closes when it loses the focus, without
        # grabbing the keyboard and mouse (which offscreen runs and some window managers refuse).
        super().__init__(parent, Qt.WindowType.Dialog | Qt.WindowType.FramelessWindowHint)
        self.setObjectName(name)
        self.field = QLineEdit(self)
        self.field.setObjectName("pickerField")
        self.field.setPlaceholderText(placeholder)
        self.count_label = QLabel("", self)
        self.count_label.setObjectName("pickerCount")
        self.count_label.setTextFormat(Qt.TextFormat.PlainText)
        self.model = _Model(self)
        self.list = QListView(self)
        self.list.setObjectName("pickerList")
        self.list.setModel(self.model)
        self.list.setItemDelegate(_Delegate(self.list))
        self.list.setUniformItemSizes(True)
        self.list.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setStyleSheet(f"QDialog#{name} {{ border: 1px solid palette(dark); }}")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)
        layout.addWidget(self.field)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.count_label)
        self._index = FuzzyIndex([])
        self._items: list[PickItem] = []
        self._was_active = False
        self.field.textChanged.connect(self.filter)
        self.field.installEventFilter(self)
        self.list.clicked.connect(lambda index: self._choose(index.row()))

    def set_items(self, items: list[PickItem]) -> None:
        """The rows to choose from, in their default order (shown as is for an empty query)."""
        self._items = items
        self.model.items = items
        self._index = FuzzyIndex([i.text for i in items])
        self.filter(self.field.text())

    def filter(self, query: str) -> None:
        """Show the rows matching ``query``, best first, the first selected."""
        matches = self._index.search(query)
        self.model.set_rows(matches[:SHOWN], query)
        if matches:
            self.list.setCurrentIndex(self.model.index(0))
        total = len(self._items)
        self.count_label.setText(f"{len(matches):,} of {total:,}" if query else f"{total:,}")
        self._fit(len(matches))

    def _fit(self, rows: int) -> None:
        """As tall as the rows listed (at most :data:`MAX_ROWS` before it scrolls), never taller."""
        if not self.isVisible():
            return
        row = self.list.sizeHintForRow(0) if self.model.rowCount() else self.fontMetrics().height() + 10
        self.list.setFixedHeight(max(min(rows, MAX_ROWS), 1) * row + 2 * self.list.frameWidth() + 2)
        self.adjustSize()

    def shown_texts(self) -> list[str]:
        """The texts of the rows listed, in order (tests, screenshots)."""
        return [self._items[m.index].text for m in self.model.rows]

    def popup(self, anchor: QWidget) -> None:
        """Show at the top centre of ``anchor`` (the window), with an empty query and the field focused."""
        width = min(max(anchor.width() * 6 // 10, 420), 720, anchor.width() - 24)
        top_left = anchor.mapToGlobal(anchor.rect().topLeft())
        self.setFixedWidth(width)
        self.move(top_left.x() + (anchor.width() - width) // 2, top_left.y() + 48)
        self.field.clear()
        self._was_active = False
        self.show()
        self.filter("")
        bring_forward(self)
        self.field.setFocus(Qt.FocusReason.PopupFocusReason)

    def changeEvent(self, event: QEvent) -> None:
        """Close when another window takes the focus (a click elsewhere), as a popup does."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.ActivationChange and self.isVisible() and not self.isActiveWindow():
            self._was_active and self.close()
        if event.type() == QEvent.Type.ActivationChange and self.isActiveWindow():
            self._was_active = True

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Keys in the field: Up/Down/Page move the selection, Enter chooses, Esc closes."""
        if watched is self.field and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            gc_guard.note_input()  # the list filters on each key: no collection in between
            key = event.key()
            rows = self.model.rowCount()
            row = self.list.currentIndex().row()
            step = {Qt.Key.Key_Down: 1, Qt.Key.Key_Up: -1, Qt.Key.Key_PageDown: 10, Qt.Key.Key_PageUp: -10}.get(key)
            if step is not None:
                if rows:
                    self.list.setCurrentIndex(self.model.index(min(max(row + step, 0), rows - 1)))
                return True
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                if row >= 0:
                    self._choose(row)
                return True
            if key == Qt.Key.Key_Escape:
                self.close()
                return True
        return super().eventFilter(watched, event)

    def _choose(self, row: int) -> None:
        if 0 <= row < len(self.model.rows):
            key = self._items[self.model.rows[row].index].key
            self.close()
            self.chosen.emit(key)
