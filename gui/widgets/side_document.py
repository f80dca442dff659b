"""View ▸ Open beside (Ctrl+\\): a second document beside the editor, to read one while editing another.

The pane shows any document of the project (chosen in its list), highlighted as the editor does,
read-only: edits happen in the editor, which owns saving, merging and the unsaved-edits checks, so
no second copy can lose work. It follows the file (an agent's append shows up), keeps its scroll
position, and "Edit" (or Enter in the list) opens that document in the editor. Esc or Ctrl+\\ closes it.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QFileSystemWatcher, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gui.editor.highlighter import MarkdownHighlighter
from gui.widgets.colors import is_dark

SIDE_KEYS = "Ctrl+\\"


class SideDocument(QWidget):
    """A read-only document beside the editor; ``editRequested(path)`` asks the editor to open it."""

    editRequested = Signal(str)
    closed = Signal()

    def __init__(self, read: Callable[[str], str], absolute: Callable[[str], str | None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sideDocument")
        self._read, self._absolute = read, absolute
        self.path: str | None = None
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
        self.note = QLabel("Read-only here: edit it in the editor.", self)
        self.note.setWordWrap(True)
        self.note.setObjectName("sideNote")
        self.text = QPlainTextEdit(self)
        self.text.setObjectName("sideText")
        self.text.setReadOnly(True)
        self.highlighter = MarkdownHighlighter(self.text.document(), dark=is_dark())
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
        self.reload(keep_scroll=False)

    def reload(self, keep_scroll: bool = True) -> None:
        """Read the document again (its scroll position kept)."""
        if self.path is None:
            return
        bar = self.text.verticalScrollBar()
        at = bar.value()
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
