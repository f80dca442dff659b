"""The editor's text and the disk version it started from (the *base*), kept in step.

The base is the exact text read from disk (line ends, BOM and all) with its hash; saves pass that
hash so a change on disk the operator has not seen is never overwritten. Text that was not edited
is written back byte for byte. Replacing or extending the text keeps the operator's cursor and
scroll position; merges are single undo steps. Whole-text loads highlight only the lines in view.

Every opened document keeps its own ``QTextDocument`` (:mod:`gui.editor.documents`): showing
another one is :meth:`EditorBuffer.show`, a ``setDocument`` that keeps the text, undo stack and
unsaved edits of the one left. The base, hash and style are those of the document shown.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtGui import QTextCursor, QTextDocument

from core.documents.textmerge import TextStyle, from_editor_text, to_editor_text
from core.storage.fileio import content_hash
from gui.editor.documents import CHUNKED_ABOVE, ChunkLoader, DocumentSlot, ViewState, new_slot
from gui.editor.highlighter import MarkdownHighlighter
from gui.editor.text_edit import MemoryTextEdit

#: Clean documents kept open besides the one shown (dirty ones are always kept).
KEEP_CLEAN = 6


class EditorBuffer(QObject):
    """The text field's documents, one per opened path; the shown one with its base text, hash and style."""

    def __init__(self, edit: MemoryTextEdit, relpath: str, dark: bool = False,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.edit = edit
        self.dark = dark
        self.slots: dict[str, DocumentSlot] = {}  # in order of last shown, the shown one last
        #: The document edited in the pane beside the editor (View ▸ Open beside): kept open while there.
        self.beside: str | None = None
        #: Called before the document beside is closed (Discard All): the pane lets go of it first.
        self.on_forget_beside: Callable[[str], None] = lambda relpath: None
        #: Called when a chunked load has filled the shown document (the editor refreshes then).
        self.on_loaded: Callable[[DocumentSlot], None] = lambda slot: None
        self.slot = self._slot_for(relpath)
        self._formatted: tuple[int, int, int] | None = None  # what format_visible last looked at
        edit.setDocument(self.slot.document)

    # -- the shown document ---------------------------------------------------------------------
    @property
    def document(self) -> QTextDocument:
        """The text field's document."""
        return self.slot.document

    @property
    def highlighter(self) -> MarkdownHighlighter:
        """The shown document's highlighter."""
        return self.slot.highlighter

    @property
    def base_text(self) -> str:
        """The disk text the shown document's edits are based on."""
        return self.slot.base_text

    @property
    def base_hash(self) -> str:
        """The hash of :attr:`base_text` (saves pass it)."""
        return self.slot.base_hash

    @property
    def style(self) -> TextStyle:
        """The shown file's line ends and BOM."""
        return self.slot.style

    @property
    def loading(self) -> bool:
        """Whether the shown document is still being filled (it is read-only meanwhile)."""
        return self.slot.loader is not None

    @property
    def dirty(self) -> bool:
        """Whether the text has edits not saved (follows undo back to the saved state)."""
        return self.document.isModified()

    def text(self) -> str:
        """The text as typed, exactly (no-break spaces kept), with ``\\n`` line ends."""
        slot = self.slot
        if slot.text_cache is None:
            slot.text_cache = slot.document.toRawText().replace("\u2029", "\n")
        return slot.text_cache

    # -- documents --------------------------------------------------------------------------------
    def has(self, relpath: str) -> bool:
        """Whether ``relpath`` has its document open already."""
        return relpath in self.slots

    def dirty_paths(self) -> list[str]:
        """The opened documents with unsaved edits."""
        return [path for path, slot in self.slots.items() if slot.document.isModified()]

    def show(self, relpath: str) -> bool:
        """Put ``relpath``'s document in the text field (a new, empty one if it was not open);
        return whether it was open (its text, undo and edits are all still there)."""
        if relpath == self.slot.relpath:
            return True
        self.slot.view = self._view_state()
        existed = relpath in self.slots
        self.slot = self._slot_for(relpath)
        self._formatted = None
        self.edit.setDocument(self.slot.document)
        self._restore(self.slot.view)
        self.format_visible()
        self._evict()
        return existed

    def _slot_for(self, relpath: str) -> DocumentSlot:
        slot = self.slots.pop(relpath, None) or new_slot(relpath, self.edit, self.dark, self)
        self.slots[relpath] = slot  # last: most recently shown
        return slot

    def open_beside(self, relpath: str, disk_text: str, digest: str | None = None) -> DocumentSlot:
        """``relpath``'s document for the pane beside the editor (never the one shown here): the open one,
        unsaved edits and undo included, or a new one read from ``disk_text``. A clean one whose disk moved
        is read again; one with edits is left for its save, which merges or shows the conflict."""
        if relpath == self.slot.relpath:
            raise ValueError(f"{relpath} is shown in the editor")
        slot = self.slots.get(relpath)
        if slot is None:
            slot = new_slot(relpath, self.edit, self.dark, self)
            self.slots = {relpath: slot, **self.slots}  # not shown: not the last
        self.beside = relpath
        if slot.loader is None and not slot.document.isModified() and (
                slot.document.isEmpty() or slot.base_hash != (digest or content_hash(disk_text))):
            self._fill(slot, disk_text, digest)
        return slot

    def refresh_beside(self, disk_text: str, digest: str | None = None) -> bool:
        """The file beside changed on disk: read it again if its document has no unsaved edits (True)."""
        slot = self.slots.get(self.beside or "")
        if slot is None or slot is self.slot or slot.loader is not None or slot.document.isModified():
            return False
        if slot.base_hash != (digest or content_hash(disk_text)):
            self._fill(slot, disk_text, digest)
        return True

    def _fill(self, slot: DocumentSlot, disk_text: str, digest: str | None) -> None:
        slot.set_base(disk_text, digest)
        slot.merged_with_markers = False
        slot.seen_disk.clear()
        slot.document.setUndoRedoEnabled(False)  # a fresh read is not an edit to undo
        slot.document.setPlainText(to_editor_text(disk_text))
        slot.document.setUndoRedoEnabled(True)
        slot.document.setModified(False)

    def _evict(self) -> None:
        clean = [p for p, s in self.slots.items()
                 if s is not self.slot and p != self.beside and not s.document.isModified()]
        for path in clean[:max(len(clean) - KEEP_CLEAN, 0)]:
            self.slots.pop(path).dispose()

    def forget_others(self, *, include_dirty: bool = False) -> None:
        """Close every document but the shown one that has no unsaved edits (their disk may have moved);
        ``include_dirty``: those with unsaved edits too (the operator chose Discard All)."""
        for path in [p for p, s in self.slots.items()
                     if s is not self.slot and (include_dirty or not s.document.isModified())]:
            if path == self.beside:
                if not include_dirty:
                    continue  # read again by the pane when its file moves
                self.on_forget_beside(path)  # the pane lets go of it before it goes
                self.beside = None
            self.slots.pop(path).dispose()

    def set_dark(self, dark: bool) -> None:
        """Recolour every opened document."""
        self.dark = dark
        for slot in self.slots.values():
            slot.highlighter.set_dark(dark)
        self.format_visible()

    def disk_text(self) -> str:
        """The text to write: the base itself when nothing differs, else the text in the file's style."""
        text = self.text()
        if text == to_editor_text(self.base_text):
            return self.base_text
        return from_editor_text(text, self.style)

    def set_base(self, disk_text: str, digest: str | None = None) -> None:
        """Make ``disk_text`` the version edits are based on."""
        self.slot.set_base(disk_text, digest)

    def load(self, disk_text: str, digest: str | None = None) -> None:
        """Show ``disk_text`` as saved, clearing undo (opening a project, reloading).

        A big text is filled in chunks (:class:`~gui.editor.documents.ChunkLoader`); until
        :attr:`loading` is False the document is partial and read-only, then ``on_loaded`` runs.
        """
        slot = self.slot
        if slot.loader is not None:
            slot.loader.stop()
            slot.loader = None
        slot.set_base(disk_text, digest)
        slot.merged_with_markers = False
        slot.seen_disk.clear()
        text = to_editor_text(disk_text)
        if len(text) > CHUNKED_ABOVE:
            slot.loader = ChunkLoader(slot, text, self._loaded, self.edit, self)
            slot.loader.start()
            return
        state = self._view_state()
        with slot.highlighter.bulk():
            slot.document.setPlainText(text)
        self._restore(state)
        slot.document.setModified(False)
        self.format_visible()

    def _loaded(self, slot: DocumentSlot) -> None:
        if slot is self.slot:
            self.format_visible()
            self.on_loaded(slot)

    def append_from_disk(self, disk_text: str, digest: str | None = None) -> str:
        """Append what ``disk_text`` adds to the base at the end of the text; return that suffix.

        The operator's cursor, selection and scroll stay where they were; the insertion is one undo
        step. The saved/dirty state is left as it was.
        """
        suffix = disk_text[len(self.base_text):]
        self.slot.seen_disk.append((self.base_text, disk_text))
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
        """Highlight the lines in view that a bulk load left plain.

        It runs on every ``updateRequest`` (twice a keystroke): walking the ~40 lines in view cost ~0.5 ms of
        each keystroke on the 1 MiB bench memory. Typing highlights the lines it changes as it goes, so the
        walk is skipped while the view shows the same lines and no bulk pass has run since the last one.
        """
        first, count = self.edit.visible_blocks()
        key = (first.blockNumber(), count, self.highlighter.bulk_count)
        if key == self._formatted:
            return
        self._formatted = key
        self.highlighter.format_blocks(first, count)

    def mark_saved(self, written: str) -> None:
        """Record that ``written`` is now on disk and the text is clean."""
        self.set_base(written)
        self.slot.seen_disk.clear()
        self.document.setModified(False)

    def _view_state(self) -> ViewState:
        cursor = self.edit.textCursor()
        return ViewState(cursor.position(), cursor.anchor(), self.edit.verticalScrollBar().value(),
                          self.edit.horizontalScrollBar().value())

    def _restore(self, state: ViewState) -> None:
        last = max(self.document.characterCount() - 1, 0)
        cursor = self.edit.textCursor()
        cursor.setPosition(min(state.anchor, last))
        cursor.setPosition(min(state.position, last), QTextCursor.MoveMode.KeepAnchor)
        self.edit.setTextCursor(cursor)
        self.edit.verticalScrollBar().setValue(state.vscroll)
        self.edit.horizontalScrollBar().setValue(state.hscroll)
