"""Search view: a query box, the mode, and results with file, section, line and an "explain" column.

Searches go through the project (``Project.search``): on a backend that cannot search, memdesk's
derived index over every document runs instead, and the note under the query says which search
ran. Matched words are highlighted in the result column (:class:`HighlightDelegate`), not wrapped
in marks. Searches and index rebuilds run on a worker thread (``gui.tasks``); a newer search cancels
the one in flight. Activating a result emits ``openAtLine(relpath, line)``; the main window opens it.
"""

from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, Qt, Signal
from PySide6.QtGui import QAbstractTextDocumentLayout, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from core.backends import MemorySearchOptions, MemorySearchResult
from core.firewall.search_filter import without_superseded
from core.project.reindex import ReindexReport, reindex
from core.search.derived import DERIVED_MODE
from gui.models import RowTableModel
from gui.session import ProjectSession
from gui.tasks import CancelToken, Operation, run_in_background
from gui.widgets.parts import row_table

MODES = (("Hybrid", "hybrid"), ("Keyword", "keyword"), ("Semantic", "semantic"))
COLUMNS = ("File", "Line", "Section", "Result", "Explain")
RESULT_COLUMN = 3
#: The result column's highlighted words, as ``(start, end)`` in its display text.
HighlightRole = Qt.ItemDataRole.UserRole + 1
_Index = QModelIndex | QPersistentModelIndex


def unmarked(result: MemorySearchResult) -> tuple[str, list[tuple[int, int]]]:
    """The snippet without the marks core puts around matched words, and where those words are."""
    text, spans, cursor = [], [], 0
    length = 0
    for start, end in result.highlights:
        text.append(result.content[cursor:start])
        length += start - cursor
        word = result.content[start + 1:end - 1]
        spans.append((length, length + len(word)))
        text.append(word)
        length += len(word)
        cursor = end
    text.append(result.content[cursor:])
    return "".join(text), spans


def highlighted_html(text: str, spans: list[tuple[int, int]], colour: str) -> str:
    """``text`` as HTML with each span on a highlight background."""
    out, cursor = [], 0
    for start, end in spans:
        out += [escape(text[cursor:start]), f'<span style="background-color:{colour}; font-weight:600">',
                escape(text[start:end]), "</span>"]
        cursor = end
    out.append(escape(text[cursor:]))
    return "".join(out)


class HighlightDelegate(QStyledItemDelegate):
    """Paints the result column's text with its matched words highlighted (one line, elided by width)."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        spans = index.data(HighlightRole) or []
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        text = opt.text
        opt.text = ""
        style = opt.widget.style() if opt.widget is not None else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        colour = opt.palette.color(QPalette.ColorRole.Highlight).lighter(160).name() \
            if not opt.state & QStyle.StateFlag.State_Selected else "transparent"
        doc = QTextDocument()
        doc.setDefaultFont(opt.font)
        doc.setDocumentMargin(2)
        doc.setHtml(highlighted_html(text, spans, colour))
        painter.save()
        rect = opt.rect
        painter.translate(rect.left(), rect.top() + max(0, (rect.height() - doc.size().height()) / 2))
        painter.setClipRect(QRectF(0, 0, rect.width(), rect.height()))
        ctx = QAbstractTextDocumentLayout.PaintContext()
        role = QPalette.ColorRole.HighlightedText if opt.state & QStyle.StateFlag.State_Selected else \
            QPalette.ColorRole.Text
        ctx.palette.setColor(QPalette.ColorRole.Text, opt.palette.color(role))
        doc.documentLayout().draw(painter, ctx)
        painter.restore()


def explain(result: MemorySearchResult) -> str:
    """The explain column: keyword, vector and fused scores (``–`` where a score does not apply)."""
    def fmt(key: str) -> str:
        value = result.scores.get(key)
        return f"{value:.2f}" if value is not None else "–"

    return f"kw {fmt('keyword')} · vec {fmt('vector')} · fused {fmt('fused')}"


class SearchResultsModel(RowTableModel):
    """The results of the last search (``MemorySearchResult`` rows), one row each."""

    HEADERS = COLUMNS
    rows: list[MemorySearchResult]

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        r = self.rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            snippet = unmarked(r)[0] if col == RESULT_COLUMN else ""
            return (r.file or "", r.line_number or "", r.section or "", snippet, explain(r))[col]
        if role == HighlightRole and col == RESULT_COLUMN:
            return unmarked(r)[1]
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == 4:
                return "\n".join(f"{k}: {v:.4f}" for k, v in r.scores.items()) + f"\nscore: {r.score:.4f}"
            return unmarked(r)[0] if col == RESULT_COLUMN else None
        if role == Qt.ItemDataRole.TextAlignmentRole and col == 1:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class SearchView(QWidget):
    """Search the project's memory through its backend and open a result at its line."""

    openAtLine = Signal(str, int)  # project-relative path, 1-based line

    def __init__(self, session: ProjectSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.search_op: Operation | None = None
        self.rebuild_op: Operation | None = None
        self.limit = 50
        self.query = QLineEdit(self)
        self.query.setPlaceholderText("Search the memory, archive, insights…")
        self.query.setClearButtonEnabled(True)
        self.mode = QComboBox(self)
        for label, value in MODES:
            self.mode.addItem(label, value)
        self.include_superseded = QCheckBox("Include superseded", self)
        self.include_superseded.setToolTip("Also show entries marked [superseded DATE] (left out by default)")
        self.search_button = QPushButton("Search", self)
        self.rebuild_button = QPushButton("Rebuild index", self)
        self.rebuild_button.setToolTip("Rebuild every search index from the memory and check each entry is found")
        self.note = QLabel(self)
        self.note.setWordWrap(True)
        self.status = QLabel(self)
        self.model = SearchResultsModel(self)
        self.table = row_table(self.model, self, stretch_column=RESULT_COLUMN)
        self.table.setItemDelegateForColumn(RESULT_COLUMN, HighlightDelegate(self.table))

        bar = QHBoxLayout()
        bar.addWidget(self.query, 1)
        bar.addWidget(self.mode)
        bar.addWidget(self.include_superseded)
        bar.addWidget(self.search_button)
        bar.addWidget(self.rebuild_button)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.note)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.status)

        self.query.returnPressed.connect(self.run_search)
        self.search_button.clicked.connect(self.run_search)
        self.mode.currentIndexChanged.connect(lambda _i: self.run_search() if self.query.text().strip() else None)
        self.include_superseded.toggled.connect(lambda _c: self.run_search() if self.query.text().strip() else None)
        self.rebuild_button.clicked.connect(self.toggle_rebuild)
        self.table.activated.connect(self._open)
        session.backendChanged.connect(lambda _b: self.refresh())
        session.memoryReplaced.connect(lambda _s: self.run_search() if self.query.text().strip() else None)
        self.refresh()

    # -- state ----------------------------------------------------------------------------------
    @property
    def can_search(self) -> bool:
        """Whether a search can run: always (memdesk's derived index stands in for a backend without search)."""
        return True

    @property
    def derived(self) -> bool:
        """Whether searches run on memdesk's derived index (the backend cannot search itself)."""
        return not self.session.backend.has_capability("search")

    def _idle_note(self) -> str:
        if self.derived:
            return (f'Keyword search by memdesk\'s own index over every document (the "{self.session.backend.name}" '
                    "backend cannot search; its capabilities are unchanged).")
        return self.session.backend.status_note() or ""

    def refresh(self) -> None:
        """Re-read what the backend can do; search again when there is a query."""
        self.note.setText(self._idle_note())
        if self.query.text().strip():
            self.run_search()

    def set_query(self, text: str, mode: str | None = None) -> None:
        """Fill the query (and mode) and search."""
        if mode is not None:
            self.mode.blockSignals(True)
            self.mode.setCurrentIndex(max(0, self.mode.findData(mode)))
            self.mode.blockSignals(False)
        self.query.setText(text)
        self.run_search()

    @property
    def busy(self) -> bool:
        """Whether a search or rebuild is running."""
        return any(op is not None and op.running for op in (self.search_op, self.rebuild_op))

    # -- searching ------------------------------------------------------------------------------
    def run_search(self) -> None:
        """Search on a worker thread (cancelling a search still in flight)."""
        text = self.query.text().strip()
        if not text or not self.can_search:
            self.model.set_rows([])
            self.status.setText("")
            return
        if self.search_op is not None:
            self.search_op.cancel()
        mode = self.mode.currentData()
        project, backend, derived = self.session.project, self.session.backend, self.derived
        include, limit = self.include_superseded.isChecked(), self.limit
        # leaving superseded entries out: ask for more, then drop them (as ``memdesk search``)
        options = MemorySearchOptions(limit=limit if include else limit * 2 + 10, mode=mode)
        self.status.setText("Searching…")

        def work(_token: CancelToken) -> tuple[list[MemorySearchResult], str | None]:
            results = project.search(text, options, derived_ok=True)
            if not include:
                results = without_superseded(project.root, results, project.read)[:limit]
            asked = "" if mode == DERIVED_MODE else f", not {mode}: it has no semantic part"
            if derived:
                return results, (f"Ran: {DERIVED_MODE} search by memdesk's own index{asked} (the "
                                 f"\"{backend.name}\" backend cannot search).")
            note_fn = getattr(backend, "search_note", None)
            note = note_fn(mode) if callable(note_fn) else None
            if note and mode != DERIVED_MODE:  # it ran keyword: say so first, then why
                return results, f"Ran: {DERIVED_MODE} search, not {mode}, by the {backend.name} backend ({note})."
            return results, f"Ran: {mode} search by the {backend.name} backend." + (f" ({note})" if note else "")

        self.search_op = run_in_background(work, self._on_results, self._on_search_error, parent=self)

    def _on_results(self, outcome: tuple[list[MemorySearchResult], str | None]) -> None:
        results, note = outcome
        self.search_op = None
        self.model.set_rows(results)
        self.note.setText(note or self._idle_note())
        count = len(results)
        self.status.setText("No results." if not count else f"{count} result{'s' if count != 1 else ''}.")

    def _on_search_error(self, exc: BaseException) -> None:
        self.search_op = None
        self.model.set_rows([])
        self.status.setText(f"Search failed: {exc}")

    def _open(self, index: QModelIndex) -> None:
        result = self.model.rows[index.row()]
        if result.file and result.line_number:
            self.openAtLine.emit(result.file, int(result.line_number))

    def open_row(self, row: int) -> None:
        """Open result ``row`` (as activating it does)."""
        self._open(self.model.index(row, 0))

    # -- rebuilding -----------------------------------------------------------------------------
    def toggle_rebuild(self) -> None:
        """Start a rebuild with verification, or cancel the one running."""
        if self.rebuild_op is not None and self.rebuild_op.running:
            self.rebuild_op.cancel()
            self.rebuild_op = None
            self.rebuild_button.setText("Rebuild index")
            self.status.setText("Rebuild cancelled.")
            return
        backend = self.session.backend
        self.rebuild_button.setText("Cancel rebuild")
        self.status.setText("Rebuilding the index…")
        self.rebuild_op = run_in_background(
            lambda token: reindex(backend, verify=True, progress=token.progress, cancelled=lambda: token.cancelled),
            self._on_rebuilt, self._on_rebuild_error,
            on_progress=lambda p, msg: self.status.setText(f"Rebuilding… {p}% {msg}"), parent=self)

    def _on_rebuilt(self, report: ReindexReport) -> None:
        self.rebuild_op = None
        self.rebuild_button.setText("Rebuild index")
        if not report.ok:
            self.status.setText(f"Rebuilt, but {len(report.problems)} problem(s) remain: {report.problems[0]}")
        else:
            self.status.setText(f"Index rebuilt: {report.entries} entries in {report.files} file(s), "
                                f"{report.seconds:.1f} s; every entry verified.")
        if self.query.text().strip():
            self.run_search()

    def _on_rebuild_error(self, exc: BaseException) -> None:
        self.rebuild_op = None
        self.rebuild_button.setText("Rebuild index")
        self.status.setText(f"Rebuild failed: {exc}")
