"""Moving around a long memory: the outline, Go to line, next/previous section.

:class:`Navigator` connects the text field, the :class:`~gui.widgets.outline.OutlineView` and the
:class:`~gui.editor.goto_bar.GoToLineBar`: the outline is refreshed from the headings when the text
settles and marks the cursor's section as it moves; a click on a section, a line typed in the bar,
or next/previous section move the cursor there (the outline and the preview then follow).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

from gui.editor.goto_bar import GoToLineBar
from gui.editor.sections import Heading, find_headings, next_heading_line, previous_heading_line
from gui.editor.text_edit import MemoryTextEdit
from gui.tasks import Operation, run_in_background
from gui.widgets.outline import OutlineView

#: Texts longer than this (characters) have their headings found off the GUI thread.
BACKGROUND_ABOVE = 192 * 1024
SEEN = 8  # texts whose headings are remembered (one per document the editor keeps open)
SECTION_LEVEL = 2  # next/previous section steps over "#" and "##" headings, as the outline lists them
#: When typing pauses, a big text's headings are found again after one millisecond per 2,000 characters
#: (at most this long; 1 MiB: 500 ms): the scan takes ~38 ms of a worker's CPU on the bench's 1 MiB memory
#: and ran at every 120 ms pause, competing for the GIL with the keys typed next.
MAX_REFRESH_DELAY_MS = 500


class Navigator(QObject):
    """Keeps the outline in step with the text and moves the cursor where the operator asks."""

    def __init__(self, edit: MemoryTextEdit, outline: OutlineView, bar: GoToLineBar,
                 text: Callable[[], str], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._edit, self._outline, self._bar, self._text = edit, outline, bar, text
        self.headings: list[Heading] = []
        #: Headings of the last texts seen, by identity: a document shown again is not parsed again.
        self._seen: list[tuple[str, list[Heading]]] = []
        self._scan: Operation | None = None  # a big text's headings being found on a worker
        self._delay = QTimer(self)
        self._delay.setSingleShot(True)
        self._delay.timeout.connect(self.refresh)
        edit.textChanged.connect(self._delay.stop)
        outline.lineActivated.connect(self.jump_to_line)
        bar.lineRequested.connect(self._on_goto)
        bar.closeRequested.connect(self.close_goto)
        edit.cursorPositionChanged.connect(self._on_cursor_moved)

    def schedule(self, waited_ms: int = 0) -> None:
        """Typing paused (``waited_ms`` ago): find the headings again now, or a little later for a big text."""
        delay = min(self._edit.document().characterCount() // 2000, MAX_REFRESH_DELAY_MS) - waited_ms
        if delay <= 0:
            self.refresh()
        else:
            self._delay.start(delay)

    def refresh(self) -> None:
        """Find the headings again (after a load, or when typing pauses) and show them.

        A text over :data:`BACKGROUND_ABOVE` characters is scanned on a worker thread (the block
        scanner takes 60-200 ms on 1 MiB): the outline keeps the last headings until the new ones land.
        """
        text = self._text()
        cached = next((h for seen, h in self._seen if seen is text), None)
        if cached is None and len(text) > BACKGROUND_ABOVE:
            self._scan_in_background(text)
            return
        if cached is None:
            cached = find_headings(text, max_level=SECTION_LEVEL)
            self._seen = [(text, cached), *self._seen[:SEEN - 1]]
        self._show(cached)

    def _show(self, headings: list[Heading]) -> None:
        self.headings = headings
        self._outline.set_headings(self.headings)
        self._outline.set_current_line(self._edit.current_line())

    def _scan_in_background(self, text: str) -> None:
        if self._scan is not None:
            self._scan.cancel()

        def landed(found: list[Heading]) -> None:
            self._scan = None
            self._seen = [(text, found), *self._seen[:SEEN - 1]]
            if self._text() is text:  # still the text shown (else a newer scan follows)
                self._show(found)

        self._scan = run_in_background(lambda _token: find_headings(text, max_level=SECTION_LEVEL), landed,
                                       parent=self)

    def jump_to_line(self, line: int) -> int:
        """Put the cursor at the start of ``line`` (0-based), focus the text; return the line."""
        line = self._edit.go_to_line(line)
        self._edit.setFocus()
        return line

    def next_section(self) -> bool:
        """Move to the next section's heading; False when there is none below."""
        target = next_heading_line(self.headings, self._edit.current_line())
        if target is None:
            return False
        self.jump_to_line(target)
        return True

    def previous_section(self) -> bool:
        """Move to the heading above the cursor (the current section's, then the one before)."""
        target = previous_heading_line(self.headings, self._edit.current_line())
        if target is None:
            return False
        self.jump_to_line(target)
        return True

    def open_goto(self) -> None:
        """Open the Go to line bar on the cursor's line."""
        self._bar.open(self._edit.current_line(), self._edit.document().blockCount())

    def close_goto(self) -> None:
        """Close the bar and return to the text."""
        self._bar.setVisible(False)
        self._edit.setFocus()

    def _on_goto(self, line: int) -> None:
        self._bar.setVisible(False)
        self.jump_to_line(line)

    def _on_cursor_moved(self) -> None:
        self._outline.set_current_line(self._edit.current_line())
