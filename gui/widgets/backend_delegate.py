"""Paints one row of the backend picker: name, id and version, capability badges, note, in-use mark."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QFont, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from core.backends import BackendInfo
from gui.models import BackendListModel
from gui.widgets.badges import badges_height, paint_badges
from gui.widgets.colors import colour, help_colour

_MARGIN, _GAP = 10, 4


class BackendDelegate(QStyledItemDelegate):
    """A card per backend; the row the project runs on carries an "in use" mark."""

    def sizeHint(self, option: QStyleOptionViewItem,  # noqa: N802 (Qt override)
                 index: QModelIndex | QPersistentModelIndex) -> QSize:
        info: BackendInfo = index.data(BackendListModel.InfoRole)
        metrics = QFontMetrics(option.font)
        lines = 2 + (1 if info is not None and info.note else 0)
        height = 2 * _MARGIN + lines * metrics.height() + badges_height(option.font) + 3 * _GAP
        return QSize(260, height)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        info: BackendInfo = index.data(BackendListModel.InfoRole)
        if info is None:
            return
        self.initStyleOption(option, index)
        option.text = ""
        style = option.widget.style() if option.widget else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, option, painter, option.widget)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        text_role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        rect = option.rect.adjusted(_MARGIN, _MARGIN, -_MARGIN, -_MARGIN)
        painter.save()
        bold = QFont(option.font)
        bold.setBold(True)
        metrics = QFontMetrics(option.font)
        line_h = metrics.height()
        painter.setPen(option.palette.color(text_role))
        painter.setFont(bold)
        mark = self._mark(index)
        mark_w = QFontMetrics(bold).horizontalAdvance(mark) + 4 if mark else 0
        name_rect = QRect(rect.left(), rect.top(), rect.width() - mark_w, line_h)
        painter.drawText(name_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                         QFontMetrics(bold).elidedText(info.name, Qt.TextElideMode.ElideRight, name_rect.width()))
        if mark:
            if selected:
                painter.setPen(option.palette.color(QPalette.ColorRole.HighlightedText))
            else:
                painter.setPen(colour("ok-fg") if index.data(BackendListModel.ActiveRole) else colour("warning-fg"))
            painter.drawText(QRect(rect.right() - mark_w, rect.top(), mark_w, line_h),
                             Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, mark)
        painter.setFont(option.font)
        painter.setPen(option.palette.color(text_role) if selected else help_colour(option.palette))
        y = rect.top() + line_h + _GAP
        painter.drawText(QRect(rect.left(), y, rect.width(), line_h), Qt.AlignmentFlag.AlignLeft,
                         f"{info.id} · v{info.version}")
        y += line_h + _GAP
        paint_badges(painter, QRect(rect.left(), y, rect.width(), badges_height(option.font)),
                     info.capabilities, option.font)
        y += badges_height(option.font) + _GAP
        if info.note:
            italic = QFont(option.font)
            italic.setItalic(True)
            painter.setFont(italic)
            painter.drawText(QRect(rect.left(), y, rect.width(), line_h), Qt.AlignmentFlag.AlignLeft,
                             metrics.elidedText(info.note, Qt.TextElideMode.ElideRight, rect.width()))
        painter.restore()

    @staticmethod
    def _mark(index: QModelIndex | QPersistentModelIndex) -> str:
        if index.data(BackendListModel.ActiveRole):
            return "● in use"
        if index.data(BackendListModel.ConfiguredRole):
            return "configured, unavailable"
        return ""
