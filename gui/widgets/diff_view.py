"""Side-by-side diff: two read-only panes that scroll together, a change summary and change navigation.

``set_busy(message)`` shows a message instead of the panes (``Computing diff…``); ``set_diff(result)``
shows a :class:`core.documents.diff.DiffResult`. F7 and Shift+F7 go to the next and previous change; the change
holding the row last shown is the current hunk (``currentHunkChanged(index)``, -1 for none). Notes
(a reason per removed row) show in the other side's filler rows and under the panes; the rows of
hunks left out are painted neutral.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QSplitter,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.documents.diff import DiffResult, Hunk
from gui.proposal_text import plural
from gui.widgets.colors import css, help_colour
from gui.widgets.diff_pane import LEFT, RIGHT, DiffPane
from gui.widgets.line_detail import LineDetail
from gui.widgets.parts import view_action


class SideBySideDiff(QWidget):
    """Before (left) and after (right), aligned row by row."""

    currentHunkChanged = Signal(int)  # the hunk holding the row last shown; -1: an unchanged row

    def __init__(self, left_title: str = "Current", right_title: str = "Proposed",
                 parent: QWidget | None = None,
                 identical_text: str = "No differences: the proposal equals the current memory.") -> None:
        super().__init__(parent)
        self.result: DiffResult | None = None
        self.identical_text = identical_text
        self.notes: dict[int, str] = {}
        self.hunk_index = -1
        self.shown_row = -1
        self.left = DiffPane(LEFT, self)
        self.right = DiffPane(RIGHT, self)
        self.left_title = QLabel(f"<b>{left_title}</b>", self)
        self.right_title = QLabel(f"<b>{right_title}</b>", self)
        self.summary = QLabel(self)
        self.previous_button = QToolButton(self)
        self.next_button = QToolButton(self)
        for button, text, key, slot in ((self.previous_button, "↑ Previous change", "Shift+F7", self.previous_change),
                                        (self.next_button, "↓ Next change", "F7", self.next_change)):
            action = view_action(self, text, key, slot)
            action.setToolTip(f"{text[2:]} ({key})")
            button.setDefaultAction(action)
            button.setProperty("fullText", text)
        self.detail = LineDetail(self)
        self.message = QLabel(self)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        pal = self.message.palette()
        pal.setColor(self.message.foregroundRole(), help_colour())
        self.message.setPalette(pal)

        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(self.previous_button)
        top.addWidget(self.next_button)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        for title, pane in ((self.left_title, self.left), (self.right_title, self.right)):
            box = QWidget(splitter)
            col = QVBoxLayout(box)
            col.setContentsMargins(0, 0, 0, 0)
            col.setSpacing(2)
            col.addWidget(title)
            col.addWidget(pane, 1)
            splitter.addWidget(box)
            splitter.setStretchFactor(splitter.count() - 1, 1)
        splitter.setSizes([1000, 1000])  # two equal sides, whatever their titles say
        for title in (self.left_title, self.right_title):
            title.setMinimumWidth(1)  # a long title is cut, not a reason to widen its side
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.message)
        self.stack.addWidget(splitter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.detail)

        for a, b in ((self.left, self.right), (self.right, self.left)):
            a.verticalScrollBar().valueChanged.connect(b.verticalScrollBar().setValue)
            a.horizontalScrollBar().valueChanged.connect(b.horizontalScrollBar().setValue)
        for pane in (self.left, self.right):
            pane.cursorPositionChanged.connect(lambda pane=pane: self.show_row(pane.textCursor().blockNumber()))
        self.set_busy("No prune candidate loaded.")

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        """Narrow (the consolidation view's middle at 800 px), the buttons show their arrows alone, whole;
        squeezed, "↑ Previous change" was elided to "↑ P…nge". The tooltip keeps the name and key."""
        super().resizeEvent(event)
        buttons = (self.previous_button, self.next_button)
        wide = sum(b.fontMetrics().horizontalAdvance(b.property("fullText")) + 24 for b in buttons)
        narrow = event.size().width() < wide + 80
        for button in buttons:
            full = button.property("fullText")
            button.defaultAction().setIconText(full[0] if narrow else full)

    @property
    def busy(self) -> bool:
        """True while a message is shown instead of the panes."""
        return self.stack.currentIndex() == 0

    def set_busy(self, message: str) -> None:
        """Show ``message`` in place of the panes (and drop the shown diff)."""
        self.result = None
        self.notes = {}
        self.shown_row = -1
        self.left.clear_rows()
        self.right.clear_rows()
        self.message.setText(message)
        self.summary.clear()
        self.detail.set_row(None)
        self.stack.setCurrentIndex(0)
        self.previous_button.setEnabled(False)
        self.next_button.setEnabled(False)
        self._set_hunk(-1)

    def set_titles(self, left: str, right: str) -> None:
        """Name the two sides."""
        self.left_title.setText(f"<b>{left}</b>")
        self.right_title.setText(f"<b>{right}</b>")

    def set_notes(self, notes: dict[int, str]) -> None:
        """Show ``notes[row]`` (a removed row's reason) in the right side's filler beside it and under the panes."""
        self.notes = dict(notes)
        self.right.set_notes({row: f"← {note}" for row, note in self.notes.items()})
        if self.result is not None and 0 <= self.shown_row < len(self.result.rows):
            self.detail.set_row(self.result.rows[self.shown_row], self.notes.get(self.shown_row, ""))

    def set_excluded(self, hunks: list[Hunk]) -> None:
        """Paint the rows of ``hunks`` neutral (their change is left out)."""
        rows = frozenset(r for h in hunks for r in range(h.row_start, h.row_end))
        self.left.set_excluded(rows)
        self.right.set_excluded(rows)

    def set_diff(self, result: DiffResult) -> None:
        """Show ``result`` with both panes at the first change."""
        self.result = result
        self.notes = {}
        self.left.set_rows(result.rows)
        self.right.set_rows(result.rows)
        self.stack.setCurrentIndex(1)
        has_changes = bool(result.hunk_starts())
        self.previous_button.setEnabled(has_changes)
        self.next_button.setEnabled(has_changes)
        if result.identical:
            self.summary.setText(self.identical_text)
            self._set_hunk(-1)
        else:
            self.summary.setText(
                f"<span style='color:{css('error-fg')}'>−{result.removed:,} removed</span> · "
                f"<span style='color:{css('ok-fg')}'>+{result.added:,} added</span> · "
                f"{plural(result.changed, 'changed line')} · {plural(len(result.hunk_starts()), 'change')}")
            self.go_to_row(result.hunk_starts()[0])

    def current_row(self) -> int:
        """The row at the top of the panes."""
        return self.left.verticalScrollBar().value()

    def next_change(self) -> None:
        """Go to the change after the current one (from the top of the panes when there is none)."""
        if self.result is None or not self.result.hunks:
            return
        starts = self.result.hunk_starts()
        if self._current_hunk_in_view():  # the scroll position cannot tell near the end of a short file
            self.go_to_hunk((self.hunk_index + 1) % len(starts))
            return
        here = self.current_row() + 3
        self.go_to_row(next((s for s in starts if s > here), starts[0]))

    def previous_change(self) -> None:
        """Go to the change before the current one (from the top of the panes when there is none)."""
        if self.result is None or not self.result.hunks:
            return
        starts = self.result.hunk_starts()
        if self._current_hunk_in_view():
            self.go_to_hunk((self.hunk_index - 1) % len(starts))
            return
        here = self.current_row() + 3
        self.go_to_row(next((s for s in reversed(starts) if s < here), starts[-1]))

    def _current_hunk_in_view(self) -> bool:
        hunk = self.current_hunk()
        if hunk is None:
            return False
        top = self.current_row()
        shown = max(1, self.left.viewport().height() // max(1, self.left.fontMetrics().lineSpacing()))
        return hunk.row_start < top + shown and hunk.row_end > top

    def show_row(self, row: int) -> None:
        """Show row ``row`` in full in the detail strip under the panes; its hunk becomes the current one."""
        if self.result is not None and 0 <= row < len(self.result.rows):
            self.shown_row = row
            self.detail.set_row(self.result.rows[row], self.notes.get(row, ""))
            hunk = self.result.hunk_at(row)
            self._set_hunk(hunk.index if hunk is not None else -1)

    def current_hunk(self) -> Hunk | None:
        """The hunk holding the row last shown (by a click, a key or change navigation)."""
        if self.result is None or not 0 <= self.hunk_index < len(self.result.hunks):
            return None
        return self.result.hunks[self.hunk_index]

    def go_to_hunk(self, index: int) -> None:
        """Scroll to hunk ``index`` and make it the current one."""
        if self.result is not None and 0 <= index < len(self.result.hunks):
            self.go_to_row(self.result.hunks[index].row_start)

    def _set_hunk(self, index: int) -> None:
        if index != self.hunk_index:
            self.hunk_index = index
            self.currentHunkChanged.emit(index)

    def go_to_row(self, row: int) -> None:
        """Scroll both panes to ``row``, sideways to its first changed word, and show it in full."""
        self.left.scroll_to_row(row)
        self.show_row(row)
        if self.result is None:
            return
        diff_row = self.result.rows[row]
        starts = [self.left.fontMetrics().horizontalAdvance(text[:spans[0][0]])
                  for text, spans in ((diff_row.left, diff_row.left_spans), (diff_row.right, diff_row.right_spans))
                  if text and spans]
        x, pane = min(starts, default=0), self.left
        width = pane.viewport().width()
        pane.horizontalScrollBar().setValue(0 if x < width * 0.8 else int(x - width / 3))
