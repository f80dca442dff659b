"""The memory editor tab: markdown text with highlighting and live preview, find, save, and banners.

It reads and writes only through the :class:`~gui.session.ProjectSession`. It is read-only, with a
banner that says why, when memory is switched off, the backend cannot write, or the file is not
UTF-8. Changes made on disk by others arrive through :meth:`on_disk_changed` (see
:mod:`gui.editor.external`); a conflict opens the conflict view in place of the text.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSplitter, QStackedWidget, QVBoxLayout, QWidget

from core.fileio import format_size
from core.textmerge import count_conflicts
from gui.conflict_view import ConflictView
from gui.editor.banner import Banner
from gui.editor.buffer import EditorBuffer
from gui.editor.external import ExternalChanges
from gui.editor.find_bar import FindBar
from gui.editor.finder import Finder
from gui.editor.highlighter import MarkdownHighlighter
from gui.editor.missing_banner import MissingDocumentBanner
from gui.editor.preview import PreviewPane
from gui.editor.size_label import SizeLabel
from gui.editor.text_edit import MemoryTextEdit
from gui.session import ProjectSession

MEMORY_OFF = ("Memory is switched off for this project — agents get no memory instructions. "
              "Switch it on in Settings to edit.")
SETTLE_MS = 120


class MemoryEditor(QWidget):
    """Edits the open project's memory; emits what the window shows elsewhere."""

    dirtyChanged = Signal(bool)
    sizeChanged = Signal(int)
    statusMessage = Signal(str)
    saved = Signal()
    documentDirtyChanged = Signal(str, bool)  # relpath, has unsaved edits (kept while another is shown)

    def __init__(self, session: ProjectSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.read_only_banner = Banner(closable=False, parent=self)
        self.notice = Banner(parent=self)
        self.missing_banner = MissingDocumentBanner(self)
        #: Unsaved edits of documents not shown now: relpath → (text, base text, base hash).
        self._stash: dict[str, tuple[str, str, str]] = {}
        self.find_bar = FindBar(self)
        self.text_edit = MemoryTextEdit(self)
        self.highlighter = MarkdownHighlighter(self.text_edit.document())
        self.preview = PreviewPane(self)
        self.size_label = SizeLabel(self)
        self.path_label = QLabel(self)
        self.path_label.setObjectName("pathLabel")
        self.conflict_view = ConflictView(self)
        self.buffer = EditorBuffer(self.text_edit, self.highlighter)
        self.external = ExternalChanges(self)
        self.finder = Finder(self.text_edit, self.find_bar, self.buffer.text, self)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(self.text_edit)
        self.splitter.addWidget(self.preview)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)
        self.pages = QStackedWidget(self)
        self.pages.addWidget(self._editor_page())
        self.pages.addWidget(self.conflict_view)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.pages)
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self.read_only_reason: str | None = None
        self._read_error: str | None = None
        self.preview.set_text_source(lambda: (self.buffer.text(), self.text_edit.textCursor().blockNumber()))
        # Load budget (helper "budget"): the cut line over the text; the tracker feeds the status-bar meter.
        from gui.budget_tracker import BudgetTracker

        self.budget = BudgetTracker(self.text_edit, self.buffer.text, session, self)
        self.preview.set_text_source(self.budget.marked(self.preview._source))  # the cut marked in the preview
        self.budget.previewChanged.connect(self.preview.schedule)
        self._connect_signals()
        self.load()

    def _editor_page(self) -> QWidget:
        page = QWidget(self)
        footer = QHBoxLayout()
        footer.setContentsMargins(8, 2, 8, 4)
        footer.addWidget(self.path_label)
        footer.addStretch(1)
        footer.addWidget(self.size_label)
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        for widget in (self.missing_banner, self.read_only_banner, self.notice, self.find_bar):
            layout.addWidget(widget)
        layout.addWidget(self.splitter, 1)
        layout.addLayout(footer)
        return page

    def _connect_signals(self) -> None:
        doc = self.text_edit.document()
        doc.modificationChanged.connect(self.dirtyChanged)
        doc.modificationChanged.connect(lambda dirty: self.documentDirtyChanged.emit(self.session.current_path, dirty))
        self.missing_banner.createRequested.connect(self.create_document)
        doc.contentsChanged.connect(self._on_text_changed)
        self.text_edit.cursorPositionChanged.connect(self._on_cursor_moved)
        self.text_edit.updateRequest.connect(self.buffer.format_visible)
        self._settle.timeout.connect(self._on_settled)
        self.conflict_view.keepMineRequested.connect(self.external.keep_mine)
        self.conflict_view.takeDiskRequested.connect(self.external.take_disk)
        self.conflict_view.mergeRequested.connect(self.external.merge_by_hand)
        self.session.settingsChanged.connect(self._on_settings_changed)
        self.session.backendChanged.connect(self._on_backend_changed)
        self.session.memoryReplaced.connect(self.on_disk_changed)

    # -- loading and state ---------------------------------------------------------------------
    def load(self) -> None:
        """(Re)load memory from the session, dropping unsaved edits and any open conflict."""
        text, digest = self.session.read_memory()
        error = self.session.adapter.last_read_error
        self._read_error = error.message if error is not None and error.code == "READ_FAILED" else None
        self.external.close_conflict()
        self.buffer.load(text, digest)
        path = self.session.memory_path
        self.path_label.setText(self.session.current_path if path else
                                f"{self.session.current_path} (kept by {self.session.backend.name})")
        self.path_label.setToolTip(str(path or ""))
        self.notice.clear()
        self._show_missing()
        if self.session.settings_error is not None:
            self.notice.show_message(f"{self.session.settings_error} Default settings are in use until it is fixed.",
                                     "warning")
        self.apply_read_only()
        self._settle.stop()
        self._show_size(len(text.encode("utf-8")))  # the bytes on disk: no need to ask the document
        self.preview.schedule()

    def apply_read_only(self) -> None:
        """Make the text read-only, with the reason in a banner, when it must not be edited."""
        reason = self._compute_read_only_reason()
        self.read_only_reason = reason
        self.text_edit.setReadOnly(reason is not None)
        if reason is None:
            self.read_only_banner.clear()
        else:
            self.read_only_banner.show_message(reason, "error" if reason == self._read_error else "warning")

    def _compute_read_only_reason(self) -> str | None:
        if self._read_error:
            return self._read_error
        if not self.session.settings.memory_enabled:
            return MEMORY_OFF
        if not self.session.can_write:
            backend = self.session.backend
            return (f'The "{backend.name}" backend ({backend.id}) cannot write memory, so the editor is '
                    "read-only. Pick a backend that can write in Backends to edit.")
        blocked = self.session.write_block_reason()
        if blocked:
            return f"Read-only: {blocked}."
        return None

    # -- documents -----------------------------------------------------------------------------
    @property
    def current_path(self) -> str:
        """The document shown (project-relative)."""
        return self.session.current_path

    def switch_document(self, relpath: str) -> None:
        """Show ``relpath``; unsaved edits of the one shown are kept (and come back when it is shown again)."""
        if relpath == self.session.current_path:
            return
        if self.external.in_conflict:
            self.statusMessage.emit("Resolve the change on disk first; then switch documents.")
            return
        previous = self.session.current_path
        if self.buffer.dirty:
            self._stash[previous] = (self.buffer.text(), self.buffer.base_text, self.buffer.base_hash)
        self.session.set_document(relpath)
        self.load()
        stashed = self._stash.pop(relpath, None)
        if stashed is not None:
            text, base, digest = stashed
            self.buffer.set_base(base, digest)
            self.buffer.replace_undoable(text)
            self.buffer.document.setModified(True)
            self.on_disk_changed()  # the disk may have moved on meanwhile: merge appends or show a conflict
        self.documentDirtyChanged.emit(previous, previous in self._stash)
        self.documentDirtyChanged.emit(relpath, self.buffer.dirty)

    def unsaved_documents(self) -> list[str]:
        """Every document with unsaved edits, the one shown included."""
        shown = [self.session.current_path] if self.buffer.dirty else []
        return shown + [p for p in self._stash if p not in shown]

    def goto_line(self, line: int) -> None:
        """Put the cursor at the start of 1-based ``line`` and scroll it into view."""
        from PySide6.QtGui import QTextCursor

        block = self.text_edit.document().findBlockByNumber(max(line - 1, 0))
        if not block.isValid():
            block = self.text_edit.document().lastBlock()
        cursor = QTextCursor(block)
        self.text_edit.setTextCursor(cursor)
        self.text_edit.centerCursor()
        self.text_edit.setFocus()

    def create_document(self) -> None:
        """Create the missing document with its scaffold (the operator asked), then show it."""
        try:
            self.session.create_current_document()
        except Exception as exc:
            self.notice.show_message(f"Not created: {exc}", "error")
            return
        self.load()
        self.statusMessage.emit(f"Created {self.session.current_path}")

    def _show_missing(self) -> None:
        if self.session.document_exists or self._read_error:
            self.missing_banner.setVisible(False)
        else:
            self.missing_banner.show_for(self.session.current_path, self.session.write_block_reason() is None)

    @property
    def dirty(self) -> bool:
        """Whether there are unsaved edits."""
        return self.buffer.dirty

    def text(self) -> str:
        """The editor's text."""
        return self.buffer.text()

    # -- saving --------------------------------------------------------------------------------
    def save(self) -> bool:
        """Write the text through the session; on failure keep it, stay dirty, and say why."""
        if self.external.in_conflict:
            self.notice.show_message("Not saved: choose how to resolve the change on disk first.", "warning")
            return False
        if self.read_only_reason is not None:
            self.notice.show_message(f"Not saved: {self.read_only_reason}", "error")
            return False
        text = self.buffer.disk_text()
        if not self.buffer.dirty and text is self.buffer.base_text:
            self.statusMessage.emit("No changes to save")
            return True
        markers = count_conflicts(text) if self.external.merged_with_markers else 0
        if markers:
            self.notice.show_message(
                f"Not saved: {markers} conflict block(s) from the merge are still marked "
                "(<<<<<<< mine … >>>>>>> disk). Keep what you want, delete the marker lines, then save.",
                "error")
            return False
        outcome = self.session.write_memory(text, self.buffer.base_hash)
        if outcome.success:
            self.buffer.mark_saved(text)
            self.external.merged_with_markers = False
            self.notice.clear()
            self.statusMessage.emit(f"Saved {self.session.current_path} ({format_size(len(text.encode('utf-8')))})")
            self.missing_banner.setVisible(False)
            self.saved.emit()
            return True
        if outcome.code == "CONFLICT":
            self.external.conflict_on_save()
            return False
        self.notice.show_message(f"Not saved — your text is still here. {outcome.error}", "error")
        self.statusMessage.emit("Save failed")
        return False

    # -- external changes ----------------------------------------------------------------------
    def on_disk_changed(self, *_args: object) -> None:
        """The memory may have changed on disk: reload, merge appended entries, or show a conflict."""
        self.external.on_disk_changed()

    def _on_settings_changed(self, *_args: object) -> None:
        self.apply_read_only()
        self.on_disk_changed()

    def _on_backend_changed(self, *_args: object) -> None:
        if self.buffer.dirty:
            self.on_disk_changed()
            self.apply_read_only()
        else:
            self.load()

    def show_conflict(self, headline: str, mine: str, disk: str) -> None:
        """Replace the text with the conflict view (``mine`` beside ``disk``)."""
        self.conflict_view.set_texts(mine, disk, headline)
        self.pages.setCurrentWidget(self.conflict_view)

    def hide_conflict(self) -> None:
        """Show the text again."""
        self.pages.setCurrentIndex(0)
        self.text_edit.setFocus()

    # -- find ----------------------------------------------------------------------------------
    def show_find(self) -> None:
        """Open the find bar (pre-filled with a one-line selection)."""
        self.finder.open()

    def close_find(self) -> None:
        """Close the find bar and return to the text."""
        self.finder.close()

    # -- preview, size -------------------------------------------------------------------------
    def toggle_preview(self) -> bool:
        """Show or hide the preview; return whether it is now shown."""
        self.preview.setVisible(self.preview.isHidden())
        return not self.preview.isHidden()

    def _on_text_changed(self) -> None:
        self.finder.invalidate()
        self._settle.start()
        self.preview.schedule()

    def _on_cursor_moved(self) -> None:
        if self.preview.note.isVisible():  # only part is previewed: follow the cursor
            self.preview.schedule()

    def _on_settled(self) -> None:
        text = self.buffer.text()
        size = len(text.encode("utf-8"))
        if self.buffer.style.newline == "\r\n":
            size += text.count("\n")
        if self.buffer.style.bom:
            size += 3
        self._show_size(size)
        if self.find_bar.isVisible():
            self.finder.refresh_count()

    def _show_size(self, size: int) -> None:
        self.size_label.set_size(size)
        self.sizeChanged.emit(size)

    def shutdown(self) -> None:
        """Stop background work (preview render, conflict diff) before the editor goes away."""
        self._settle.stop()
        self.budget.shutdown()  # load budget (helper "budget")
        self.preview.cancel()
        self.conflict_view.cancel()
