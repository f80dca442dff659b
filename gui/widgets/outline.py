"""The outline of a memory document: its ``#`` and ``##`` sections, following the cursor.

A ``QTreeWidget`` with one row per heading (``##`` rows under the ``#`` above them). It is told the
headings (:meth:`OutlineView.set_headings`) and the cursor's line (:meth:`set_current_line`), marks
the section holding that line, and emits ``lineActivated(line)`` when the operator clicks a row or
presses Enter on it. It knows nothing of the editor.

Told where an agent stops loading the document (:meth:`OutlineView.set_cut`), it marks the sections
that agent never sees with a leading ✂ (it stays readable when the row is elided): greyed when wholly
past the cut, in the normal colour when the cut runs through it; their tooltips say which.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QPalette
from PySide6.QtWidgets import QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from gui.editor.sections import Heading, section_index

LINE_ROLE = Qt.ItemDataRole.UserRole
CUT_ROLE = Qt.ItemDataRole.UserRole + 1  # "wholly", "partly" or None: how far the section is past the cut
SCISSORS = "✂"


@dataclass(frozen=True)
class OutlineCut:
    """Where ``reader`` stops loading: 0-based first line not loaded, and where it resumes (a middle cut)."""

    first_line: int
    resume_line: int | None = None
    reader: str = "An agent"


def past_state(headings: list[Heading], index: int, cut: OutlineCut | None) -> str | None:
    """``"wholly"``/``"partly"`` when the section of ``headings[index]`` is past ``cut``, else None.

    A section runs to the line before the next heading of its level or higher (as core.budget reads it).
    """
    if cut is None:
        return None
    head = headings[index]
    end = next((h.line - 1 for h in headings[index + 1:] if h.level <= head.level), None)
    last = cut.resume_line - 1 if cut.resume_line is not None else None  # last line not loaded
    if (end is not None and end < cut.first_line) or (last is not None and head.line > last):
        return None
    inside = head.line >= cut.first_line and (last is None or (end is not None and end <= last))
    return "wholly" if inside else "partly"


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
        self.cut: OutlineCut | None = None
        self._count = 0
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
            if heading.level == 1 or parent is None:
                self.tree.addTopLevelItem(item)
                parent = item if heading.level == 1 else None
            else:
                parent.addChild(item)
            self._items.append(item)
        self.tree.expandAll()
        self._count = sum(1 for h in shown if h.level == 2) or len(shown)
        self._mark_cut()
        if current is not None:
            self.set_current_line(current.line)

    def set_cut(self, cut: OutlineCut | None) -> None:
        """Mark the sections past ``cut`` (None: no agent misses any)."""
        if cut != self.cut:
            self.cut = cut
            self._mark_cut()

    def past_the_cut(self) -> list[tuple[str, str]]:
        """The marked sections as ``(row text, "wholly" | "partly")``, top to bottom (what is shown)."""
        return [(item.text(0), item.data(0, CUT_ROLE)) for item in self._items if item.data(0, CUT_ROLE)]

    def _mark_cut(self) -> None:
        dim = QBrush(self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text))
        wholly = 0
        for index, (heading, item) in enumerate(zip(self.headings, self._items, strict=True)):
            state = past_state(self.headings, index, self.cut)
            title = heading.title or heading.label
            tip = f"{heading.label} — line {heading.line + 1:,}"
            if state == "wholly":
                wholly += 1
                item.setText(0, f"{SCISSORS} {title}")
                item.setForeground(0, dim)
                tip += f"\nPast the cut: {self.cut.reader} does not load this section."  # type: ignore[union-attr]
            elif state == "partly":
                item.setText(0, f"{SCISSORS} {title}")
                item.setData(0, Qt.ItemDataRole.ForegroundRole, None)
                tip += (f"\nPartly past the cut: {self.cut.reader} stops loading at line "  # type: ignore[union-attr]
                        f"{self.cut.first_line + 1:,}, inside this section.")  # type: ignore[union-attr]
            else:
                item.setText(0, title)
                item.setData(0, Qt.ItemDataRole.ForegroundRole, None)
            item.setData(0, CUT_ROLE, state)
            item.setToolTip(0, tip)
        count = self._count
        past = f" · {SCISSORS} {wholly}" if wholly else ""  # short: the outline is narrow
        self.title.setText(f"Outline · {count}{past}")
        tip = (f"{count} section{'s' if count != 1 else ''}: the # and ## headings. "
               "Click one to go there; the marked one holds the cursor.")
        if self.cut is not None:
            tip += (f"\n{SCISSORS} {self.cut.reader} stops loading at line {self.cut.first_line + 1:,}: "
                    f"{wholly} section{'s' if wholly != 1 else ''} (greyed) are not loaded at all; "
                    f"a {SCISSORS} in the normal colour marks a section the cut runs through.")
        self.title.setToolTip(tip)

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
