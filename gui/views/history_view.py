"""History view: every stored version, its diff against the current content, and restore.

The list comes from ``core.history``; the diff of the selected version against now is computed on a
worker thread. Restoring the working memory goes through the session (so it lands wherever the
backend keeps the memory and the content it replaces is recorded first); other files are restored
with ``core.history.restore_version``. Either way ``restored(relpath)`` is emitted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QFontDatabase, QSyntaxHighlighter, QTextCharFormat, QTextDocument
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from core import fileio, history
from core.project_memory import MEMORY_FILE_PATH
from core.search.corpus import read_file
from gui.models import RowTableModel
from gui.session import ProjectSession
from gui.tasks import Operation, run_in_background
from gui.widgets.colors import colour
from gui.widgets.parts import row_table

COLUMNS = ("Saved", "Source", "Author", "Size", "File")
ALL_FILES = "All files"
_Index = QModelIndex | QPersistentModelIndex


class VersionsModel(RowTableModel):
    """Stored versions (``history.Version`` rows), newest first."""

    HEADERS = COLUMNS
    rows: list[history.Version]

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        v = self.rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            saved = v.created_at.replace("T", " ").replace("+00:00", " UTC")
            return (saved, v.label, v.author or "", fileio.format_size(v.size), v.path)[index.column()]
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"version {v.id} · sha256 {v.hash[:12]}…"
        return None


class DiffHighlighter(QSyntaxHighlighter):
    """Colours a unified diff with the app's diff colours: removed and added lines, hunk headers."""

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self.formats: dict[str, QTextCharFormat] = {}
        for prefix, role, background in (("-", "removed-line", True), ("+", "added-line", True),
                                         ("@", "info-fg", False)):
            fmt = QTextCharFormat()
            if background:
                fmt.setBackground(colour(role))
            else:
                fmt.setForeground(colour(role))
            self.formats[prefix] = fmt

    def highlightBlock(self, text: str) -> None:  # noqa: N802 (Qt override)
        if text.startswith(("---", "+++")):
            return
        fmt = self.formats.get(text[:1])
        if fmt is not None:
            self.setFormat(0, len(text), fmt)


def _ask(parent: QWidget, text: str) -> bool:
    answer = QMessageBox.question(parent, "Restore version", text)
    return answer == QMessageBox.StandardButton.Yes


class HistoryView(QWidget):
    """Browse versions, see what changed since, restore one."""

    restored = Signal(str)  # project-relative path of the restored file

    def __init__(self, session: ProjectSession, parent: QWidget | None = None,
                 confirm: Callable[[QWidget, str], bool] = _ask) -> None:
        super().__init__(parent)
        self.session = session
        self.confirm = confirm
        self.diff_op: Operation | None = None
        self.files = QComboBox(self)
        self.model = VersionsModel(self)
        self.table = row_table(self.model, self, stretch_column=3)
        self.diff = QPlainTextEdit(self)
        self.diff.setReadOnly(True)
        self.diff.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.diff.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.highlighter = DiffHighlighter(self.diff.document())
        self.restore_button = QPushButton("Restore this version", self)
        self.status = QLabel(self)
        self.status.setWordWrap(True)

        top = QHBoxLayout()
        top.addWidget(QLabel("Show:", self))
        top.addWidget(self.files, 1)
        top.addWidget(self.restore_button)
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.table)
        splitter.addWidget(self.diff)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.status)

        self.files.currentIndexChanged.connect(lambda _i: self._load_versions())
        self.table.selectionModel().currentRowChanged.connect(lambda cur, _prev: self._show_diff(cur.row()))
        self.restore_button.clicked.connect(self.restore_selected)
        session.memoryReplaced.connect(lambda _s: self.refresh())
        session.backendChanged.connect(lambda _b: self.refresh())
        self.refresh()

    # -- listing --------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Reload the file list and the versions (keeping the file filter and selection when possible)."""
        chosen = self.files.currentText() or ALL_FILES
        paths = sorted({v.path for v in history.list_versions(self.session.root)})
        self.files.blockSignals(True)
        self.files.clear()
        self.files.addItems([ALL_FILES, *paths])
        self.files.setCurrentIndex(max(0, self.files.findText(chosen)))
        self.files.blockSignals(False)
        self._load_versions()

    def _load_versions(self) -> None:
        selected = self.selected_version()
        path = None if self.files.currentText() in ("", ALL_FILES) else self.files.currentText()
        self.model.set_rows(history.list_versions(self.session.root, path))
        row = next((i for i, v in enumerate(self.model.rows) if selected and v.id == selected.id),
                   0 if self.model.rows else -1)
        if row >= 0:
            self.table.selectRow(row)  # the current-row signal computes the diff
        else:
            self.diff.setPlainText("No versions stored yet. A version is kept each time a file is replaced.")
        self.restore_button.setEnabled(row >= 0)

    def selected_version(self) -> history.Version | None:
        """The version selected in the list."""
        row = self.table.currentIndex().row()
        return self.model.rows[row] if 0 <= row < len(self.model.rows) else None

    # -- diff -----------------------------------------------------------------------------------
    def _current(self, path: str) -> str:
        if path == MEMORY_FILE_PATH:
            return self.session.read_memory()[0]
        return read_file(self.session.root, path) or ""

    def _show_diff(self, row: int) -> None:
        if not 0 <= row < len(self.model.rows):
            return
        version = self.model.rows[row]
        if self.diff_op is not None:
            self.diff_op.cancel()
        try:
            current = self._current(version.path)
        except Exception as exc:
            self.diff.setPlainText(f"Cannot read the current {version.path}: {exc}")
            return
        root = self.session.root
        self.diff.setPlainText("Computing the diff…")

        def work(_token: object) -> str:
            found = history.get_version(root, version.id)
            if found is None:
                return "This version is no longer in the history."
            return history.unified_diff(found[1], current, version.path, f"version {version.id}") or (
                f"Version {version.id} is the same as the current {version.path}.")

        self.diff_op = run_in_background(work, self._on_diff, self._on_diff_error, parent=self)

    def _on_diff(self, text: str) -> None:
        self.diff_op = None
        self.diff.setPlainText(text)

    def _on_diff_error(self, exc: BaseException) -> None:
        self.diff_op = None
        self.diff.setPlainText(f"The diff could not be computed: {exc}")

    # -- restore --------------------------------------------------------------------------------
    def restore_selected(self) -> bool:
        """Restore the selected version after confirmation; True when it was restored."""
        version = self.selected_version()
        if version is None:
            return False
        if not self.confirm(self, f"Make version {version.id} ({version.created_at}) the current content of "
                                  f"{version.path}? The content it replaces is kept in the history."):
            return False
        try:
            if version.path == MEMORY_FILE_PATH:
                found = history.get_version(self.session.root, version.id)
                if found is None:
                    raise LookupError(f"version {version.id} is no longer in the history")
                _text, digest = self.session.read_memory()
                outcome = self.session.write_memory(found[1], digest, source="restore")
                if not outcome.success:
                    raise RuntimeError(outcome.error or "the write failed")
            else:
                history.restore_version(self.session.root, version.id)
        except Exception as exc:
            self.status.setText(f"Version {version.id} was not restored: {exc}")
            return False
        self.status.setText(f"Restored version {version.id} of {version.path}.")
        self.restored.emit(version.path)
        if version.path == MEMORY_FILE_PATH:
            self.session.memoryReplaced.emit("restore")  # the editor reloads; this view refreshes
        else:
            self.refresh()
        return True
