"""Find in the memory text: the matches of the find bar's query, and moving the selection to them.

Matches are found once per query and text (case-insensitive, literal) and forgotten when the text
changes; Enter steps forward from the selection, Shift+Enter back, both wrapping around.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

from gui.editor.find_bar import FindBar
from gui.editor.placement import show_in_upper_third
from gui.editor.search_text import find_matches


class Finder(QObject):
    """Connects a :class:`FindBar` to a text field whose text ``text()`` returns."""

    def __init__(self, edit: QPlainTextEdit, bar: FindBar, text: Callable[[], str],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._edit, self._bar, self._text = edit, bar, text
        self._matches: list[tuple[int, int]] | None = None
        self._connect_signals()

    def _connect_signals(self) -> None:
        self._bar.queryChanged.connect(self._on_query_changed)
        self._bar.nextRequested.connect(self.find_next)
        self._bar.previousRequested.connect(self.find_previous)
        self._bar.closeRequested.connect(self.close)

    def open(self) -> None:
        """Open the bar (pre-filled with a one-line selection) and show the count."""
        selected = self._edit.textCursor().selectedText()
        self._bar.open(selected if selected and "\u2029" not in selected else None)
        self._matches = None
        self.refresh_count()

    def close(self) -> None:
        """Close the bar and return to the text."""
        self._bar.setVisible(False)
        self._edit.setFocus()

    def invalidate(self) -> None:
        """The text changed: find the matches again when next asked."""
        self._matches = None

    def find_next(self) -> None:
        """Select the next match after the selection (wrapping)."""
        self._step(forward=True)

    def find_previous(self) -> None:
        """Select the match before the selection (wrapping)."""
        self._step(forward=False)

    def refresh_count(self) -> None:
        """Show "n of total" for the match the selection is on (the first when on none)."""
        matches = self._current()
        start = self._edit.textCursor().selectionStart()
        index = next((i for i, (s, _) in enumerate(matches) if s == start), 0)
        self._bar.set_count(index + 1 if matches else 0, len(matches))

    def _on_query_changed(self, _query: str) -> None:
        self._matches = None
        self._step(forward=True, from_selection_start=True)

    def _current(self) -> list[tuple[int, int]]:
        if self._matches is None:
            self._matches = find_matches(self._text(), self._bar.query())
        return self._matches

    def _step(self, *, forward: bool, from_selection_start: bool = False) -> None:
        matches = self._current()
        if not matches:
            self._bar.set_count(0, 0)
            return
        cursor = self._edit.textCursor()
        starts = [start for start, _ in matches]
        if forward:
            origin = cursor.selectionStart() if from_selection_start else cursor.selectionEnd()
            index = bisect_left(starts, origin) % len(matches)
        else:
            index = (bisect_left(starts, cursor.selectionStart()) - 1) % len(matches)
        start, length = matches[index]
        cursor.setPosition(start)
        cursor.setPosition(start + length, QTextCursor.MoveMode.KeepAnchor)
        self._edit.setTextCursor(cursor)
        show_in_upper_third(self._edit)
        self._bar.set_count(index + 1, len(matches))
