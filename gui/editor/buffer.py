"""The editor's text and the disk version it started from (the *base*), kept in step.

The base is the exact text read from disk (line ends, BOM and all) with its hash; saves pass that
hash so a change on disk the operator has not seen is never overwritten. Text that was not edited
is written back byte for byte. Replacing or extending the text keeps the operator's cursor and
scroll position; merges are single undo steps. Whole-text loads highlight only the lines in view.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QTextCursor, QTextDocument

from core.fileio import content_hash
from core.textmerge import TextStyle, detect_style, from_editor_text, to_editor_text
from gui.editor.highlighter import MarkdownHighlighter
from gui.editor.text_edit import MemoryTextEdit


@dataclass
class _ViewState:
    position: int
    anchor: int
    vscroll: int
    hscroll: int


class EditorBuffer:
    """Wraps the text field's document with the base text, its hash and the file's text style."""

    def __init__(self, edit: MemoryTextEdit, highlighter: MarkdownHighlighter) -> None:
        self.edit = edit
        self.highlighter = highlighter
        self._text: str | None = None  # cached: size, preview and find all ask after one edit
        edit.document().contentsChanged.connect(self._forget_text)
        self.base_text = ""
        self.base_hash = content_hash("")
        self.style = TextStyle()

    @property
    def document(self) -> QTextDocument:
        """The text field's document."""
        return self.edit.document()

    @property
    def dirty(self) -> bool:
        """Whether the text has edits not saved (follows undo back to the saved state)."""
        return self.document.isModified()

    def text(self) -> str:
        """The text as typed, exactly (no-break spaces kept), with ``\\n`` line ends."""
        if self._text is None:
            self._text = self.document.toRawText().replace("\u2029", "\n")
        return self._text

    def _forget_text(self) -> None:
        self._text = None

    def disk_text(self) -> str:
        """The text to write: the base itself when nothing differs, else the text in the file's style."""
        text = self.text()
        if text == to_editor_text(self.base_text):
            return self.base_text
        return from_editor_text(text, self.style)

    def set_base(self, disk_text: str, digest: str | None = None) -> None:
        """Make ``disk_text`` the version edits are based on."""
        self.base_text = disk_text
        self.base_hash = digest or content_hash(disk_text)
        if disk_text:
            self.style = detect_style(disk_text)

    def load(self, disk_text: str, digest: str | None = None) -> None:
        """Show ``disk_text`` as saved, clearing undo (opening a project, reloading)."""
        self.set_base(disk_text, digest)
        state = self._view_state()
        with self.highlighter.bulk():
            self.edit.setPlainText(to_editor_text(disk_text))
        self._restore(state)
        self.document.setModified(False)
        self.format_visible()

    def append_from_disk(self, disk_text: str, digest: str | None = None) -> str:
        """Append what ``disk_text`` adds to the base at the end of the text; return that suffix.

        The operator's cursor, selection and scroll stay where they were; the insertion is one undo
        step. The saved/dirty state is left as it was.
        """
        suffix = disk_text[len(self.base_text):]
        modified = self.dirty
        state = self._view_state()
        cursor = QTextCursor(self.document)
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.beginEditBlock()
        cursor.insertText(to_editor_text(suffix))
        cursor.endEditBlock()
        self._restore(state)
        self.set_base(disk_text, digest)
        self.document.setModified(modified)
        return suffix

    def replace_undoable(self, editor_text: str) -> None:
        """Replace the whole text as one undo step (Ctrl+Z brings the previous text back)."""
        state = self._view_state()
        cursor = QTextCursor(self.document)
        with self.highlighter.bulk():
            cursor.beginEditBlock()
            cursor.select(QTextCursor.SelectionType.Document)
            cursor.insertText(editor_text)
            cursor.endEditBlock()
        self._restore(state)
        self.format_visible()

    def format_visible(self) -> None:
        """Highlight the lines in view that a bulk load left plain."""
        first, count = self.edit.visible_blocks()
        self.highlighter.format_blocks(first, count)

    def mark_saved(self, written: str) -> None:
        """Record that ``written`` is now on disk and the text is clean."""
        self.set_base(written)
        self.document.setModified(False)

    def _view_state(self) -> _ViewState:
        cursor = self.edit.textCursor()
        return _ViewState(cursor.position(), cursor.anchor(), self.edit.verticalScrollBar().value(),
                          self.edit.horizontalScrollBar().value())

    def _restore(self, state: _ViewState) -> None:
        last = max(self.document.characterCount() - 1, 0)
        cursor = self.edit.textCursor()
        cursor.setPosition(min(state.anchor, last))
        cursor.setPosition(min(state.position, last), QTextCursor.MoveMode.KeepAnchor)
        self.edit.setTextCursor(cursor)
        self.edit.verticalScrollBar().setValue(state.vscroll)
        self.edit.horizontalScrollBar().setValue(state.hscroll)
