"""One ``QTextDocument`` per opened memory document, so switching between them is a ``setDocument``.

Each :class:`DocumentSlot` keeps its own text, highlighter, undo stack, saved/dirty state, the disk
version its edits are based on and where the cursor and scroll were; unsaved edits simply stay in
their document while another is shown. A big document is loaded in chunks from a zero timer
(:class:`ChunkLoader`): ``setPlainText`` of 1 MiB holds the GUI thread for ~65 ms, a chunk a few.
While it loads the document is read-only (the editor says so) and keeps no undo.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QTextCursor, QTextDocument, QTextOption
from PySide6.QtWidgets import QPlainTextDocumentLayout, QPlainTextEdit

from core.documents.textmerge import TextStyle, detect_style
from core.storage.fileio import content_hash
from gui.editor.highlighter import MarkdownHighlighter

#: Texts longer than this (characters) load in chunks; shorter ones at once (under ~15 ms).
CHUNKED_ABOVE = 192 * 1024
CHUNK = 48 * 1024  # characters per zero-timer tick: a few ms of inserting and highlighting state


@dataclass
class ViewState:
    """Where the cursor, the selection and the scroll bars were."""

    position: int = 0
    anchor: int = 0
    vscroll: int = 0
    hscroll: int = 0


@dataclass
class DocumentSlot:
    """An opened document: its Qt document and highlighter, the base it was read as, its view."""

    relpath: str
    document: QTextDocument
    highlighter: MarkdownHighlighter
    base_text: str = ""
    base_hash: str = field(default_factory=lambda: content_hash(""))
    style: TextStyle = field(default_factory=TextStyle)
    view: ViewState = field(default_factory=ViewState)
    loader: ChunkLoader | None = None
    text_cache: str | None = None
    #: A hand merge left conflict markers in this document's text (saves are refused while any remain).
    merged_with_markers: bool = False
    #: Changes taken from disk while this document has undo behind it: (base before, disk) pairs
    #: (:mod:`gui.editor.seen_changes`); a save that would drop what they added is refused.
    seen_disk: list[tuple[str, str]] = field(default_factory=list)

    def set_base(self, disk_text: str, digest: str | None = None) -> None:
        """Make ``disk_text`` the version edits are based on."""
        self.base_text = disk_text
        self.base_hash = digest or content_hash(disk_text)
        if disk_text:
            self.style = detect_style(disk_text)

    def forget_text(self) -> None:
        """The text changed: the cached copy is stale."""
        self.text_cache = None

    def dispose(self) -> None:
        """Stop loading and free the Qt document (it is not shown)."""
        if self.loader is not None:
            self.loader.stop()
            self.loader = None
        self.document.deleteLater()  # its highlighter is its child and goes with it


def new_slot(relpath: str, edit: QPlainTextEdit, dark: bool, parent: QObject) -> DocumentSlot:
    """An empty document laid out like ``edit``'s (font, tab stops, wrapping), with its highlighter."""
    document = QTextDocument(parent)
    document.setDocumentLayout(QPlainTextDocumentLayout(document))
    document.setDefaultFont(edit.font())
    option = QTextOption(document.defaultTextOption())
    option.setTabStopDistance(edit.tabStopDistance())
    option.setWrapMode(edit.wordWrapMode())
    document.setDefaultTextOption(option)
    slot = DocumentSlot(relpath, document, MarkdownHighlighter(document, dark=dark))
    document.contentsChanged.connect(slot.forget_text)
    return slot


class ChunkLoader(QObject):
    """Fills ``slot``'s document with ``text`` a chunk per zero-timer tick; ``done()`` at the end."""

    def __init__(self, slot: DocumentSlot, text: str, done: Callable[[DocumentSlot], None],
                 edit: QPlainTextEdit, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.slot, self._text, self._done, self._pos = slot, text, done, 0
        self._edit = edit
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._step)

    def start(self) -> None:
        """Clear the document and start filling it (no undo until it is full)."""
        document = self.slot.document
        document.setUndoRedoEnabled(False)
        with self.slot.highlighter.bulk():
            document.setPlainText("")
        self._step()
        if self._pos < len(self._text):
            self._timer.start()

    @property
    def progress(self) -> float:
        """How much is loaded (0 to 1)."""
        return self._pos / max(len(self._text), 1)

    def _step(self) -> None:
        end = min(self._pos + CHUNK, len(self._text))
        if end < len(self._text):  # end a chunk at a line end: each line is highlighted once
            newline = self._text.find("\n", end)
            end = len(self._text) if newline < 0 else newline + 1
        document = self.slot.document
        cursor = QTextCursor(document)
        cursor.movePosition(QTextCursor.MoveOperation.End)
        # The field's cursor sits at the end, where the chunk goes, and would ride along with it:
        # put it back where it was (the top, on a first open), scroll bar too.
        held = self._edit.textCursor() if self._edit.document() is document else None
        position, anchor = (held.position(), held.anchor()) if held is not None else (-1, -1)
        vscroll = self._edit.verticalScrollBar().value()
        with self.slot.highlighter.bulk():
            cursor.insertText(self._text[self._pos:end])
        if held is not None and position == cursor.position() - (end - self._pos):
            back = QTextCursor(document)
            back.setPosition(anchor)
            back.setPosition(position, QTextCursor.MoveMode.KeepAnchor)
            self._edit.setTextCursor(back)
            self._edit.verticalScrollBar().setValue(vscroll)
        self._pos = end
        if self._pos >= len(self._text):
            self._finish()

    def _finish(self) -> None:
        self._timer.stop()
        document = self.slot.document
        document.setUndoRedoEnabled(True)
        document.setModified(False)
        self.slot.loader = None
        self._done(self.slot)
        self.deleteLater()

    def stop(self) -> None:
        """Give up (the document is going away)."""
        self._timer.stop()
        self.deleteLater()
