"""The memory editor tab: outline, markdown text with line numbers and highlighting, live preview,
find, go to line, save, and banners.

It reads and writes only through the :class:`~gui.session.ProjectSession`. It is read-only, with a
banner that says why, as soon as the project opens: memory switched off, a backend that cannot
write, a file or folder that cannot be written (read-only mount, immutable file, permissions), or a
file that is not UTF-8 (shown with its undecodable bytes marked, never saved). A backend that fell
back to ``file`` is said here too. Changes made on disk by others arrive through
:meth:`on_disk_changed` (see :mod:`gui.editor.external`); a conflict opens the conflict view in
place of the text. What happened (merges, reloads) is also emitted as ``noticed`` for the window's
notification list.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSplitter, QStackedWidget, QVBoxLayout, QWidget

from core.documents.textmerge import count_conflicts
from core.storage.fileio import format_size
from gui.conflict_view import ConflictView
from gui.editor.authorship import AuthorFooter
from gui.editor.banner import Banner
from gui.editor.buffer import EditorBuffer
from gui.editor.documents import DocumentSlot
from gui.editor.external import ExternalChanges
from gui.editor.file_state import Undecodable, undecodable, write_block_reason
from gui.editor.find_bar import FindBar
from gui.editor.finder import Finder
from gui.editor.firewall_marks import FirewallMarks
from gui.editor.goto_bar import GoToLineBar
from gui.editor.highlighter import MarkdownHighlighter
from gui.editor.missing_banner import MissingDocumentBanner
from gui.editor.navigation import Navigator
from gui.editor.preview import PreviewPane
from gui.editor.replace_bar import ReplaceBar
from gui.editor.seen_changes import dropped_lines
from gui.editor.size_label import SizeLabel
from gui.editor.text_edit import MemoryTextEdit
from gui.session import ProjectSession
from gui.widgets.binding_banner import BindingBanner
from gui.widgets.colors import is_dark
from gui.widgets.outline import OutlineView

MEMORY_OFF = ("Memory is switched off for this project — agents get no memory instructions. "
              "Switch it on in Settings to edit.")
SETTLE_MS = 120
TITLE = "Memory"
OUTLINE_MIN_EDITOR_WIDTH = 700


class MemoryEditor(QWidget):
    """Edits the open project's memory; emits what the window shows elsewhere."""

    dirtyChanged = Signal(bool)
    titleChanged = Signal(str)  # "Memory" or "Memory •" while there are unsaved edits
    sizeChanged = Signal(int)
    statusMessage = Signal(str)
    noticed = Signal(str, str)  # text, level: something happened to the memory (merge, reload…)
    saved = Signal()
    documentDirtyChanged = Signal(str, bool)  # relpath, has unsaved edits (kept while another is shown)

    def __init__(self, session: ProjectSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.read_only_banner = Banner(closable=False, parent=self)
        self.backend_banner = Banner(parent=self)
        self.notice = Banner(parent=self)
        self.missing_banner = MissingDocumentBanner(self)
        self.binding_banner = BindingBanner(self)  # a team binding waiting for the operator (core.settings.bindings)
        self.find_bar = FindBar(self)
        self.goto_bar = GoToLineBar(self)
        self.text_edit = MemoryTextEdit(self)
        dark = is_dark()
        # One QTextDocument per opened document: switching is a setDocument (gui.editor.documents).
        self.buffer = EditorBuffer(self.text_edit, session.current_path, dark, self)
        self.buffer.on_loaded = self._on_loaded
        self._pending_line: int | None = None  # a go-to-line asked while the document was loading
        self.outline = OutlineView(self)
        self.preview = PreviewPane(self)
        if dark:
            self.preview.set_dark(True)
        self.size_label = SizeLabel(self)
        self.path_label = QLabel(self)
        self.path_label.setObjectName("pathLabel")
        # Who added the entry under the cursor (core.storage.history.versions's recorded appends), in the footer.
        self.author_label = AuthorFooter(self.text_edit, session.root, lambda: self.session.current_path, self)
        self.authors = self.author_label.authors
        self.conflict_view = ConflictView(self)
        self.external = ExternalChanges(self)
        self.finder = Finder(self.text_edit, self.find_bar, self.buffer.text, self)
        self.replace_bar = ReplaceBar(self.text_edit, self.find_bar, self.finder, self.buffer.text, self)
        self.navigator = Navigator(self.text_edit, self.outline, self.goto_bar, self.buffer.text, self)
        self.firewall_marks = FirewallMarks(self.text_edit, self.buffer.text)  # the memory firewall's underlines (issue 20)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setChildrenCollapsible(False)
        for index, (widget, stretch) in enumerate(((self.outline, 0), (self.text_edit, 3), (self.preview, 3))):
            self.splitter.addWidget(widget)
            self.splitter.setStretchFactor(index, stretch)
        self.outline.setMinimumWidth(120)
        self.text_edit.setMinimumWidth(220)
        self.preview.setMinimumWidth(160)
        self.pages = QStackedWidget(self)
        self.pages.addWidget(self._editor_page())
        self.pages.addWidget(self.conflict_view)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.pages)
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._user_sized = False
        self._outline_choice: bool | None = None  # None: shown when there is room
        self.read_only_reason: str | None = None
        self._read_error: str | None = None
        #: The file on disk when it is not UTF-8 (shown read-only, never saved).
        self.undecodable: Undecodable | None = None
        self.preview.set_text_source(lambda: (self.buffer.text(), self.text_edit.current_line()))
        # Load budget (helper "budget"): the cut line over the text; the tracker feeds the status-bar meter.
        from gui.budget_tracker import BudgetTracker

        self.budget = BudgetTracker(self.text_edit, self.buffer.text, session, self)
        self.preview.set_text_source(self.budget.marked(self.preview._source))  # the cut marked in the preview
        self.budget.previewChanged.connect(self.preview.schedule)
        self.budget.budgetsChanged.connect(lambda *_: self.outline.set_cut(self.budget.outline_cut()))
        # The editor follows the preview when the operator scrolls the preview (gui.editor.scroll_sync).
        from gui.editor.scroll_sync import ScrollSync

        self.scroll_sync = ScrollSync(self.text_edit, self.preview, self)
        self._connect_signals()
        self.load()

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Share the width out until the operator moves a divider: a narrow outline, text and preview halves.

        Narrower than :data:`OUTLINE_MIN_EDITOR_WIDTH` the outline steps aside (the text and the
        preview need the room) unless the operator asked for it (View ▸ Toggle outline).
        """
        super().resizeEvent(event)
        width = max(event.size().width(), 1)
        if self._outline_choice is None:
            self.outline.setVisible(width >= OUTLINE_MIN_EDITOR_WIDTH)
        if not self._user_sized:
            outline = min(max(width * 16 // 100, 130), 300) if self.outline.isVisibleTo(self) else 0
            self.splitter.setSizes([outline, (width - outline) // 2, (width - outline) // 2])

    def _editor_page(self) -> QWidget:
        page = QWidget(self)
        footer = QHBoxLayout()
        footer.setContentsMargins(8, 2, 8, 4)
        footer.addWidget(self.path_label)
        footer.addSpacing(16)
        footer.addWidget(self.author_label)
        footer.addStretch(1)
        footer.addWidget(self.size_label)
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        for widget in (self.binding_banner, self.missing_banner, self.read_only_banner, self.backend_banner, self.notice,
                       self.find_bar, self.replace_bar, self.goto_bar):
            layout.addWidget(widget)
        layout.addWidget(self.splitter, 1)
        layout.addLayout(footer)
        return page

    @property
    def highlighter(self) -> MarkdownHighlighter:
        """The shown document's highlighter."""
        return self.buffer.highlighter

    def _connect_signals(self) -> None:
        # The text field's own signals: they follow whichever document it shows.
        edit = self.text_edit
        edit.modificationChanged.connect(self.dirtyChanged)
        edit.modificationChanged.connect(lambda dirty: self.titleChanged.emit(self.title()))
        edit.modificationChanged.connect(lambda dirty: self.documentDirtyChanged.emit(self.session.current_path, dirty))
        edit.modificationChanged.connect(self._clear_stale_notice)
        self.missing_banner.createRequested.connect(self.create_document)
        self.binding_banner.confirmRequested.connect(self.confirm_binding)
        edit.textChanged.connect(self._on_text_changed)
        self.text_edit.cursorPositionChanged.connect(self._on_cursor_moved)
        self.text_edit.verticalScrollBar().valueChanged.connect(self._follow_in_preview)
        self.preview.rendered.connect(self._follow_in_preview)
        self.preview.linkRefused.connect(
            lambda url: self.statusMessage.emit(f"Not opened: the preview opens only http(s) links ({url[:80]})"))
        self.text_edit.updateRequest.connect(self.buffer.format_visible)
        self._settle.timeout.connect(self._on_settled)
        self.splitter.splitterMoved.connect(lambda *_: setattr(self, "_user_sized", True))
        self.conflict_view.keepMineRequested.connect(self.external.keep_mine)
        self.conflict_view.takeDiskRequested.connect(self.external.take_disk)
        self.conflict_view.mergeRequested.connect(self.external.merge_by_hand)
        self.session.settingsChanged.connect(self._on_settings_changed)
        self.session.backendChanged.connect(self._on_backend_changed)
        self.session.memoryReplaced.connect(self.on_disk_changed)

    # -- loading and state ---------------------------------------------------------------------
    def load(self, read: tuple[str, str] | None = None) -> None:
        """(Re)load memory from the session, dropping unsaved edits and any open conflict.

        ``read``: what ``session.read_memory()`` just returned (its error still in the adapter), not read again.
        """
        text, digest = read if read is not None else self.session.read_memory()
        error = self.session.adapter.last_read_error
        self._read_error = error.message if error is not None and error.code == "READ_FAILED" else None
        self.undecodable = undecodable(error) if self._read_error else None
        if self.undecodable is not None:  # show its text, marked; it is read-only and never saved
            self._read_error = self._undecodable_reason(self.undecodable)
            text, digest = self.undecodable.text, None
        self.external.close_conflict()
        self.buffer.load(text, digest)
        self._show_state()
        self._settle.stop()
        size = self.undecodable.size if self.undecodable else len(text.encode("utf-8"))
        self._show_size(size)  # the bytes on disk: no need to ask the document
        self.firewall_marks.forget()
        if not self.buffer.loading:  # else when it is full (_on_loaded)
            self.navigator.refresh()
            self.preview.schedule()
            self.authors.refresh()
            self.firewall_marks.refresh()

    def _show_state(self) -> None:
        """The footer, banners and read-only state of the document shown."""
        path = self.session.memory_path
        self.path_label.setText(self.session.current_path if path else
                                f"{self.session.current_path} (kept by {self.session.backend.name})")
        self.path_label.setToolTip(str(path or ""))
        self.notice.clear()
        self._show_missing()
        if self.session.settings_error is not None:
            self.notice.show_message(f"{self.session.settings_error} Default settings are in use until it is fixed.",
                                     "warning")
        self.show_backend_state()
        self.apply_read_only()

    def _on_loaded(self, _slot: DocumentSlot) -> None:
        """A big document is full now: editable, outlined, previewed, and checked against the disk."""
        self.apply_read_only()
        self.navigator.refresh()
        self.preview.schedule()
        self.budget.schedule()
        self.authors.refresh()
        self.firewall_marks.refresh()
        if self._pending_line is not None:
            line, self._pending_line = self._pending_line, None
            self.navigator.jump_to_line(line)
        self.external.on_disk_changed(quiet=True)  # it may have changed while it loaded

    def _undecodable_reason(self, info: Undecodable) -> str:
        return (f"{self._memory_name()} is not valid UTF-8: byte 0x{info.byte:02x} at line {info.line:,}, "
                f"column {info.column:,} cannot be decoded ({info.marks:,} place(s) marked \ufffd). It is "
                "shown read-only and will not be rewritten; convert it to UTF-8 to edit it.")

    def _memory_name(self) -> str:
        return self.session.current_path

    def confirm_binding(self) -> None:
        """The binding banner's action: the operator confirms the team binding; the memory opens from it."""
        self.session.confirm_binding()
        self.show_backend_state()
        self.apply_read_only()

    def show_backend_state(self) -> None:
        """Say so above the text when the configured backend fell back to ``file``."""
        backend = self.session.backend
        binding = self.session.binding_reason()
        self.binding_banner.show_reason(binding)
        if binding:
            self.backend_banner.clear()
        elif backend.fallback_reason:
            self.backend_banner.show_message(
                f'{backend.fallback_reason}. This editor shows the "{backend.name}" backend\'s memory '
                f"({self._memory_name()}) instead; pick an available backend in Backends to fix this.",
                "warning")
        else:
            self.backend_banner.clear()

    def title(self) -> str:
        """The tab title: "Memory", with "•" while there are unsaved edits."""
        return f"{TITLE} •" if self.buffer.dirty else TITLE

    def apply_read_only(self) -> None:
        """Make the text read-only, with the reason in a banner, when it must not be edited."""
        reason = self._compute_read_only_reason()
        self.read_only_reason = reason
        self.text_edit.setReadOnly(reason is not None or self.buffer.loading)  # no banner for a short load
        if reason is None:
            self.read_only_banner.clear()
        else:
            self.read_only_banner.show_message(reason, "error" if reason == self._read_error else "warning")

    def _compute_read_only_reason(self) -> str | None:
        if self._read_error:
            return self._read_error
        if not self.session.settings.memory_enabled:
            return MEMORY_OFF
        session = self.session
        if not session.can_write:
            backend = session.backend
            if self.binding_banner.isVisibleTo(self) or session.binding_reason():
                return "Read-only until the team binding named above is confirmed."
            return (f'The "{backend.name}" backend ({backend.id}) cannot write memory, so the editor is '
                    "read-only. Pick a backend that can write in Backends to edit.")
        return session.worker.call(lambda: _write_block(session), "")  # stats and a flags check: on the worker

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
        self._pending_line = None
        self.outline.set_cut(None)  # the budget of the document shown next is computed anew
        self.session.set_document(relpath)
        if self.buffer.show(relpath):  # open already: its text, undo and edits are all there
            self.firewall_marks.forget()
            self._shown_again()
            self.firewall_marks.refresh()
        else:
            self.load()
        self.documentDirtyChanged.emit(previous, previous in self.buffer.dirty_paths())
        self.documentDirtyChanged.emit(relpath, self.buffer.dirty)
        self.dirtyChanged.emit(self.buffer.dirty)
        self.titleChanged.emit(self.title())

    def _shown_again(self) -> None:
        """A document opened before is shown again: refresh what is around it, then catch up with the disk
        (reloaded quietly when it has no edits; appends merged, or the conflict view, when it has)."""
        self._read_error, self.undecodable = None, None
        self._show_state()
        self._settle.stop()
        self.finder.invalidate()
        if self.buffer.loading:
            return  # _on_loaded finishes the job
        self._measure()
        self.navigator.refresh()
        self.preview.schedule()
        self.budget.schedule()
        self.external.on_disk_changed(quiet=True)
        self.authors.refresh()

    def unsaved_documents(self) -> list[str]:
        """Every document with unsaved edits, the one shown included."""
        shown = [self.session.current_path] if self.buffer.dirty else []
        return shown + [p for p in self.buffer.dirty_paths() if p not in shown]

    def goto_line(self, line: int) -> None:
        """Put the cursor at the start of 1-based ``line`` (a search hit, an insight's source)."""
        if self.buffer.loading:
            self._pending_line = max(line - 1, 0)
            return
        self.navigator.jump_to_line(max(line - 1, 0))

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
        if self.buffer.loading:
            self.statusMessage.emit(f"Not saved: {self.session.current_path} is still loading")
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
        dropped = dropped_lines(self.buffer.slot.seen_disk, self.buffer.text())
        if dropped:  # Ctrl+Z past a merge, or the operator's side of a marked block: show it again
            self.external.dropped_on_save(dropped)
            return False
        outcome = self.session.write_memory(text, self.buffer.base_hash)  # on the project's worker
        # Something that changed on disk while it ran is looked at after this save settles (external.catch_up).
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
        if getattr(self, "_shut", False):
            return
        self.external.on_disk_changed()
        self.authors.refresh()  # an append arrives with its recorded author

    def _on_settings_changed(self, *_args: object) -> None:
        self.apply_read_only()
        self.on_disk_changed()

    def _on_backend_changed(self, *_args: object) -> None:
        if self.buffer.dirty:
            self.on_disk_changed()
            self.show_backend_state()
            self.apply_read_only()
            return
        read = self.session.read_memory()
        if (read[0] == self.buffer.base_text and self.session.adapter.last_read_error is None
                and not self.buffer.loading and not self.external.in_conflict and self.undecodable is None
                and self._read_error is None):
            # The new backend holds the same text (a switch file -> sqlite mirrors the file): the document,
            # its undo and its view stay; re-filling 1 MiB would hold the GUI thread for nothing.
            self.buffer.set_base(*read)
            self._show_state()
            return
        self.load(read)

    def show_conflict(self, headline: str, mine: str, disk: str) -> None:
        """Replace the text with the conflict view (``mine`` beside ``disk``)."""
        self.conflict_view.set_texts(mine, disk, headline)
        self.conflict_view.set_base(self.buffer.base_text)  # three-way: what both sides started from
        had_focus = self.text_edit.hasFocus()
        self.pages.setCurrentWidget(self.conflict_view)
        if had_focus:  # the keys go on working here: the view's shortcuts (Ctrl+Shift+M…) need focus in it
            self.conflict_view.merge_button.setFocus()

    def hide_conflict(self) -> None:
        """Show the text again."""
        self.pages.setCurrentIndex(0)
        self.text_edit.setFocus()

    # -- find ----------------------------------------------------------------------------------
    def show_find(self) -> None:
        """Open the find bar (pre-filled with a one-line selection)."""
        self.replace_bar.setVisible(False)
        self.finder.open()

    def show_replace(self) -> None:
        """Open find and replace (Ctrl+H): the find bar and the "Replace with" row under it."""
        self.replace_bar.open()

    def close_find(self) -> None:
        """Close the find bar and return to the text."""
        self.replace_bar.setVisible(False)
        self.finder.close()

    # -- navigation ----------------------------------------------------------------------------
    def show_goto(self) -> None:
        """Open the Go to line bar."""
        self.navigator.open_goto()

    def go_to_line(self, line: int) -> int:
        """Move the cursor to ``line`` (0-based); return the line it landed on."""
        return self.navigator.jump_to_line(line)

    def next_section(self) -> bool:
        """Move to the next section heading."""
        return self.navigator.next_section()

    def previous_section(self) -> bool:
        """Move to the previous section heading."""
        return self.navigator.previous_section()

    def toggle_outline(self) -> bool:
        """Show or hide the outline (the operator's choice from now on); return whether it is shown."""
        self._outline_choice = self.outline.isHidden()
        self.outline.setVisible(self._outline_choice)
        return self._outline_choice

    def notify(self, text: str, level: str = "info") -> None:
        """Say what happened to the memory, in the status bar and the notification list."""
        self.statusMessage.emit(text)
        self.noticed.emit(text, level)

    def set_dark(self, dark: bool) -> None:
        """Recolour the text and the preview for the dark (or light) theme."""
        self.buffer.set_dark(dark)
        self.preview.set_dark(dark)

    # -- preview, size -------------------------------------------------------------------------
    def toggle_preview(self) -> bool:
        """Show or hide the preview; return whether it is now shown."""
        self.preview.setVisible(self.preview.isHidden())
        return not self.preview.isHidden()

    def _clear_stale_notice(self, dirty: bool | None = None) -> None:
        """A notice that no longer holds goes: "Not saved…" once back at the saved text (Ctrl+Z), and
        the marked-merge notices once no marker is left (Ctrl+Z undid the merge, or they were resolved)."""
        notice = self.notice.text()
        if not notice:
            return
        if dirty is False and notice.startswith("Not saved"):
            self.notice.clear()
        elif ("<<<<<<<" in notice and self.external.merged_with_markers
              and not count_conflicts(self.buffer.text())):
            self.external.merged_with_markers = False
            self.notice.clear()

    def _on_text_changed(self) -> None:
        if self.buffer.loading:  # a chunk of a big load: all is refreshed once it is full
            return
        self.finder.invalidate()
        self._settle.start()
        self.preview.schedule()

    def _on_cursor_moved(self) -> None:
        if self.preview.note.isVisible():  # only part is previewed: follow the cursor
            self.preview.schedule()

    def _follow_in_preview(self, *_args: object) -> None:
        self.preview.follow_line(self.text_edit.first_visible_line())

    def _on_settled(self) -> None:
        if self.session.worker.busy:  # a save or read runs: the firewall scan and outline wait for its end
            self._settle.start()
            return
        self._clear_stale_notice()
        self._measure()
        self.navigator.schedule(SETTLE_MS)  # a big text a little later (gui.editor.navigation)
        self.firewall_marks.schedule(SETTLE_MS)  # a longer text waits longer (gui.editor.firewall_marks)
        if self.find_bar.isVisible():
            self.finder.refresh_count()

    def _measure(self) -> None:
        """Show the size the text would have on disk."""
        text = self.buffer.text()
        size = len(text.encode("utf-8"))
        if self.buffer.style.newline == "\r\n":
            size += text.count("\n")
        if self.buffer.style.bom:
            size += 3
        self._show_size(size)

    def _show_size(self, size: int) -> None:
        self.size_label.set_size(size)
        self.sizeChanged.emit(size)

    def shutdown(self) -> None:
        """Stop background work (preview render, conflict diff) before the editor goes away."""
        self._shut = True  # a change notice already queued (the save's own write) finds no editor to update
        self._settle.stop()
        self.budget.shutdown()  # load budget (helper "budget")
        self.authors.shutdown()
        self.preview.cancel()
        self.conflict_view.cancel()


def _write_block(session: ProjectSession) -> str | None:
    """Why the current document cannot be saved (on the project's worker: it stats the file, checks its
    flags and asks the project), ``None`` when it can."""
    # The precise reason first (read-only mount, immutable, the folder a save renames in), then
    # the project's own check (it knows the backend and the layout).
    precise = write_block_reason(session.root, session.memory_path)
    if precise:
        return f"Read-only: {precise}"
    blocked = session.write_block_reason()
    if blocked:
        return f"Read-only: {blocked}."
    return None
