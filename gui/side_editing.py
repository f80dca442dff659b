"""Editing in the pane beside the editor (View ▸ Open beside): the glue between the pane and the editor.

The pane edits the editor's own document of its path (:meth:`EditorBuffer.open_beside`), never a copy,
so there is one text per document: its edits are the editor's unsaved edits (the dot in the list and
the tabs, the quit dialog's list, Save All), and its save is the editor's save of that document, with
every check that holds (base hash, appends merged, a change on disk shown as a conflict, a dropped
change refused). A document is edited in one place at a time: when the editor shows the pane's document,
the pane shows a read-only copy until the editor moves on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtGui import QTextDocument

from core.storage.fileio import content_hash

if TYPE_CHECKING:
    from gui.main_window import MainWindow
    from gui.widgets.side_document import SideDocument

SHOWN_IN_EDITOR = "Shown in the editor: edit it there (or pick another document here)."


class SideEditing:
    """What the pane beside may edit, and how its edits reach the editor."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.pane: SideDocument | None = None
        self._dirty_relay: tuple[QTextDocument, object] | None = None

    def attach_pane(self, pane: SideDocument) -> None:
        """Follow the editor's document changes for ``pane`` (detach when the editor shows the same path)."""
        self.pane = pane
        session, editor = self.window.session, self.window.editor
        if session is not None:
            session.documentChanged.connect(self._editor_showed)
        if editor is not None:
            editor.buffer.on_forget_beside = lambda _path: pane.detach()

    # -- the pane's callbacks ------------------------------------------------------------------------
    def read_only_reason(self, path: str) -> str:
        """Why ``path`` is read-only in the pane (the editor's own reasons, for that document)."""
        session, editor = self.window.session, self.window.editor
        if session is None or editor is None:
            return "Read-only here: no project is open."
        if path == editor.current_path:
            return SHOWN_IN_EDITOR
        if not session.settings.memory_enabled:
            return "Read-only here: memory is switched off for this project."
        if not session.can_write:
            return f'Read-only here: the "{session.backend.name}" backend cannot write memory.'
        project = session.project
        try:  # stats of the document and its folders: on the project's worker
            blocked = session.worker.call(lambda: project.writable(path), "")
        except Exception as exc:  # the project's own words
            blocked = getattr(exc, "message", str(exc))
        if blocked:
            return f"Read-only here: {blocked}."
        return "Read-only here: edit it in the editor."

    def editable(self, path: str) -> QTextDocument | None:
        """The editor's document of ``path`` to edit in the pane, or ``None`` (shown read-only)."""
        session, editor = self.window.session, self.window.editor
        if session is None or editor is None or path == editor.current_path:
            return None
        if not session.settings.memory_enabled or not session.can_write:
            return None
        try:
            project = session.project  # a file that is not UTF-8, or unreadable, stays read-only
            if session.worker.call(lambda: project.writable(path), ""):  # stats: on the worker
                return None
            text = session.worker.call(lambda: project.read(path), "")
        except Exception:
            return None
        try:
            slot = editor.buffer.open_beside(path, text, content_hash(text))
        except ValueError:  # the editor is taking it now
            return None
        self._relay_dirty(path, slot.document)
        return slot.document

    def refresh(self, path: str) -> None:
        """The pane's file moved on disk: its document reads it again when it has no unsaved edits."""
        session, editor = self.window.session, self.window.editor
        if session is None or editor is None or editor.buffer.beside != path:
            return
        try:
            project = session.project
            text = session.worker.call(lambda: project.read(path), "")  # on the project's worker
        except Exception as exc:  # no longer readable (not UTF-8, too big, not a file): not editable here
            slot = editor.buffer.slots.get(path)
            if self.pane is not None and slot is not None and not slot.document.isModified():
                self.pane.detach()  # shows "Cannot read …"; unsaved edits stay, and their save says why
                self.pane.note.setText(f"Read-only here: {getattr(exc, 'message', str(exc))}")
            return
        editor.buffer.refresh_beside(text, content_hash(text))

    # -- following the editor ------------------------------------------------------------------------
    def _relay_dirty(self, path: str, document: QTextDocument) -> None:
        """The pane's edits mark the document unsaved in the list and the tabs, as the editor's do."""
        editor = self.window.editor
        if self._dirty_relay is not None:
            old, slot = self._dirty_relay
            try:
                old.modificationChanged.disconnect(slot)
            except (RuntimeError, TypeError):
                pass
        if editor is None:
            return

        def relay(dirty: bool, path: str = path) -> None:
            current = self.window.editor
            if current is not None and current.current_path != path:  # the editor reports its own
                current.documentDirtyChanged.emit(path, dirty)

        document.modificationChanged.connect(relay)
        self._dirty_relay = (document, relay)

    def _editor_showed(self, path: str) -> None:
        """The editor now shows ``path``: if it is the pane's, the pane lets go of it (one place edits it);
        if the pane had let go of its document for the editor, it takes it back."""
        pane = self.pane
        if pane is None or pane.path is None:
            return
        if pane.path == path:
            pane.detach()  # now, before the editor takes the document
        elif pane.attached is None and pane.isVisible():
            QTimer.singleShot(0, self._take_back)  # once the editor shows the other one

    def _take_back(self) -> None:
        pane = self.pane
        if pane is not None and pane.attached is None and pane.isVisible() and pane.attach():
            pane.reload(keep_scroll=True)

    # -- saving --------------------------------------------------------------------------------------
    def has_focus(self) -> bool:
        """Whether the operator is typing in the pane (Ctrl+S then saves the pane's document)."""
        pane = self.pane
        return pane is not None and pane.isVisible() and pane.attached is not None and pane.text.hasFocus()

    def save_beside(self) -> bool:
        """Save the pane's document through the editor's own save (shown there for it, then the editor goes
        back): every check of a save holds; a conflict stays shown in the editor with the document."""
        pane, editor = self.pane, self.window.editor
        if pane is None or editor is None or pane.path is None:
            return False
        path, back = pane.path, editor.current_path
        editor.switch_document(path)
        if editor.current_path != path:  # the editor is resolving a conflict: it says so
            return False
        if editor.external.in_conflict:
            return False
        if editor.dirty and not editor.save():
            return False
        editor.switch_document(back)
        pane.text.setFocus()
        return True
