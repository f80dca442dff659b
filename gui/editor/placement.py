"""Where a jump puts its target: in the upper third of the view, with its context above it.

Go to line, find, an outline click, Ctrl+Up/Down and opening a search result all move the cursor
far away. ``setTextCursor`` alone scrolls just enough to show it, which puts the target on the
last visible line: a long wrapped entry's match is then below the fold. :func:`show_in_upper_third`
scrolls so the cursor's line sits in the upper third instead. The scroll bar of a
``QPlainTextEdit`` counts screen lines only for the blocks laid out so far (one per block
elsewhere), so the distance is measured, not computed: scroll by the cursor's offset in lines
and look again, a few times at most (two steps on the real memory at 800x600).
"""

from __future__ import annotations

from PySide6.QtWidgets import QPlainTextEdit

MAX_STEPS = 8


def show_in_upper_third(edit: QPlainTextEdit) -> None:
    """Scroll ``edit`` so its cursor's screen line is in the upper third of the view (or as near as can be)."""
    edit.ensureCursorVisible()  # first in view, wherever it was
    bar = edit.verticalScrollBar()
    height = edit.viewport().height()
    third = height // 3
    spacing = max(edit.fontMetrics().lineSpacing(), 1)
    for _ in range(MAX_STEPS):
        top = edit.cursorRect().top()
        if 0 <= top <= third:
            return
        step = (top - height // 6) // spacing or (1 if top > third else -1)
        value = min(max(bar.value() + step, bar.minimum()), bar.maximum())
        if value == bar.value():
            break  # the top or the end of the document: it cannot scroll further
        bar.setValue(value)
    if not 0 <= edit.cursorRect().top() < height:
        edit.ensureCursorVisible()
