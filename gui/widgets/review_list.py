"""The list of proposed insights under review: category rows with their counts, and each insight as
readable text (a state badge, its inline markdown rendered, its source as a link).

Rows are painted from a ``QTextDocument`` as tall as the text needs at the list's width; the list
lays its rows out again as soon as its width changes, so heights never lag a resize behind. A click
on the source link emits ``sourceClicked(index)`` (an index of the list's model).
"""

from __future__ import annotations

import html
import math

from PySide6.QtCore import QEvent, QModelIndex, QPersistentModelIndex, QPointF, QSize, Qt, Signal
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QMouseEvent,
    QPainter,
    QPalette,
    QResizeEvent,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeView,
    QWidget,
)

from gui.models import ProposalReviewModel, ReviewItem, category_title, group_counts, review_status
from gui.widgets.colors import css

_Index = QModelIndex | QPersistentModelIndex
SOURCE_ANCHOR = "source"
# The badge of each state: (background role, foreground role) from gui.widgets.colors.
_BADGES = {"new": ("info-bg", "info-fg"), "to merge": ("ok-bg", "ok-fg"), "to reject": ("error-bg", "error-fg"),
           "merged": ("badge-bg", "badge-fg"), "rejected": ("filler", "badge-off-fg"),
           "already present": ("warning-bg", "warning-fg")}


def _badge(state: str) -> str:
    background, foreground = _BADGES.get(state.split(", ")[-1], _BADGES["new"])
    return (f"<span style='background-color:{css(background)}; color:{css(foreground)}'>"
            f"&nbsp;{html.escape(state)}&nbsp;</span>")


def item_html(item: ReviewItem, content_html: str, palette: QPalette, selected: bool) -> str:
    """The rich text of one insight row."""
    muted = palette.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.PlaceholderText)
    link = palette.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Link)
    body = f"<s>{content_html}</s>" if item.state == "rejected" else content_html
    if item.state == "merged" or item.status == "rejected":
        body = f"<span style='color:{muted.name()}'>{body}</span>"
    source = html.escape(item.insight.source or "no source given")
    if item.source_line is not None:
        where = (f"<a href='{SOURCE_ANCHOR}' style='color:{link.name()}'>↗ {source} · memory line "
                 f"{item.source_line}</a>")
    else:
        where = f"{source} · not found in the memory"
    return (f"<div>{_badge(review_status(item))}&nbsp; {body}</div>"
            f"<div style='margin-top:3px; color:{muted.name()}'><small>{where}</small></div>")


def group_html(title: str, counts: str, palette: QPalette, selected: bool) -> str:
    """The rich text of a category row."""
    muted = palette.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.PlaceholderText)
    return f"<b>{html.escape(title)}</b>&nbsp;&nbsp;<span style='color:{muted.name()}'>{html.escape(counts)}</span>"


class RichTextDelegate(QStyledItemDelegate):
    """Paints each row as the rich text :meth:`html` gives (the display text, escaped, by default),
    as tall as that text needs at the row's width, and reports clicks on its ``source`` link."""

    sourceClicked = Signal(QModelIndex)
    PAD = 5

    def __init__(self, view: QTreeView) -> None:
        super().__init__(view)
        self.view = view
        self._heights: dict[tuple[str, int], int] = {}

    def html(self, index: _Index, palette: QPalette, selected: bool) -> str:
        """The rich text of the row of ``index``."""
        return html.escape(str(index.data() or ""))

    def width_for(self, index: _Index) -> int:
        """The width an index's row has in the list now (its indentation taken off the viewport's)."""
        depth = 1 if index.parent().isValid() else 0
        indent = self.view.indentation() * (depth + (1 if self.view.rootIsDecorated() else 0))
        return max(80, self.view.viewport().width() - indent)

    def document(self, index: _Index, width: int, palette: QPalette, selected: bool = False) -> QTextDocument:
        """The laid-out text of the row of ``index`` at ``width``."""
        doc = QTextDocument()
        doc.setDocumentMargin(self.PAD)
        doc.setDefaultFont(self.view.font())
        # On a selected row the code background darkens the highlight instead of punching a light hole in it.
        code_bg = (palette.color(QPalette.ColorRole.Highlight).darker(125) if selected
                   else palette.color(QPalette.ColorRole.AlternateBase)).name()
        doc.setDefaultStyleSheet(f"code {{ background-color: {code_bg}; font-family: monospace; }}")
        doc.setHtml(self.html(index, palette, selected))
        doc.setTextWidth(width)
        return doc

    def clear_cache(self) -> None:
        """Forget the measured heights (the font or the palette changed)."""
        self._heights.clear()

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:  # noqa: N802 (Qt override)
        width = self.width_for(index)
        palette = self.view.palette()
        key = (self.html(index, palette, False), width)
        height = self._heights.get(key)
        if height is None:
            if len(self._heights) > 20_000:
                self._heights.clear()
            height = math.ceil(self.document(index, width, palette).size().height())
            self._heights[key] = height
        return QSize(width, height)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        style = opt.widget.style() if opt.widget is not None else self.view.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        doc = self.document(index, option.rect.width(), option.palette, selected)
        context = QAbstractTextDocumentLayout.PaintContext()
        palette = QPalette(option.palette)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        palette.setColor(QPalette.ColorRole.Text, option.palette.color(role))
        context.palette = palette
        painter.save()
        painter.translate(option.rect.topLeft())
        painter.setClipRect(0, 0, option.rect.width(), option.rect.height())
        doc.documentLayout().draw(painter, context)
        painter.restore()

    def anchor_at(self, index: _Index, rect_width: int, point: QPointF) -> str:
        """The link under ``point`` (relative to the row's top left), ``""`` when none."""
        doc = self.document(index, rect_width, self.view.palette())
        return doc.documentLayout().anchorAt(point)

    def editorEvent(self, event: QEvent, model, option: QStyleOptionViewItem, index: _Index) -> bool:  # noqa: N802
        if isinstance(event, QMouseEvent):
            point = event.position() - QPointF(option.rect.topLeft())
            on_link = self.anchor_at(index, option.rect.width(), point) == SOURCE_ANCHOR
            if event.type() == QEvent.Type.MouseMove:
                cursor = Qt.CursorShape.PointingHandCursor if on_link else Qt.CursorShape.ArrowCursor
                self.view.viewport().setCursor(cursor)
            elif (event.type() == QEvent.Type.MouseButtonRelease and event.button() == Qt.MouseButton.LeftButton
                  and on_link):
                self.sourceClicked.emit(QModelIndex(index))
                return True
        return super().editorEvent(event, model, option, index)


class ReviewDelegate(RichTextDelegate):
    """Category rows with their counts; insights with their state, rendered content and source link."""

    def html(self, index: _Index, palette: QPalette, selected: bool) -> str:
        """The rich text of a category or an insight row."""
        item = index.data(ProposalReviewModel.ItemRole)
        if item is None:
            model = index.model()
            members = [model.index(r, 0, index).data(ProposalReviewModel.ItemRole) for r in range(model.rowCount(index))]
            total = index.data(ProposalReviewModel.TotalRole) or 0
            counts = group_counts(members)
            if len(members) != total:
                counts = f"{len(members)} of {total} shown · " + counts.split(" · ", 1)[-1]
            return group_html(category_title(index.data(ProposalReviewModel.CategoryRole) or ""), counts,
                              palette, selected)
        return item_html(item, index.data(ProposalReviewModel.HtmlRole) or "", palette, selected)


class RichTree(QTreeView):
    """A one-column tree whose rows a :class:`RichTextDelegate` paints, laid out again whenever its width
    changes (so row heights never lag a resize behind)."""

    def __init__(self, parent: QWidget | None = None, delegate: type[RichTextDelegate] = RichTextDelegate) -> None:
        super().__init__(parent)
        self.setHeaderHidden(True)
        self.setUniformRowHeights(False)
        self.setIndentation(14)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setTabKeyNavigation(False)  # Tab leaves the list; arrows move inside it
        self.setMouseTracking(True)
        self.delegate = delegate(self)
        self.setItemDelegate(self.delegate)
        self._laid_out_width = -1

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        width = self.viewport().width()
        if width != self._laid_out_width:
            self._laid_out_width = width
            self.doItemsLayout()  # heights for the new width now, not at the next resize

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt override)
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self.delegate.clear_cache()
            self.doItemsLayout()


class ReviewList(RichTree):
    """Category rows with their insights beneath, each row as tall as its text at the current width."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, ReviewDelegate)
