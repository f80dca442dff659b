"""The document picker: every memory document of the project, in design §2a order, beside the editor.

One row per document with its label, a layer badge, its size and last change; each agent's files
are grouped under the agent. The current document is selected, and a document with unsaved edits
shows a dot. Choosing a row emits :attr:`DocumentPicker.documentChosen`; the picker never opens
anything itself.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontMetrics, QResizeEvent
from PySide6.QtWidgets import QHeaderView, QTreeWidget, QTreeWidgetItem, QWidget

from core.documents.layout import DocumentInfo
from core.storage.fileio import format_size

PATH_ROLE = Qt.ItemDataRole.UserRole + 1
#: Widths (px) from which the Layer and Changed columns show (the default window's picker is 300 wide).
LAYER_FROM, CHANGED_FROM = 280, 240
DIRTY_MARK = " •"
LAYER_BADGES = {
    "working": "working", "long-term": "long-term", "daily": "daily", "dreams": "dreams",
    "insights": "insights", "archive": "archive", "legacy": "legacy",
}


def compact_time(iso: str) -> str:
    """``MM-DD HH:MM`` for a ``YYYY-MM-DD HH:MM:SS`` time (the year is in the tooltip)."""
    return iso[5:16] if len(iso) >= 16 else iso


def short_name(doc: DocumentInfo) -> str:
    """The row's name: the file for long-term and dreams, the date for a daily note."""
    name = doc.path.rsplit("/", 1)[-1]
    if doc.layer == "daily":
        return name.removesuffix(".md")
    if doc.layer == "legacy":
        return f"{name} (legacy)"
    if doc.layer in {"insights", "archive"}:
        return doc.label
    return name


class DocumentPicker(QTreeWidget):
    """A tree of the project's documents; emits the chosen document's project-relative path."""

    documentChosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("documentPicker")
        self.setColumnCount(4)
        self.setHeaderLabels(["Document", "Layer", "Size", "Changed"])
        self.setRootIsDecorated(True)
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in (1, 2, 3):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.setMinimumWidth(200)
        self.setIndentation(12)
        self._items: dict[str, QTreeWidgetItem] = {}
        self._dirty: set[str] = set()
        self._current: str | None = None
        self.itemActivated.connect(self._on_activated)
        self.itemClicked.connect(self._on_activated)

    def set_documents(self, docs: list[DocumentInfo], current: str | None = None) -> None:
        """Show ``docs`` (in their order), agents' files grouped under each agent."""
        self.blockSignals(True)
        self.clear()
        self._items.clear()
        groups: dict[str, QTreeWidgetItem] = {}
        for doc in docs:
            parent: QTreeWidget | QTreeWidgetItem = self
            if doc.agent:
                group = groups.get(doc.agent)
                if group is None:
                    group = QTreeWidgetItem(self, [doc.agent, "agent", "", ""])
                    group.setFlags(Qt.ItemFlag.ItemIsEnabled)
                    group.setExpanded(True)
                    groups[doc.agent] = group
                parent = group
            changed = (doc.updated_at or "").replace("T", " ").rstrip("Z")
            item = QTreeWidgetItem(parent, [short_name(doc), LAYER_BADGES.get(doc.layer, doc.layer),
                                            format_size(doc.size) if doc.size is not None else "",
                                            compact_time(changed)])
            item.setData(0, PATH_ROLE, doc.path)
            tip = f"{doc.label}\n{doc.path}\nlast change {changed or 'unknown'} UTC"
            item.setToolTip(0, tip + ("\nFusion does not read this file" if doc.legacy else ""))
            item.setTextAlignment(2, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self._items[doc.path] = item
        self.expandAll()
        self.blockSignals(False)
        self._paint_dirty()
        self.set_current(current or self._current)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        """Narrow: name and size only (the name tells the layer); wide: layer and last change too."""
        super().resizeEvent(event)
        width = event.size().width()
        hide_changed = width < CHANGED_FROM
        hide_layer = width < LAYER_FROM or not self._names_fit(width, {1, 3} - ({3} if hide_changed else set()))
        if not hide_changed and not self._names_fit(width, {3} if hide_layer else {1, 3}):
            hide_changed = True  # the names first: "MEM…" and "2026-…" at 285 px told nothing
        self.setColumnHidden(1, hide_layer)
        self.setColumnHidden(3, hide_changed)

    def _names_fit(self, width: int, shown: set[int]) -> bool:
        """Whether every document's name fits beside the size column and the columns ``shown`` (1, 3)."""
        metrics = self.fontMetrics()
        font = self.font()
        font.setBold(True)
        bold = QFontMetrics(font)  # names are measured bold with their dot: a first keystroke moves no column
        widest = {column: 0 for column in (0, 1, 2, 3)}
        for item in self._items.values():
            depth = 0
            parent = item.parent()
            while parent is not None:
                depth, parent = depth + 1, parent.parent()
            name = bold.horizontalAdvance(item.text(0).removesuffix(DIRTY_MARK) + DIRTY_MARK)  # as when unsaved
            widest[0] = max(widest[0], name + self.indentation() * (depth + 1))
            for column in (1, 2, 3):
                widest[column] = max(widest[column], metrics.horizontalAdvance(item.text(column)))
        header = self.header()
        others = sum(max(widest[c] + 12, self.sizeHintForColumn(c), header.sectionSizeHint(c)) for c in (2, *shown))
        return width - self.frameWidth() * 2 - others >= widest[0] + 8

    def paths(self) -> list[str]:
        """The documents listed, in order."""
        return list(self._items)

    def set_current(self, path: str | None) -> None:
        """Select ``path``'s row without emitting :attr:`documentChosen`."""
        self._current = path
        item = self._items.get(path or "")
        self.blockSignals(True)
        self.setCurrentItem(item) if item is not None else self.clearSelection()
        self.blockSignals(False)

    def set_dirty(self, path: str, dirty: bool) -> None:
        """Mark ``path`` as having unsaved edits (a dot after its label)."""
        if (path in self._dirty) == dirty:
            return
        (self._dirty.add if dirty else self._dirty.discard)(path)
        self._paint_dirty([path])

    def is_marked_dirty(self, path: str) -> bool:
        """Whether the row of ``path`` shows the unsaved-edits dot."""
        item = self._items.get(path)
        return item is not None and item.text(0).endswith(DIRTY_MARK)

    def _paint_dirty(self, paths: list[str] | None = None) -> None:
        for path in self._items if paths is None else paths:
            item = self._items.get(path)
            if item is None:
                continue
            text = item.text(0).removesuffix(DIRTY_MARK)
            item.setText(0, text + DIRTY_MARK if path in self._dirty else text)
            font = item.font(0)
            font.setBold(path in self._dirty)
            item.setFont(0, font)

    def _on_activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        path = item.data(0, PATH_ROLE)
        if isinstance(path, str) and path != self._current:
            self.documentChosen.emit(path)
