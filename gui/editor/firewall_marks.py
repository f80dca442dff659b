"""Underlines the memory firewall's findings in the open document, with quick actions on each.

Secrets (red), injection text (orange), near-duplicates (blue) and contradictions (purple) get a wavy
underline once the text settles; the scan (:func:`core.firewall.scan.scan_marks`) runs on a worker thread
and a result for text that changed meanwhile is dropped and asked again. The text field's context menu
gains, for the finding under the pointer: **Redact** (a secret becomes ``[REDACTED:rule]``), **Merge**
(remove this entry: the earlier one at line N says the same), **Supersede** (mark the earlier entry
``[superseded DATE]``) and **Ignore once** (hide this finding while the document is open). Each action
is an ordinary, undoable edit of the buffer; saving sends it through the write pipeline.
"""

from __future__ import annotations

import bisect

from PySide6.QtCore import QEvent, QObject, QPoint, QTimer, Signal
from PySide6.QtGui import QAction, QColor, QContextMenuEvent, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit

from core.firewall.scan import Mark, scan_marks
from core.firewall.supersede import marker, superseded_on
from gui.tasks import Operation, run_in_background

COLOURS = {"secret": QColor(214, 40, 40), "injection": QColor(230, 126, 0), "near-duplicate": QColor(40, 110, 210),
           "contradiction": QColor(140, 70, 190)}
#: Up to this many findings are all underlined at once; above it (the real memory repeated to 1 MiB has
#: thousands of near-duplicates, and underlining them all held the GUI thread for over 100 ms), only those
#: in and around the view are, again as it scrolls.
PAINT_ALL_UP_TO = 200
#: Characters before and after the view whose findings are underlined too (a scroll shows them at once).
VIEW_MARGIN = 4000
#: A finding starting this far before the view is still looked at (its span may reach into the view).
LONGEST_SPAN = 64_000


class FirewallMarks(QObject):
    """The findings of one text field, underlined, and their quick actions."""

    marksChanged = Signal(int)  # how many findings are shown

    def __init__(self, edit: QPlainTextEdit) -> None:
        super().__init__(edit)
        self.edit = edit
        self.marks: list[Mark] = []
        self.ignored: set[tuple[str, str]] = set()
        self._operation: Operation | None = None
        self._again = False
        self._starts: list[int] = []  # the marks' start offsets, in order (marks in view are found by bisection)
        self._scanned_text: str | None = None  # the text the marks shown were found in
        self._painted: tuple[int, int] | None = None  # the character range underlined when not all are
        self._follow = QTimer(self)  # scrolling repaints the marks in view, once per burst
        self._follow.setSingleShot(True)
        self._follow.setInterval(0)
        self._follow.timeout.connect(self._paint_if_moved)
        edit.installEventFilter(self)
        edit.textChanged.connect(self._text_changed)
        edit.verticalScrollBar().valueChanged.connect(self._follow.start)

    # -- scanning -----------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Scan the text as it is now (on a worker thread); at most one scan runs at a time."""
        if self._operation is not None and self._operation.running:
            self._again = True
            return
        text = self.edit.toPlainText()
        if text == self._scanned_text:  # the marks shown are this text's (a save, a settle without edits)
            self._paint()
            return
        self._operation = run_in_background(lambda _token: scan_marks(text),
                                            on_done=lambda marks: self._scanned(text, marks), parent=self)

    def _scanned(self, text: str, marks: list[Mark]) -> None:
        if self._again or self.edit.toPlainText() != text:
            self._again = False
            self.refresh()
            return
        self._scanned_text = text
        self.marks = [m for m in marks if self._key(text, m) not in self.ignored]  # in order of their start
        self._starts = [m.finding.span[0] for m in self.marks]
        self._paint()

    def _text_changed(self) -> None:
        self._scanned_text = None
        if self.marks:  # spans no longer hold once the text moves: hidden until the next scan
            self.marks = []
            self._paint()

    def forget(self) -> None:
        """Another document is shown: drop its marks and ignored findings."""
        self.marks, self.ignored, self._scanned_text = [], set(), None
        self._paint()

    @staticmethod
    def _key(text: str, mark: Mark) -> tuple[str, str]:
        start, end = mark.finding.span
        return mark.finding.rule, text[start:end]

    def _view_range(self) -> tuple[int, int]:
        """The character range in view, with :data:`VIEW_MARGIN` on each side."""
        edit = self.edit
        first = edit.firstVisibleBlock().position()
        bottom = edit.cursorForPosition(QPoint(edit.viewport().width(), edit.viewport().height())).position()
        return max(first - VIEW_MARGIN, 0), bottom + VIEW_MARGIN

    def _paint_if_moved(self) -> None:
        if self._painted is None:
            return  # every mark is underlined already
        low, high = self._view_range()
        if low < self._painted[0] or high > self._painted[1]:
            self._paint()

    def _paint(self) -> None:
        selections = []
        marks = self.marks
        self._painted = None
        if len(marks) > PAINT_ALL_UP_TO:
            if len(self._starts) != len(marks):
                self._starts = [m.finding.span[0] for m in marks]
            low, high = self._view_range()
            low, high = max(low - VIEW_MARGIN, 0), high + VIEW_MARGIN  # room to scroll before painting again
            self._painted = (low, high)
            window = marks[bisect.bisect_left(self._starts, low - LONGEST_SPAN):bisect.bisect_right(self._starts, high)]
            marks = [m for m in window if m.finding.span[1] >= low]
        for mark in marks:
            start, end = mark.finding.span
            cursor = QTextCursor(self.edit.document())
            cursor.setPosition(start)
            cursor.setPosition(min(end, self.edit.document().characterCount() - 1), QTextCursor.MoveMode.KeepAnchor)
            fmt = QTextCharFormat()
            fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
            fmt.setUnderlineColor(COLOURS.get(mark.finding.kind, QColor("gray")))
            fmt.setToolTip(f"{mark.finding.rule}: {mark.finding.message}")
            selection = QTextEdit.ExtraSelection()
            selection.cursor, selection.format = cursor, fmt
            selections.append(selection)
        self.edit.setExtraSelections(selections)
        self.marksChanged.emit(len(self.marks))

    # -- quick actions ------------------------------------------------------------------------------
    def marks_at(self, position: int) -> list[Mark]:
        """The findings whose span holds ``position`` (a character offset in the text)."""
        return [m for m in self.marks if m.finding.span[0] <= position <= m.finding.span[1]]

    def actions_at(self, position: int, parent: QObject | None = None) -> list[QAction]:
        """The quick actions for the findings at ``position``."""
        actions: list[QAction] = []
        for mark in self.marks_at(position):
            f = mark.finding
            if f.kind == "secret":
                actions.append(self._action(f"Redact ({f.rule})", lambda _checked=False, m=mark: self.redact(m), parent))
            if f.kind == "near-duplicate" and mark.other is not None:
                actions.append(self._action(f"Merge into the entry at line {mark.other.line} (remove this one)",
                                            lambda _checked=False, m=mark: self.merge(m), parent))
            if f.kind in ("contradiction", "near-duplicate") and mark.other is not None:
                actions.append(self._action(f"Supersede the entry at line {mark.other.line}",
                                            lambda _checked=False, m=mark: self.supersede(m), parent))
            actions.append(self._action(f"Ignore once ({f.rule})", lambda _checked=False, m=mark: self.ignore(m), parent))
        return actions

    def _action(self, text: str, slot: object, parent: QObject | None) -> QAction:
        action = QAction(text, parent or self)
        action.triggered.connect(slot)
        return action

    def _replace(self, start: int, end: int, text: str) -> None:
        cursor = QTextCursor(self.edit.document())
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(text)  # one undoable edit

    def redact(self, mark: Mark) -> None:
        """Replace the secret by ``[REDACTED:rule]``."""
        start, end = mark.finding.span
        self._replace(start, end, f"[REDACTED:{mark.finding.rule}]")

    def merge(self, mark: Mark) -> None:
        """Remove this entry (and its line break): the earlier entry says the same."""
        start, end = mark.finding.span
        text = self.edit.toPlainText()
        self._replace(start, end + 1 if text[end:end + 1] == "\n" else end, "")

    def supersede(self, mark: Mark) -> None:
        """Mark the earlier entry ``[superseded DATE]``, after its list marker."""
        other = mark.other
        if other is None:
            return
        text = self.edit.toPlainText()
        if superseded_on(text[other.start:other.end]):
            return
        first = text[other.start:other.end]
        body = first.lstrip()
        at = other.start + (len(first) - len(body))
        if body[:2] in ("- ", "* ", "+ "):
            at += 2
        self._replace(at, at, marker() + " ")

    def ignore(self, mark: Mark) -> None:
        """Hide this finding while the document is open."""
        self.ignored.add(self._key(self.edit.toPlainText(), mark))
        self.marks = [m for m in self.marks if m is not mark]
        self._starts = [m.finding.span[0] for m in self.marks]
        self._paint()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        """Add the quick actions to the text field's context menu."""
        if watched is self.edit and event.type() == QEvent.Type.ContextMenu and self.marks:
            assert isinstance(event, QContextMenuEvent)
            position = self.edit.cursorForPosition(event.pos()).position()
            menu = self.edit.createStandardContextMenu(event.pos())
            actions = self.actions_at(position, menu)
            if actions:
                menu.insertSeparator(menu.actions()[0])
                for action in reversed(actions):
                    menu.insertAction(menu.actions()[0], action)
            menu.exec(event.globalPos())
            menu.deleteLater()
            return True
        return super().eventFilter(watched, event)
