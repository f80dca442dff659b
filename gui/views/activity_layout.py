"""How the Activity view's table fits a small window (800×600) and still reads (issue 23's leftover 5).

- The narrow columns (time, writer, kind, document) are sized to what they hold, each within a cap that
  shrinks with the table, so "What" gets the rest: at 800×600 it had ~130 px of ~540 beside a document
  column sized for 26 characters.
- "What" is cut at its end, not in its middle: its start says what happened (a firewall report starts with
  the rule and the line). A document path is cut at its start: its file name stays.
- A cut "What" is readable whole: in its tooltip (wrapped), and in a line under the table for the selected
  row (its document, then its "What"), wrapped and selectable.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, Qt
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QWidget,
)

from core.project.activity import ActivityEntry

#: Columns: time, writer, kind, document, what (the last stretches).
DOCUMENT, WHAT = 3, 4
#: Each narrow column's cap, in average characters, and its share of the table's width at most.
_CAPS = ((19, 0.16), (22, 0.2), (8, 0.1), (48, 0.2))
_SAMPLE = 300  # rows measured when sizing (the newest first): 10,000 rows are not measured one by one
DETAIL_CHARS = 600
DETAIL_LINES = 6
#: Below this many average characters, "What" wraps onto a second line.
WIDE_WHAT = 60


class PathDelegate(QStyledItemDelegate):
    """The document column's: a path is cut at its start (its file name stays) and on one line (a path cut over
    two lines reads worse than cut once). Only this column has a delegate of its own, so scrolling calls into
    Python once a row, not once a cell; the table cuts the others at their end."""

    def initStyleOption(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideLeft  # type: ignore[attr-defined]
        option.features &= ~QStyleOptionViewItem.ViewItemFeature.WrapText  # type: ignore[attr-defined]


def install(table: QTableView) -> None:
    """Cut cells at their end ("What" keeps its start), paths at their start (:class:`PathDelegate`)."""
    table.setTextElideMode(Qt.TextElideMode.ElideRight)
    table.setItemDelegateForColumn(DOCUMENT, PathDelegate(table))


def what_text(entry: ActivityEntry) -> str:
    """The whole of what a row's "What" cell says (a report's or an entry's first line uncut)."""
    first = next((line.strip() for line in entry.text.splitlines() if line.strip()), "")
    if entry.kind == "append" and first and entry.summary.endswith("…") and first.startswith(entry.summary[:-1]):
        return first
    return entry.summary


def what_tooltip(entry: ActivityEntry) -> str:
    """The tooltip of a row: when, who, which document, then the whole "What" and the entry's text, wrapped."""
    head = f"{entry.when.astimezone():%Y-%m-%d %H:%M:%S %Z} · {entry.writer} · {entry.path}"
    whole = what_text(entry)
    body = entry.text.strip()[:DETAIL_CHARS]
    parts = [head, whole] + ([body] if body and body != whole and not body.startswith(whole) else [])
    return "<p style='white-space:pre-wrap'>" + "<br>".join(html.escape(p) for p in parts) + "</p>"


def fit_columns(table: QTableView) -> None:
    """Size the narrow columns to their contents within their caps; "What" (stretched last) keeps the rest."""
    model = table.model()
    header = table.horizontalHeader()
    metrics = table.fontMetrics()
    width = max(table.viewport().width(), 1)
    rows = min(model.rowCount(), _SAMPLE)
    pad = metrics.averageCharWidth() + 12  # the cell's margins and a little air
    document_wants = 0
    for column, (chars, share) in enumerate(_CAPS):
        cap = min(metrics.averageCharWidth() * chars, int(width * share)) + pad
        title = model.headerData(column, Qt.Orientation.Horizontal)
        wanted = metrics.horizontalAdvance(str(title or "")) + pad
        for row in range(rows):
            text = model.index(row, column).data()
            if text:
                wanted = max(wanted, metrics.horizontalAdvance(str(text)) + pad)
        header.resizeSection(column, min(wanted, cap))
        if column == DOCUMENT:
            document_wants = min(wanted, metrics.averageCharWidth() * chars + pad)
    # Room to spare beside a wide "What": the document's path whole (up to its cap in characters).
    spare = width - sum(header.sectionSize(c) for c in range(len(_CAPS))) - metrics.averageCharWidth() * WIDE_WHAT
    if spare > 0 and document_wants > header.sectionSize(DOCUMENT):
        header.resizeSection(DOCUMENT, min(document_wants, header.sectionSize(DOCUMENT) + spare))
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    header.setStretchLastSection(True)
    # A narrow "What" gets two lines a row (wrapped, the second cut at its end): twice the text at 800×600.
    narrow = sum(header.sectionSize(c) for c in range(len(_CAPS)))
    two = width - narrow < metrics.averageCharWidth() * WIDE_WHAT
    lines = 2 if two else 1
    if table.wordWrap() != two:
        table.setWordWrap(two)
    height = metrics.lineSpacing() * lines + 8
    if table.verticalHeader().defaultSectionSize() != height:
        table.verticalHeader().setDefaultSectionSize(height)


def detail_label(parent: QWidget) -> QLabel:
    """The line under the table that shows the selected row's "What" whole, wrapped and selectable."""
    label = QLabel("", parent)
    label.setObjectName("activityDetail")
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.hide()
    return label


def show_detail(label: QLabel, entry: ActivityEntry | None, width: int) -> None:
    """Show ``entry``'s document and whole "What" (cut at :data:`DETAIL_CHARS`) under the table, ``width`` wide, as many lines
    as it takes up to :data:`DETAIL_LINES`; hide the line without one."""
    if entry is None:
        label.hide()
        label.setText("")
        return
    text = what_text(entry)
    text = text if len(text) <= DETAIL_CHARS else text[:DETAIL_CHARS - 1] + "…"
    label.setText(f"{entry.path.removeprefix('.fusion/')}: {text}")  # the document whole too: its column may be cut
    spacing = label.fontMetrics().lineSpacing()
    # Measured from the text, not label.heightForWidth: that answers the height the label is fixed at.
    needed = label.fontMetrics().boundingRect(QRect(0, 0, max(width, 100), 1 << 20),
                                              int(Qt.TextFlag.TextWordWrap), label.text()).height()
    label.setFixedHeight(min(max(needed, spacing), spacing * DETAIL_LINES) + 4)
    label.show()
