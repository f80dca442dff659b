"""The outline of a memory document: its ``#`` and ``##`` sections, following the cursor.

A ``QTreeWidget`` with one row per heading (``##`` rows under the ``#`` above them). It is told the
headings (:meth:`OutlineView.set_headings`) and the cursor's line (:meth:`set_current_line`), marks
the section holding that line, and emits ``lineActivated(line)`` when the operator clicks a row or
presses Enter on it. It knows nothing of the editor.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from gui.editor.sections import Heading, section_index

LINE_ROLE = Qt.ItemDataRole.UserRole


class OutlineView(QWidget):
    """A title ("Outline · 44", the number of sections) over a tree of the document's sections."""

    lineActivated = Signal(int)  # 0-based line of the heading the operator picked

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("outline")
        self.title = QLabel("Outline", self)
        self.title.setObjectName("outlineTitle")
        self.tree = QTreeWidget(self)
        self.tree.setObjectName("outlineTree")
        self.tree.setHeaderHidden(True)
        self.tree.setIndentation(12)
        self.tree.setUniformRowHeights(True)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.tree.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.title)
        layout.addWidget(self.tree, 1)
        self.headings: list[Heading] = []
        self._items: list[QTreeWidgetItem] = []
        self.tree.itemClicked.connect(self._on_item)
        self.tree.itemActivated.connect(self._on_item)

    def set_headings(self, headings: list[Heading]) -> None:
        """Show these headings (levels 1 and 2 are kept), keeping the current row when it still exists."""
        shown = [h for h in headings if h.level <= 2]
        if shown == self.headings:
            return
        current = self.current_heading()
        self.headings = shown
        self.tree.clear()
        self._items = []
        parent: QTreeWidgetItem | None = None
        for heading in shown:
            item = QTreeWidgetItem([heading.title or heading.label])
            item.setData(0, LINE_ROLE, heading.line)
            item.setToolTip(0, f"{heading.label} — line {heading.line + 1:,}")
            if heading.level == 1 or parent is None:
                self.tree.addTopLevelItem(item)
                parent = item if heading.level == 1 else None
            else:
                parent.addChild(item)
            self._items.append(item)
        self.tree.expandAll()
        count = sum(1 for h in shown if h.level == 2) or len(shown)
        self.title.setText(f"Outline · {count}")
        self.title.setToolTip(f"{count} section{'s' if count != 1 else ''}: the # and ## headings. "
                              "Click one to go there; the marked one holds the cursor.")
        if current is not None:
            self.set_current_line(current.line)

    def set_current_line(self, line: int) -> None:
        """Mark the section that holds ``line`` (0-based) and scroll it into view."""
        index = section_index(self.headings, line)
        item = self._items[index] if index >= 0 else None
        if item is self.tree.currentItem():
            return
        self.tree.blockSignals(True)
        self.tree.setCurrentItem(item)
        self.tree.blockSignals(False)
        if item is not None:
            self.tree.scrollToItem(item)

    def current_heading(self) -> Heading | None:
        """The heading of the marked row, if any."""
        item = self.tree.currentItem()
        return self.headings[self._items.index(item)] if item in self._items else None

    def _on_item(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        self.lineActivated.emit(int(item.data(0, LINE_ROLE)))
