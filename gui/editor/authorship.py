"""Who added the entry under the cursor, and when, from the appends history recorded (design issue 12).

:func:`core.storage.history.versions.list_events` gives every recorded append of a document (author, time, text). Its
lines are indexed once per document on a worker thread (a SQLite read and a decompress per event);
a cursor move is then a dictionary look-up of the cursor's line. The index is read again when the
document is shown and when text arrives on disk (an agent's append is recorded as it is written).
A line appended more than once is credited to the first append.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QWidget

from core.storage.history.versions import list_events
from gui.tasks import Operation, run_in_background

log = logging.getLogger(__name__)

MIN_LINE = 4  # shorter lines ("-", "---", "}") say nothing about who wrote them


@dataclass(frozen=True)
class Credit:
    """Who appended a line, when (ISO time, UTC), and through what (the event's source label)."""

    author: str | None
    created_at: str
    source: str

    def describe(self) -> str:
        """``added by agent-7, 2026-12-01 09:14 UTC`` (the source instead when no author was given)."""
        try:
            when = datetime.fromisoformat(self.created_at).strftime("%Y-%m-%d %H:%M UTC")
        except ValueError:
            when = self.created_at
        return f"added by {self.author}, {when}" if self.author else f"added {when} ({self.source})"


def credits_for(root: Path, relpath: str) -> dict[str, Credit]:
    """Each stripped line of the document's recorded appends → the first append that added it."""
    out: dict[str, Credit] = {}
    for event in reversed(list_events(root, relpath)):  # oldest first: the first adder keeps the line
        credit = Credit(event.author, event.created_at, event.label)
        for line in event.text.splitlines():
            key = line.strip()
            if len(key) >= MIN_LINE:
                out.setdefault(key, credit)
    return out


class EntryAuthors(QObject):
    """Keeps the credits of the shown document; :meth:`describe_line` names who added a line."""

    changed = Signal()  # new credits landed: what the footer says may differ

    def __init__(self, root: Path, relpath: Callable[[], str], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._root, self._relpath = root, relpath
        self._credits: dict[str, Credit] = {}
        self._for: str | None = None
        self._op: Operation | None = None
        self._again = False

    def refresh(self) -> None:
        """Read the document's appends again on a worker thread (one read at a time)."""
        if self._op is not None:
            self._again = True
            return
        root, relpath = self._root, self._relpath()
        self._op = run_in_background(lambda _token: (relpath, self._read(root, relpath)), on_done=self._landed,
                                     parent=self)
        self._op.finished.connect(self._op.deleteLater)

    @staticmethod
    def _read(root: Path, relpath: str) -> dict[str, Credit]:
        try:
            return credits_for(root, relpath)
        except Exception as exc:  # who-wrote-what is a nicety: an unreadable history shows nothing
            log.warning("appends of %s not read from history: %s", relpath, exc)
            return {}

    def _landed(self, result: tuple[str, dict[str, Credit]]) -> None:
        self._op = None
        relpath, credits = result
        if relpath == self._relpath():
            self._credits, self._for = credits, relpath
            self.changed.emit()
        if self._again or relpath != self._relpath():
            self._again = False
            self.refresh()

    def pending(self) -> bool:
        """Whether a read is under way."""
        return self._op is not None

    def describe_line(self, lines: list[str]) -> str:
        """What the footer says for the cursor's entry: ``lines`` are the cursor's line then the ones after it
        (a dated marker or a blank line is followed to the entry's first line)."""
        if self._for != self._relpath():
            return ""
        for line in lines:
            key = line.strip()
            if not key or (key.startswith("<!--") and key.endswith("-->")):
                continue
            credit = self._credits.get(key)
            return credit.describe() if credit is not None else ""
        return ""

    def shutdown(self) -> None:
        """Drop a read in flight."""
        if self._op is not None:
            self._op.cancel()
            self._op = None


class AuthorFooter(QLabel):
    """The footer's "added by agent-7, 2026-12-01 09:14 UTC" for the entry under ``edit``'s cursor."""

    def __init__(self, edit: QPlainTextEdit, root: Path, relpath: Callable[[], str],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("authorLabel")
        self._edit = edit
        self.authors = EntryAuthors(root, relpath, self)
        edit.cursorPositionChanged.connect(self.show_for_cursor)
        self.authors.changed.connect(self.show_for_cursor)

    def show_for_cursor(self) -> None:
        """Say who appended the entry under the cursor, and when (empty when history does not know)."""
        block = self._edit.textCursor().block()
        lines = []
        while block.isValid() and len(lines) < 3:
            lines.append(block.text())
            block = block.next()
        text = self.authors.describe_line(lines)
        self.setText(text)
        self.setToolTip("Who appended the entry under the cursor, from History" if text else "")
