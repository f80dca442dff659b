"""View ▸ Open beside (Ctrl+\\): a second document beside the editor, to read or edit one while editing another.

The pane shows any document of the project (chosen in its list), highlighted as the editor does. It
edits the editor's own document of that path (:meth:`EditorBuffer.open_beside`: one ``QTextDocument``
per path, never two copies), so its edits are unsaved edits like any other: the dot in the list and the
tabs, the quit dialog's list, Save All, and every check of a save (the base hash, appends merged, the
conflict view), which runs through the editor. Ctrl+S in the pane saves it. The document shown in the
editor itself, or one that cannot be saved (memory off, a read-only file or backend, not UTF-8), is
shown read-only here. It follows the file (an agent's append shows up while it has no edits), keeps its
scroll position, and "Edit" (or Enter in the list) opens that document in the editor. Esc or Ctrl+\\
closes it.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QFileSystemWatcher, Qt, QTimer, Signal
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextDocumentLayout,
    QPlainTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gui.editor.highlighter import MarkdownHighlighter
from gui.widgets.colors import is_dark

SIDE_KEYS = "Ctrl+\\"


#: What the note above the text says in each state.
EDITABLE_NOTE = "Edits here are unsaved edits of this document: Ctrl+S saves it, Save All saves every one."
READ_ONLY_NOTE = "Read-only here: edit it in the editor."
SHOWN_NOTE = "Shown in the editor: edit it there (or pick another document here)."


class SideDocument(QWidget):
    """A document beside the editor; ``editRequested(path)`` asks the editor to open it.

    ``editable(path)`` gives the editor's document of ``path`` to edit here, or ``None`` (read-only, with
    ``read_only_reason(path)``); ``refresh(path)`` reads an edited document's file again when it has no
    unsaved edits. Without them the pane is read-only.
    """

    editRequested = Signal(str)
    closed = Signal()

    def __init__(self, read: Callable[[str], str], absolute: Callable[[str], str | None],
                 parent: QWidget | None = None, *,
                 editable: Callable[[str], QTextDocument | None] | None = None,
                 refresh: Callable[[str], None] | None = None,
                 read_only_reason: Callable[[str], str] | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sideDocument")
        self._read, self._absolute = read, absolute
        self._editable = editable or (lambda path: None)
        self._refresh = refresh or (lambda path: None)
        self._why_read_only = read_only_reason or (lambda path: READ_ONLY_NOTE)
        self.path: str | None = None
        #: The editor's document being edited here (``None``: a read-only copy in the pane's own document).
        self.attached: QTextDocument | None = None
        self.chooser = QComboBox(self)
        self.chooser.setObjectName("sideChooser")
        self.chooser.setToolTip("The document shown beside the editor")
        self.chooser.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.chooser.setMinimumContentsLength(6)  # long paths elide: the pane fits beside the editor at 800 px
        self.edit_button = QToolButton(self)
        self.edit_button.setText("&Edit")
        self.edit_button.setToolTip("Open this document in the editor")
        self.close_button = QToolButton(self)
        self.close_button.setText("✕")
        self.close_button.setToolTip("Close (Esc)")
        self.close_button.setAutoRaise(True)
        self.note = QLabel(READ_ONLY_NOTE, self)
        self.note.setWordWrap(True)
        self.note.setObjectName("sideNote")
        self.text = QPlainTextEdit(self)
        self.text.setObjectName("sideText")
        self.text.setReadOnly(True)
        # The read-only copy's document, the pane's own (the text field would delete a document of its own
        # when it is given the editor's to edit).
        self._own = QTextDocument(self)
        self._own.setDocumentLayout(QPlainTextDocumentLayout(self._own))
        self._own.setDefaultFont(self.text.font())
        self.text.setDocument(self._own)
        self.highlighter = MarkdownHighlighter(self._own, dark=is_dark())
        top = QHBoxLayout()
        top.addWidget(self.chooser, 1)
        top.addWidget(self.edit_button)
        top.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.note)
        layout.addWidget(self.text, 1)
        self._watcher = QFileSystemWatcher(self)
        self._reload_soon = QTimer(self)
        self._reload_soon.setSingleShot(True)
        self._reload_soon.setInterval(100)
        self._reload_soon.timeout.connect(self.reload)
        self._watcher.fileChanged.connect(lambda _p: self._reload_soon.start())
        self.chooser.currentIndexChanged.connect(lambda _i: self.show_document(self.chooser.currentData()))
        self.edit_button.clicked.connect(lambda: self.path and self.editRequested.emit(self.path))
        self.close_button.clicked.connect(self.close_pane)
        self.setMinimumWidth(160)

    def set_documents(self, documents: list[tuple[str, str]]) -> None:
        """The ``(path, label)`` pairs to choose from (the picker's list); the one shown stays if still there."""
        current = self.path
        self.chooser.blockSignals(True)
        self.chooser.clear()
        for path, label in documents:
            self.chooser.addItem(f"{label} — {path}", path)
        index = self.chooser.findData(current) if current else -1
        self.chooser.setCurrentIndex(max(index, 0))
        self.chooser.blockSignals(False)
        if current is None or index < 0:
            self.show_document(self.chooser.currentData())

    def show_document(self, path: str | None) -> None:
        """Show ``path`` (read from the project) and follow its file."""
        if path is None:
            return
        self.path = path
        index = self.chooser.findData(path)
        if index >= 0 and index != self.chooser.currentIndex():
            self.chooser.blockSignals(True)
            self.chooser.setCurrentIndex(index)
            self.chooser.blockSignals(False)
        if self._watcher.files():
            self._watcher.removePaths(self._watcher.files())
        absolute = self._absolute(path)
        if absolute:
            self._watcher.addPath(absolute)
        self.attach()
        self.reload(keep_scroll=False)

    def attach(self) -> bool:
        """Edit the shown path's own document here when the editor allows it, else show a read-only copy;
        True when editable."""
        document = self._editable(self.path) if self.path is not None else None
        if document is not None and document is not self.attached:
            self.detach(read=False)
            self.attached = document
            document.destroyed.connect(self._document_gone)
            self.text.setDocument(document)
            self.text.setReadOnly(False)
            self.note.setText(EDITABLE_NOTE)
        elif document is None and self.attached is not None:
            self.detach()
        elif document is None:
            self.note.setText(self._why_read_only(self.path) if self.path is not None else READ_ONLY_NOTE)
        return self.attached is not None

    def detach(self, read: bool = True) -> None:
        """Let go of the editor's document (it is shown in the editor now, or closed): a read-only copy."""
        document, self.attached = self.attached, None
        if document is not None:
            try:
                document.destroyed.disconnect(self._document_gone)
            except (RuntimeError, TypeError):
                pass
        if self.text.document() is not self._own:
            self.text.setDocument(self._own)
        self.text.setReadOnly(True)
        self.note.setText(self._why_read_only(self.path) if self.path is not None else READ_ONLY_NOTE)
        if read:
            self.reload(keep_scroll=False)

    def _document_gone(self, *_args: object) -> None:
        self.attached = None
        self.text.setDocument(self._own)
        self.text.setReadOnly(True)

    def reload(self, keep_scroll: bool = True) -> None:
        """Read the document again (its scroll position kept); an edited one only while it has no edits."""
        if self.path is None:
            return
        bar = self.text.verticalScrollBar()
        at = bar.value()
        if self.attached is not None:
            self._refresh(self.path)  # never over unsaved edits: their save merges or shows the conflict
        else:
            try:
                text = self._read(self.path)
            except Exception as exc:
                text = f"Cannot read {self.path}: {exc}"
            self.text.setPlainText(text)
        if keep_scroll:
            bar.setValue(at)
        absolute = self._absolute(self.path)
        if absolute and absolute not in self._watcher.files():  # replaced by a rename: watch the new file
            self._watcher.addPath(absolute)

    def keyPressEvent(self, event) -> None:  # noqa: ANN001
        """Esc closes the pane."""
        if event.key() == Qt.Key.Key_Escape:
            self.close_pane()
            return
        super().keyPressEvent(event)

    def close_pane(self) -> None:
        """Hide the pane (it is built again the next time)."""
        self.setVisible(False)
        self.closed.emit()
