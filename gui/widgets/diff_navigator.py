"""Next / previous difference (F7 / Shift+F7) for two side-by-side texts: the conflict view's.

:func:`diff_hunks` finds the differing blocks once (with :func:`core.documents.textmerge.changed_lines`'
matcher); :class:`DiffNavigator` moves both panes to the next or previous block, selects its lines
on the side that has them, puts it in the upper third of the view, and says "Difference 2 of 5".
"""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import NamedTuple

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPlainTextEdit


class Hunk(NamedTuple):
    """One differing block: lines ``[a_start, a_end)`` of the first text against ``[b_start, b_end)``."""

    a_start: int
    a_end: int
    b_start: int
    b_end: int


def diff_hunks(a: str, b: str) -> tuple[set[int], set[int], list[Hunk]]:
    """The 0-based lines only in ``a``, only in ``b``, and the differing blocks in order."""
    la, lb = a.splitlines(), b.splitlines()
    only_a: set[int] = set()
    only_b: set[int] = set()
    hunks: list[Hunk] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, la, lb).get_opcodes():
        if tag != "equal":
            only_a.update(range(i1, i2))
            only_b.update(range(j1, j2))
            hunks.append(Hunk(i1, i2, j1, j2))
    return only_a, only_b, hunks


def _show_lines(edit: QPlainTextEdit, start: int, end: int) -> None:
    """Select lines ``[start, end)`` (the cursor at ``start`` when empty) with ``start`` in the upper third."""
    doc = edit.document()
    first = doc.findBlockByNumber(min(start, max(doc.blockCount() - 1, 0)))
    cursor = QTextCursor(first)
    if end > start:  # anchored at the block's end, the cursor at its start: the view stays at column 0
        last = doc.findBlockByNumber(min(end - 1, doc.blockCount() - 1))
        cursor.setPosition(last.position() + max(last.length() - 1, 0))
        cursor.setPosition(first.position(), QTextCursor.MoveMode.KeepAnchor)
    edit.setTextCursor(cursor)
    edit.horizontalScrollBar().setValue(0)
    rows = max(edit.viewport().height() // max(edit.fontMetrics().lineSpacing(), 1), 1)
    edit.verticalScrollBar().setValue(max(first.blockNumber() - rows // 3, 0))


class DiffNavigator(QObject):
    """Steps through the hunks of two panes; ``moved(index, count)`` after each step (-1: none yet)."""

    moved = Signal(int, int)

    def __init__(self, left: QPlainTextEdit, right: QPlainTextEdit, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._left, self._right = left, right
        self.hunks: list[Hunk] = []
        self.index = -1

    def set_hunks(self, hunks: list[Hunk]) -> None:
        """New texts: their blocks; nothing is selected until the first step."""
        self.hunks, self.index = hunks, -1
        self.moved.emit(self.index, len(hunks))

    def next(self) -> bool:
        """Go to the next block (wrapping to the first); False when there is none."""
        return self._go(0 if self.index + 1 >= len(self.hunks) else self.index + 1)

    def previous(self) -> bool:
        """Go to the previous block (wrapping to the last); False when there is none."""
        return self._go(len(self.hunks) - 1 if self.index <= 0 else self.index - 1)

    def _go(self, index: int) -> bool:
        if not self.hunks:
            self.moved.emit(-1, 0)
            return False
        self.index = index
        hunk = self.hunks[index]
        # The panes scroll together: place the right one, then the left (its value wins, both show the block).
        _show_lines(self._right, hunk.b_start, hunk.b_end)
        _show_lines(self._left, hunk.a_start, hunk.a_end)
        self.moved.emit(index, len(self.hunks))
        return True

    @staticmethod
    def describe(index: int, count: int) -> str:
        """ "Difference 2 of 5", "5 differences" before a step, or "No differences"."""
        if count == 0:
            return "No differences"
        if index < 0:
            return f"{count} difference(s): F7 goes to the first"
        return f"Difference {index + 1} of {count}"
