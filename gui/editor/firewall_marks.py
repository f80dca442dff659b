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

from bisect import bisect_left, bisect_right
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QPoint, QTimer, Signal
from PySide6.QtGui import QAction, QColor, QContextMenuEvent, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit

from core.firewall.incremental import IncrementalScanner
from core.firewall.scan import Mark
from core.firewall.supersede import marker, superseded_on
from gui.tasks import Operation, run_in_background

COLOURS = {"secret": QColor(214, 40, 40), "injection": QColor(230, 126, 0), "near-duplicate": QColor(40, 110, 210),
           "contradiction": QColor(140, 70, 190)}
#: A scheduled scan waits one millisecond per thousand characters, at most this long (a 1 MiB memory: 1 s):
#: on the bench's 1 MiB memory a scan started at each short pause (120 ms) ran while the next keys were
#: typed, and its worker held the GIL their Python slots need (keystroke p95 ~70 ms beside a floor of 6).
MAX_SCAN_DELAY_MS = 1_000
#: Up to this many findings are all underlined at once; above it only those in and around the view are,
#: again as it scrolls (underlining the 1 MiB bench memory's thousands held the GUI thread for 45-100 ms).
PAINT_ALL_UP_TO = 200
#: Characters either side of the view whose marks are underlined too (a scroll of a page or two shows them).
VIEW_MARGIN = 8_000


class FirewallMarks(QObject):
    """The findings of one text field, underlined, and their quick actions.

    Measured on the bench's 1 MiB memory (5,473 findings, most of them near-duplicates of the repeated
    fixture): scanning it all again after each pause held a worker for ~0.5 s of CPU, whose GIL and young
    objects slowed the keystrokes typed meanwhile; the scan is now incremental
    (:class:`~core.firewall.incremental.IncrementalScanner`: 40-200 ms). Underlining every finding cost
    ~45 ms of ``setExtraSelections`` on the GUI thread, and Qt then walks every selection for each line
    it paints; past :data:`PAINT_ALL_UP_TO` only the findings in and near the view are underlined, again
    as it scrolls. A scan asked for a text already scanned (a save, a pause without edits) only repaints.
    """

    marksChanged = Signal(int)  # how many findings are shown

    def __init__(self, edit: QPlainTextEdit, text: Callable[[], str] | None = None) -> None:
        super().__init__(edit)
        self.edit = edit
        self._text = text or edit.toPlainText  # the editor passes its buffer's cached copy
        self.marks: list[Mark] = []
        self.ignored: set[tuple[str, str]] = set()
        self._operation: Operation | None = None
        self._again = False
        self._scanner = IncrementalScanner()
        self._generation = 0  # bumped on every change: a scan of an older text is stale
        self._shown_generation = -1  # the generation the marks shown were found in
        self._starts: list[int] = []
        self._longest = 0
        self._painted: tuple[int, int] | None = None  # the range of marks underlined (indexes into marks)
        self._delay = QTimer(self)
        self._delay.setSingleShot(True)
        self._delay.timeout.connect(self.refresh)
        edit.installEventFilter(self)
        edit.textChanged.connect(self._text_changed)
        self._follow = QTimer(self)  # scrolling repaints the marks in view, once per burst of scroll steps
        self._follow.setSingleShot(True)
        self._follow.setInterval(0)
        self._follow.timeout.connect(self._follow_view)
        edit.verticalScrollBar().valueChanged.connect(self._follow.start)

    # -- scanning -----------------------------------------------------------------------------------
    def schedule(self, waited_ms: int = 0) -> None:
        """Scan once the text has been still a while (longer for a longer text; ``waited_ms`` already
        passed): the editor calls this when typing pauses."""
        delay = min(self.edit.document().characterCount() // 1000, MAX_SCAN_DELAY_MS) - waited_ms
        self._delay.start(max(delay, 0))

    def refresh(self) -> None:
        """Scan the text as it is now (on a worker thread); at most one scan runs at a time."""
        if self._operation is not None and self._operation.running:
            self._again = True
            return
        if self._generation == self._shown_generation:  # the marks shown are this text's already
            self._show(self.marks, self._starts, self._longest)
            return
        text, generation, scanner, ignored = self._text(), self._generation, self._scanner, frozenset(self.ignored)
        # The worker also drops the ignored findings and indexes the rest by start: on the GUI thread that
        # was ~14 ms of Python over the 1 MiB memory's 5,473 findings each time a scan landed.
        self._operation = run_in_background(lambda _token: _prepared(scanner.scan(text), text, ignored),
                                            on_done=lambda done: self._scanned(generation, *done), parent=self)

    def _scanned(self, generation: int, marks: list[Mark], starts: list[int], longest: int) -> None:
        if self._again:
            self._again = False
            self.refresh()
            return
        if generation != self._generation:  # typed meanwhile: scan again once it is still
            self.schedule()
            return
        self._shown_generation = generation
        self._show(marks, starts, longest)

    def _text_changed(self) -> None:
        self._generation += 1
        self._delay.stop()
        if self.marks:  # spans no longer hold once the text moves: hidden until the next scan
            self.marks = []
            self._paint()

    def forget(self) -> None:
        """Another document is shown: drop its marks and ignored findings."""
        self.marks, self.ignored = [], set()
        self._generation += 1
        self._shown_generation = -1
        self._scanner = IncrementalScanner()  # a running scan keeps the old one to itself
        self._paint()

    @staticmethod
    def _key(text: str, mark: Mark) -> tuple[str, str]:
        start, end = mark.finding.span
        return mark.finding.rule, text[start:end]

    def _paint(self) -> None:
        self._show(self.marks, [m.finding.span[0] for m in self.marks],
                   max((m.finding.span[1] - m.finding.span[0] for m in self.marks), default=0))

    def _show(self, marks: list[Mark], starts: list[int], longest: int) -> None:
        self.marks, self._starts, self._longest = marks, starts, longest
        self._painted = None
        self._underline()
        self.marksChanged.emit(len(self.marks))

    def _view_range(self) -> tuple[int, int]:
        edit = self.edit
        first = edit.firstVisibleBlock().position()
        viewport = edit.viewport()
        last = edit.cursorForPosition(QPoint(viewport.width(), viewport.height())).position()
        return max(first - VIEW_MARGIN, 0), last + VIEW_MARGIN

    def _underline(self) -> None:
        """Underline the marks that reach into the view (and its margin)."""
        if len(self.marks) <= PAINT_ALL_UP_TO:
            low, lo, hi = 0, 0, len(self.marks)
        else:
            low, high = self._view_range()
            lo = bisect_left(self._starts, low - self._longest)
            hi = bisect_right(self._starts, high)
        if (lo, hi) == self._painted:
            return
        self._painted = (lo, hi)
        selections = []
        last = self.edit.document().characterCount() - 1
        for mark in self.marks[lo:hi]:
            start, end = mark.finding.span
            if end < low:
                continue
            cursor = QTextCursor(self.edit.document())
            cursor.setPosition(min(start, last))
            cursor.setPosition(min(end, last), QTextCursor.MoveMode.KeepAnchor)
            fmt = QTextCharFormat()
            fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
            fmt.setUnderlineColor(COLOURS.get(mark.finding.kind, QColor("gray")))
            fmt.setToolTip(f"{mark.finding.rule}: {mark.finding.message}")
            selection = QTextEdit.ExtraSelection()
            selection.cursor, selection.format = cursor, fmt
            selections.append(selection)
        self.edit.setExtraSelections(selections)

    def _follow_view(self) -> None:
        if len(self.marks) > PAINT_ALL_UP_TO:
            self._underline()

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
        self.ignored.add(self._key(self._text(), mark))
        self.marks = [m for m in self.marks if m is not mark]
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


def _prepared(marks: list[Mark], text: str, ignored: frozenset[tuple[str, str]]) -> tuple[list[Mark], list[int], int]:
    """The marks not ignored, their starts (for bisect) and the longest span (on the worker thread)."""
    if ignored:
        marks = [m for m in marks if FirewallMarks._key(text, m) not in ignored]
    starts = [m.finding.span[0] for m in marks]
    longest = max((m.finding.span[1] - m.finding.span[0] for m in marks), default=0)
    return marks, starts, longest
