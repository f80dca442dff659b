"""Edit ▸ Find in all documents (Ctrl+Shift+F): a query field and every matching line, grouped by document.

Typing searches (after a short pause, on a worker thread; Enter at once) every memory document of
the project, the unsaved edits included (:mod:`gui.find_all`). Each document is a row with its match count, each
match a row under it with its line number and the line, the match in bold. Enter or a double-click
on a match opens the document at that line (``openAtLine``); on a document, at its first match.
The dialog stays open beside the window (it is not modal), so the next result is a click away.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gui.find_all import FindHit, FindResult, find_in_documents
from gui.serial_worker import SerialWorker
from gui.tasks import Operation, run_in_background
from gui.widgets.raise_window import bring_forward

FIND_ALL_KEYS = "Ctrl+Shift+F"
DEBOUNCE_MS = 150
_HIT_ROLE = Qt.ItemDataRole.UserRole


class FindAllDialog(QDialog):
    """Find in all documents; ``texts()`` gives ``(path, text)`` of every document."""

    openAtLine = Signal(str, int)

    def __init__(self, texts: Callable[[], list[tuple[str, str]]], parent: QWidget | None = None,
                 worker: SerialWorker | None = None) -> None:
        super().__init__(parent)
        #: Where Enter's search reads the documents (the project's worker), the dialog painting meanwhile.
        self._worker = worker
        self.setObjectName("findAllDialog")
        self.setWindowTitle("Find in all documents — memdesk")
        self._texts = texts
        self.result: FindResult | None = None
        self.field = QLineEdit(self)
        self.field.setObjectName("findAllField")
        self.field.setPlaceholderText("Find in every memory document (any case)")
        self.field.setClearButtonEnabled(True)
        self.summary = QLabel("Type to search every document; Enter opens the selected match.", self)
        self.summary.setObjectName("findAllSummary")
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.tree = QTreeWidget(self)
        self.tree.setObjectName("findAllResults")
        self.tree.setHeaderHidden(True)
        self.tree.setUniformRowHeights(True)
        self.tree.setRootIsDecorated(True)
        row = QHBoxLayout()
        row.addWidget(QLabel("Find:", self))
        row.addWidget(self.field, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.summary)
        layout.addWidget(self.tree, 1)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.search_in_background)
        self._op: Operation | None = None
        self.field.textChanged.connect(lambda _t: self._timer.start())
        self.field.installEventFilter(self)
        self.tree.itemActivated.connect(self._open_item)
        self.resize(640, 480)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """In the field: Enter searches now (or opens the selected match), Down moves into the results."""
        if watched is self.field and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                if self._timer.isActive() or self.result is None or self.result.query != self.field.text():
                    self.search()
                elif self.tree.currentItem() is not None:
                    self._open_item(self.tree.currentItem())
                return True
            if event.key() == Qt.Key.Key_Down and self.tree.topLevelItemCount():
                self.tree.setFocus()
                return True
        return super().eventFilter(watched, event)

    def open_with(self, query: str | None = None) -> None:
        """Show the dialog (pre-filled with ``query``) and focus the field."""
        if query:
            self.field.setText(query)
        self.show()
        bring_forward(self)
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()

    def search(self) -> FindResult:
        """Search now and show the results."""
        self._timer.stop()
        if self._op is not None:
            self._op.cancel()
            self._op = None
        texts, query = self._texts, self.field.text()
        unsaved = texts.unsaved_now() if hasattr(texts, "unsaved_now") else None  # the editor's: on this thread

        def run() -> FindResult:
            return find_in_documents(texts(unsaved) if unsaved is not None else texts(), query)  # type: ignore[call-arg]

        result = self._worker.call(run, "") if self._worker is not None else run()
        self.result = result
        self._show(result)
        return result

    def search_in_background(self) -> None:
        """Search on a worker thread (typing never waits for 2 MiB to be read and searched); the
        results are shown if the query is still the one typed."""
        query = self.field.text()
        texts = self._texts
        unsaved = texts.unsaved_now() if hasattr(texts, "unsaved_now") else None
        if self._op is not None:
            self._op.cancel()

        def run(_token: object) -> FindResult:
            return find_in_documents(texts(unsaved) if unsaved is not None else texts(), query)

        def done(result: FindResult) -> None:
            self._op = None
            if result.query == self.field.text():
                self.result = result
                self._show(result)

        self._op = run_in_background(run, on_done=done, parent=self)

    def _show(self, result: FindResult) -> None:
        self.tree.setUpdatesEnabled(False)
        self.tree.clear()
        groups: dict[str, QTreeWidgetItem] = {}
        for hit in result.hits:
            group = groups.get(hit.path)
            if group is None:
                group = groups[hit.path] = QTreeWidgetItem(self.tree)
                group.setData(0, _HIT_ROLE, hit)
                font = group.font(0)
                font.setBold(True)
                group.setFont(0, font)
            item = QTreeWidgetItem(group, [f"{hit.line:>5}:  {hit.text.strip()}"])
            item.setData(0, _HIT_ROLE, hit)
            item.setToolTip(0, f"{hit.path}, line {hit.line:,}, column {hit.column:,}")
        counts: dict[str, int] = {}
        for hit in result.hits:
            counts[hit.path] = counts.get(hit.path, 0) + 1
        for path, group in groups.items():
            group.setText(0, f"{path}  ({counts[path]:,})")
        self.tree.expandAll()
        if result.hits:
            first = self.tree.topLevelItem(0)
            self.tree.setCurrentItem(first.child(0) if first.childCount() else first)
        self.tree.setUpdatesEnabled(True)
        if not result.query:
            self.summary.setText("Type to search every document; Enter opens the selected match.")
        elif not result.total:
            self.summary.setText(f"No matches for “{result.query}” in {result.searched:,} document(s).")
        else:
            shown = "" if len(result.hits) == result.total else f" (the first {len(result.hits):,} listed)"
            self.summary.setText(f"{result.total:,} match(es) in {result.documents:,} of {result.searched:,} "
                                 f"document(s){shown}.")

    def _open_item(self, item: QTreeWidgetItem | None, _column: int = 0) -> None:
        hit = item.data(0, _HIT_ROLE) if item is not None else None
        if isinstance(hit, FindHit):
            self.openAtLine.emit(hit.path, hit.line)

    def visible_rows(self) -> list[str]:
        """Every row's text, documents and their matches in order (tests, screenshots)."""
        rows: list[str] = []
        for i in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(i)
            rows.append(group.text(0))
            rows.extend(group.child(j).text(0) for j in range(group.childCount()))
        return rows
