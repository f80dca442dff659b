"""An item delegate that wraps one column's text to the column width (tree and table views alike).

``QTreeView`` elides long text even with word wrap on, because the default size hint does not know
the column width; this delegate measures the wrapped text against it.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtWidgets import QAbstractItemView, QStyledItemDelegate, QStyleOptionViewItem, QTreeView

_TEXT_MARGIN = 8
_VERTICAL_PADDING = 6


class WrapDelegate(QStyledItemDelegate):
    """Gives the items of ``column`` the height of their text wrapped to the column's width."""

    def __init__(self, view: QAbstractItemView, column: int) -> None:
        super().__init__(view)
        self.view = view
        self.column = column
        header = getattr(view, "header", None) or getattr(view, "horizontalHeader", None)
        if header is not None:
            header().sectionResized.connect(self._relayout)

    def _relayout(self, section: int, _old: int, _new: int) -> None:
        if section == self.column:
            self.view.scheduleDelayedItemsLayout()

    def _indent(self, index: QModelIndex | QPersistentModelIndex) -> int:
        view = self.view
        if not isinstance(view, QTreeView) or index.column() != 0:
            return 0
        depth = 0
        parent = index.parent()
        while parent.isValid():
            depth += 1
            parent = parent.parent()
        return view.indentation() * (depth + (1 if view.rootIsDecorated() else 0))

    def sizeHint(self, option: QStyleOptionViewItem,  # noqa: N802 (Qt override)
                 index: QModelIndex | QPersistentModelIndex) -> QSize:
        base = super().sizeHint(option, index)
        if index.column() != self.column:
            return base
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        width = self.view.columnWidth(self.column) if hasattr(self.view, "columnWidth") else base.width()
        width -= self._indent(index) + _TEXT_MARGIN
        if opt.features & QStyleOptionViewItem.ViewItemFeature.HasCheckIndicator:
            return base
        text = opt.text or ""
        if width <= 20 or not text:
            return base
        rect = opt.fontMetrics.boundingRect(QRect(0, 0, width, 1_000_000),
                                            int(Qt.TextFlag.TextWordWrap), text)
        return QSize(base.width(), max(base.height(), rect.height() + _VERTICAL_PADDING))
