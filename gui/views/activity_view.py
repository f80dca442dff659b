"""The Activity view: every write by every writer, newest first — a live feed of what agents wrote — and
every read an agent made through the local server or MCP (``core.storage.readlog``).

Each row is one recorded write (:mod:`core.project.activity`): the time, the writer (``kind:name`` as the
write pipeline records it: ``mcp:reviewer``, ``cli``, ``operator``…), whether it appended an entry
or replaced the document, the document, and what it did (an append's first line). Writer, document
and kind filters and a text filter narrow the list; Enter or a double-click opens the document at
the entry (an append's line, found in the document as it is now); Shift+Enter on a read shows exactly the
text that read served (:mod:`gui.widgets.read_version_dialog`), not the document as it is now. The list follows the history
database while the view is shown (a cheap check of its files every :data:`POLL_MS`), so an agent's
append appears without F5. The history is read on a worker thread (10,000 writes take a few hundred
ms), so the view paints at once and fills in; the table is a plain model over the list, fixed row
heights, no per-row widgets, so 10,000 rows scroll like any table.
"""

from __future__ import annotations

import logging
import os
from datetime import UTC, datetime
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.project.activity import ActivityEntry, entry_line, load_activity
from core.storage import readlog
from core.storage.history.db import db_path
from gui.proposal_text import plural
from gui.session import ProjectSession
from gui.tasks import Operation, run_in_background
from gui.views import activity_layout
from gui.widgets.parts import view_action
from gui.widgets.read_version_dialog import ReadVersionDialog

log = logging.getLogger(__name__)

POLL_MS = 1500
COLUMNS = ("Time", "Writer", "Kind", "Document", "What")
ALL = {"activityWriter": "All writers", "activityDocument": "All documents", "activityKind": "All kinds"}
KIND_LABELS = {"append": "append", "replace": "replace", "read": "read"}
_DISPLAY = Qt.ItemDataRole.DisplayRole
_TOOLTIP = Qt.ItemDataRole.ToolTipRole


def shown_time(entry: ActivityEntry, now: datetime | None = None) -> str:
    """Local time: ``15:40:03`` today, else ``2026-08-19 15:40``."""
    local = entry.when.astimezone()
    today = (now or datetime.now(UTC)).astimezone().date()
    return local.strftime("%H:%M:%S") if local.date() == today else local.strftime("%Y-%m-%d %H:%M")


class ActivityModel(QAbstractTableModel):
    """The filtered entries as a table (``rows`` indexes into ``entries``)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.entries: list[ActivityEntry] = []
        self.rows: list[int] = []
        self._cells: dict[int, tuple[str, str, str, str, str]] = {}

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        return None

    def entry(self, row: int) -> ActivityEntry:
        """The entry shown in ``row``."""
        return self.entries[self.rows[row]]

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == _DISPLAY:  # asked for every cell painted: one tuple per entry, made once
            key = self.rows[index.row()]
            cells = self._cells.get(key)
            if cells is None:
                entry = self.entries[key]
                cells = self._cells[key] = (shown_time(entry), entry.writer, KIND_LABELS[entry.kind],
                                            entry.path.removeprefix(".fusion/"), entry.summary)
            return cells[index.column()]
        if role == _TOOLTIP and index.isValid():
            return activity_layout.what_tooltip(self.entry(index.row()))
        return None

    def set_entries(self, entries: list[ActivityEntry], rows: list[int]) -> None:
        self.beginResetModel()
        self.entries, self.rows = entries, rows
        self._cells = {}
        self.endResetModel()

    def set_rows(self, rows: list[int]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()


class ActivityView(QWidget):
    """Every write, newest first, filterable; ``openAtLine(path, line)`` opens the document at an entry."""

    openAtLine = Signal(str, int)

    def __init__(self, session: ProjectSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("activityView")
        self.session = session
        self.writer_filter = self._combo("activityWriter", "Only this writer's writes")
        self.document_filter = self._combo("activityDocument", "Only writes to this document")
        self.kind_filter = self._combo("activityKind", "Appends (entries added) or replacements (saves, prunes…)")
        self.kind_filter.addItems([ALL["activityKind"], "append", "replace", "read"])
        self.text_filter = QLineEdit(self)
        self.text_filter.setObjectName("activityText")
        self.text_filter.setPlaceholderText("Filter by text (Ctrl+L)")
        self.text_filter.setClearButtonEnabled(True)
        self.count_label = QLabel("", self)
        self.count_label.setObjectName("activityCount")
        self.model = ActivityModel(self)
        self.table = QTableView(self)
        self.table.setObjectName("activityTable")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.setShowGrid(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        activity_layout.install(self.table)
        activity_layout.fit_columns(self.table)
        self.table.viewport().installEventFilter(self)  # the columns are fitted again when the table's width changes
        self.detail = activity_layout.detail_label(self)
        self.table.selectionModel().currentRowChanged.connect(self._show_detail)
        filters = QHBoxLayout()
        for widget in (self.writer_filter, self.document_filter, self.kind_filter):
            filters.addWidget(widget)
        filters.addWidget(self.text_filter, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addLayout(filters)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.detail)
        layout.addWidget(self.count_label)
        self._stamp: tuple[int, ...] | None = None
        self._loading: Operation | None = None
        self._again = False
        self._checking: Operation | None = None  # the files' stamps are taken on a worker thread
        self._check_again = False
        #: How many reads of the history have been shown (tests, the bench).
        self.load_count = 0
        #: The last "what was read" window shown (tests).
        self.read_dialog: ReadVersionDialog | None = None
        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self._check)
        for combo in (self.writer_filter, self.document_filter, self.kind_filter):
            combo.currentIndexChanged.connect(self.apply_filters)
        self.text_filter.textChanged.connect(self.apply_filters)
        self.table.doubleClicked.connect(lambda index: self.open_row(index.row()))
        for text, keys, slot in (("Filter the activity", "Ctrl+L", self._focus_filter),
                                 ("Open the selected write's document", ["Return", "Enter"], self._open_current),
                                 ("Show exactly what the selected read served", ["Shift+Return", "Shift+Enter"],
                                  self._show_current_read)):
            view_action(self, text, keys, slot).setProperty("shortcutScope", "Activity")
        session.documentsChanged.connect(self._check)
        session.memoryReplaced.connect(self._check)
        self.refresh()

    def _combo(self, name: str, tip: str) -> QComboBox:
        combo = QComboBox(self)
        combo.setObjectName(name)
        combo.setToolTip(tip)
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        combo.setMinimumContentsLength(9)
        return combo

    # -- data ------------------------------------------------------------------------------------
    def _db_stamp(self) -> tuple[int, ...]:
        """Sizes and change times of the history database and the read log (and their WAL files)."""
        out: list[int] = []
        for base in (db_path(self.session.root), readlog.log_path()):
            for path in (base, base.with_name(base.name + "-wal")):
                try:
                    st = os.stat(path)
                    out += [st.st_size, st.st_mtime_ns]
                except OSError:
                    out += [-1, -1]
        return tuple(out)

    def _check(self, *_args: object) -> None:
        """Read the history again if its files changed: their sizes and times are taken off the GUI thread."""
        if self._checking is not None:
            self._check_again = True  # one more look once this one lands
            return
        self._checking = run_in_background(lambda _token: self._db_stamp(), on_done=self._checked,
                                           on_error=self._check_failed, parent=self)

    def _checked(self, stamp: tuple[int, ...]) -> None:
        self._checking = None
        again, self._check_again = self._check_again, False
        if stamp != self._stamp:
            self.refresh()
        elif again:
            self._check()

    def _check_failed(self, exc: BaseException) -> None:
        self._checking = None
        log.warning("cannot look at the history's files: %s", exc)

    def refresh(self) -> None:
        """Read the history again, on a worker thread, and show it (the filters and the selected entry stay)."""
        if self._loading is not None:
            self._again = True  # one more read once this one lands
            return
        project, root = self.session.project, self.session.root

        def read(_token: object) -> tuple[tuple[int, ...], list[ActivityEntry]]:
            stamp = self._db_stamp()  # before the read: a write during it is read again
            versions = project.list_versions() if project.backend_history else None
            return stamp, load_activity(root, versions)

        def done(read: tuple[tuple[int, ...], list[ActivityEntry]]) -> None:
            self._stamp = read[0]
            self._show_entries(read[1])

        if not self.model.entries:
            self.count_label.setText("Reading the history…")
        self._loading = run_in_background(read, on_done=done, on_error=self._show_error, parent=self)

    def _show_error(self, exc: BaseException) -> None:
        self._loading = None
        self.count_label.setText(f"History unreadable: {exc}")
        self.load_count += 1

    def _show_entries(self, entries: list[ActivityEntry]) -> None:
        self._loading = None
        selected = self.selected_entry()
        self._fill_combo(self.writer_filter, sorted({e.writer for e in entries}))
        self._fill_combo(self.document_filter, sorted({e.path for e in entries}))
        self.model.set_entries(entries, self._filtered(entries))
        activity_layout.fit_columns(self.table)
        self._show_count()
        if selected is not None:
            self.select_key(selected.key)
        self._show_detail(self.table.currentIndex())
        self.load_count += 1
        if self._again:
            self._again = False
            self._check()

    def _fill_combo(self, combo: QComboBox, values: list[str]) -> None:
        everything = ALL[combo.objectName()]
        current = combo.currentText() or everything
        combo.blockSignals(True)
        combo.clear()
        combo.addItems([everything, *values])
        combo.setCurrentIndex(max(combo.findText(current), 0))
        combo.blockSignals(False)

    def _filtered(self, entries: list[ActivityEntry]) -> list[int]:
        writer, document, kind = (c.currentText() if c.currentIndex() > 0 else None
                                  for c in (self.writer_filter, self.document_filter, self.kind_filter))
        needle = self.text_filter.text().strip().lower()
        return [i for i, e in enumerate(entries)
                if (writer is None or e.writer == writer)
                and (document is None or e.path == document)
                and (kind is None or e.kind == kind)
                and (not needle or needle in e.summary.lower() or needle in e.text.lower() or needle in e.path.lower())]

    def apply_filters(self, *_args: object) -> None:
        """Show only the entries the filters let through."""
        self.model.set_rows(self._filtered(self.model.entries))
        activity_layout.fit_columns(self.table)
        self._show_detail(self.table.currentIndex())
        self._show_count()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.table.viewport() and event.type() == QEvent.Type.Resize and \
                event.size().width() != event.oldSize().width():  # type: ignore[attr-defined]  # a QResizeEvent
            # Only a change of width: the line under the table growing as rows are walked changes the height.
            activity_layout.fit_columns(self.table)
            if self.detail.isVisible():
                self._show_detail(self.table.currentIndex())
        return super().eventFilter(watched, event)

    def _show_detail(self, current: QModelIndex, _previous: QModelIndex | None = None) -> None:
        valid = current.isValid() and current.row() < self.model.rowCount()
        activity_layout.show_detail(self.detail, self.model.entry(current.row()) if valid else None, self.table.width())

    def _show_count(self) -> None:
        shown, total = len(self.model.rows), len(self.model.entries)
        if not total:
            self.count_label.setText("No writes recorded yet")
        else:
            reads = sum(1 for e in self.model.entries if e.kind == "read")
            if not reads:
                self.count_label.setText(plural(total, "write") if shown == total else
                                         f"{shown:,} of {plural(total, 'write')}")
            elif shown == total:
                self.count_label.setText(f"{plural(total - reads, 'write')} and {plural(reads, 'read')} (Shift+Enter "
                                         "shows what a read served)")
            else:
                self.count_label.setText(f"{shown:,} of {total:,} entries (Shift+Enter shows what a read served)")

    # -- selection, opening ----------------------------------------------------------------------
    def _focus_filter(self) -> None:
        self.text_filter.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.text_filter.selectAll()

    def _open_current(self) -> None:
        index = self.table.currentIndex()
        if index.isValid():
            self.open_row(index.row())

    def _show_current_read(self) -> None:
        index = self.table.currentIndex()
        if index.isValid():
            self.show_read(index.row())

    def show_read(self, row: int) -> ReadVersionDialog | None:
        """Show exactly the text the read of ``row`` served (the version that client loaded, checked against the
        hash it was logged with), or say in the status bar that memdesk no longer holds it."""
        entry = self.model.entry(row)
        if entry.kind != "read" or not entry.key.startswith("r"):
            self.session.statusMessage.emit("Not a read: Shift+Enter shows what a read served")
            return None
        project, read_id = self.session.project, int(entry.key[1:])

        def find() -> tuple[readlog.ReadEvent | None, str | None]:
            found = readlog.query(root=project.root, read_id=read_id, limit=1)
            return (found[0], readlog.version_read(project, found[0])) if found else (None, None)

        try:
            event, text = self.session.worker.call(find, "Finding the version read…")
        except Exception as exc:  # noqa: BLE001 - the log or history unreadable: said, nothing opened
            self.session.statusMessage.emit(f"Cannot open read {read_id}: {exc}")
            return None
        if event is None or text is None:
            self.session.statusMessage.emit(
                f"memdesk no longer holds the version read {read_id} served of {entry.path} (history pruned it, "
                "or another program changed the file and not only appended to it)")
            return None
        dialog = ReadVersionDialog(event, text, self)
        dialog.setModal(False)
        dialog.show()
        self.read_dialog = dialog
        return dialog

    def selected_entry(self) -> ActivityEntry | None:
        """The entry of the selected row, if any."""
        index = self.table.currentIndex()
        return self.model.entry(index.row()) if index.isValid() and index.row() < len(self.model.rows) else None

    def select_key(self, key: str) -> bool:
        """Select the row of entry ``key`` if it is shown."""
        for row, i in enumerate(self.model.rows):
            if self.model.entries[i].key == key:
                self.table.setCurrentIndex(self.model.index(row, 0))
                return True
        return False

    def visible_rows(self) -> list[tuple[str, ...]]:
        """The text of every shown row (tests)."""
        return [tuple(self.model.data(self.model.index(r, c)) for c in range(len(COLUMNS)))
                for r in range(self.model.rowCount())]

    def open_row(self, row: int) -> None:
        """Open the document of ``row`` at its entry (an append's line now; a replacement at the top)."""
        entry = self.model.entry(row)
        line = entry.line or 1
        if entry.kind == "append":
            try:
                project = self.session.project
                found = entry_line(self.session.worker.call(lambda: project.read(entry.path), ""), entry)
            except Exception:
                found = None
            if found is None:
                self.session.statusMessage.emit(f"That entry is no longer in {entry.path}; opened it at the top")
            line = found or 1
        self.openAtLine.emit(entry.path, line)

    # -- following the history while shown ---------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:
        """Catch up, then follow the history while shown."""
        super().showEvent(event)
        self._check()
        self._poll.start()

    def hideEvent(self, event: QHideEvent) -> None:
        """Stop following while hidden."""
        super().hideEvent(event)
        self._poll.stop()
