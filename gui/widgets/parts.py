"""Small building blocks the views share: a scaled font, a see-through scroll area, a table of whole rows,
a shortcut that works anywhere in a view."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QAbstractItemModel, Qt
from PySide6.QtGui import QAction, QFont, QKeySequence
from PySide6.QtWidgets import QHeaderView, QScrollArea, QTableView, QWidget


def view_action(view: QWidget, text: str, keys: str | list[str], slot: Callable[[], object]) -> QAction:
    """An action named ``text`` on ``view`` whose shortcut (``keys``: one or several) works anywhere inside
    the view while it is shown, and runs ``slot``; Help ▸ Keyboard shortcuts lists it."""
    action = QAction(text, view)
    action.setShortcuts([QKeySequence(k) for k in ([keys] if isinstance(keys, str) else keys)])
    action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    action.triggered.connect(slot)
    view.addAction(action)
    return action


def scaled_font(font: QFont, factor: float, *, bold: bool = False) -> QFont:
    """A copy of ``font`` at ``factor`` times its point size (kept when it has none), made bold if asked."""
    scaled = QFont(font)
    if scaled.pointSizeF() > 0:
        scaled.setPointSizeF(scaled.pointSizeF() * factor)
    if bold:
        scaled.setBold(True)
    return scaled


def clear_scroll_area(content: QWidget, parent: QWidget) -> QScrollArea:
    """A frameless scroll area around ``content`` that lets the window's background show through."""
    scroll = QScrollArea(parent)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QScrollArea.Shape.NoFrame)
    scroll.viewport().setAutoFillBackground(False)  # the window's background shows through
    scroll.setWidget(content)
    return scroll


def row_table(model: QAbstractItemModel, parent: QWidget, stretch_column: int) -> QTableView:
    """A read-only table of ``model`` selecting one whole row, a line per row, ``stretch_column`` filling the
    width and the other columns fitting their contents."""
    table = QTableView(parent)
    table.setModel(model)
    table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QTableView.SelectionMode.SingleSelection)
    table.setEditTriggers(QTableView.EditTrigger.NoEditTriggers)
    table.setWordWrap(False)
    table.verticalHeader().hide()
    table.verticalHeader().setDefaultSectionSize(parent.fontMetrics().height() + 8)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setSectionResizeMode(stretch_column, QHeaderView.ResizeMode.Stretch)
    return table
