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

    def __init__(self, session: ProjectSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.read_only_banner = Banner(closable=False, parent=self)
        self.notice = Banner(parent=self)
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
        for widget in (self.read_only_banner, self.notice, self.find_bar):
            layout.addWidget(widget)
        layout.addWidget(self.splitter, 1)
        layout.addLayout(footer)
        return page

    def _connect_signals(self) -> None:
        doc = self.text_edit.document()
        doc.modificationChanged.connect(self.dirtyChanged)
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
        self.path_label.setText(path.relative_to(self.session.root).as_posix() if path else self.session.backend.name)
        self.path_label.setToolTip(str(path or ""))
        self.notice.clear()
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
        return None

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
            self.statusMessage.emit(f"Saved memory.md ({format_size(len(text.encode('utf-8')))})")
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
