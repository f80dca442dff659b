"""History view: the stored versions of the memory documents, each diffed side by side against now, and
restoring a whole version or only one of its changes.

The list comes from the project model (the backend's own history, e.g. ``postgres``'s shared database, else
``core.storage.history.versions``); by default it holds the memory documents only (internal files
such as stored proposals are shown on request). Each version is labelled by what replaced it
("before prune", "agent append", …). The diff of the selected version against the current content
(left: now, right: the version) is computed on a worker thread. Restoring a memory document goes
through the project model (so it lands wherever the backend keeps the document and the content it
replaces is recorded first); internal files can be looked at but are never restored (history rows
are untrusted: a planted row must not write outside the memory documents). A restored
change is written only if the file is still the one the diff was made from. Either way
``restored(relpath)`` is emitted.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from core.documents.diff import DiffResult, apply_hunks, diff_texts
from core.errors import MemoryBackendError
from core.project import Changes
from core.search.corpus import read_file
from core.storage import fileio
from core.storage.history import versions as history
from gui.models import RowTableModel
from gui.proposal_text import format_when
from gui.session import ProjectSession
from gui.tasks import Operation, run_in_background
from gui.widgets.backups_strip import BackupsStrip
from gui.widgets.diff_view import SideBySideDiff
from gui.widgets.parts import row_table, view_action

ALL_DOCUMENTS = "All memory documents"
ALL_FILES = "All files"
_Index = QModelIndex | QPersistentModelIndex
#: The view's keys, for the tooltips and the Help menu's list.
SHORTCUTS = (("Ctrl+R", "Restore the selected version"), ("Ctrl+Shift+R", "Restore only the current change"),
             ("F7 / Shift+F7", "Next / previous change"))

# Documents an operator keeps (design 2a); proposals, settings, audit and schedule files are internal.
_MEMORY_DOCUMENT = re.compile(r"^\.fusion/(?:memory\.md|memory-insights\.md|memory/(?!memory-audit\.md$)[^/]+\.md"
                              r"|agent-memory/[^/]+/[^/]+\.md)$")
# What replaced a version, said as what the version is. ``core.storage.history.versions.source_label`` takes over when present.
_SOURCE_LABELS = {
    "editor": "before save", "prune": "before prune", "restore": "before restore", "append": "agent append",
    "cli-write": "before a CLI write", "write": "before a write", "insights-merge": "before an insights merge",
    "insights-edit": "before an insights edit", "proposal": "proposal update", "settings": "before a settings change",
    "rotate": "before entries were archived", "mirror-import": "before a mirror import", "import": "before an import",
    "automation": "before a schedule change",
}


def is_memory_document(path: str) -> bool:
    """True for a memory document (working, long-term, daily, dreams, insights, per-agent files)."""
    return bool(_MEMORY_DOCUMENT.match(path))


def source_label(source: str) -> str:
    """``prune`` → ``before prune``: what a version is, from the source of the write that replaced it."""
    shared = getattr(history, "source_label", None)
    if shared is not None:
        return str(shared(source))
    return _SOURCE_LABELS.get(source, f"before {source}" if source else "earlier content")


def has_authors() -> bool:
    """True when ``core.storage.history.versions`` records who wrote a version."""
    return any(f.name == "author" for f in dataclasses.fields(history.Version))


class VersionsModel(RowTableModel):
    """Stored versions (``history.Version`` rows), newest first: when, what it is, who, size, file."""

    rows: list[history.Version]

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.HEADERS = ("Saved", "Version", *(("Author",) if has_authors() else ()), "Size", "File")

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        v = self.rows[index.row()]
        column = self.HEADERS[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return {"Saved": format_when(v.created_at), "Version": source_label(v.source),
                    "Author": getattr(v, "author", None) or "", "Size": fileio.format_size(v.size),
                    "File": v.path}[column]
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"version {v.id} · source {v.source} · sha256 {v.hash[:12]}…"
        return None


@dataclass(frozen=True)
class VersionDiff:
    """What the worker computed for one version: the current text, the version's text and their diff."""

    version: history.Version
    current: str
    content: str
    diff: DiffResult


def _ask(parent: QWidget, text: str) -> bool:
    answer = QMessageBox.question(parent, "Restore", text)
    return answer == QMessageBox.StandardButton.Yes


class HistoryView(QWidget):
    """Browse versions, see what changed since, restore one or one of its changes."""

    restored = Signal(str)  # project-relative path of the restored file
    reviewConsolidation = Signal(str)  # a staged restore of a Fusion backup, to review in the Consolidation view

    def __init__(self, session: ProjectSession, parent: QWidget | None = None,
                 confirm: Callable[[QWidget, str], bool] = _ask) -> None:
        super().__init__(parent)
        self.session = session
        self.confirm = confirm
        self.diff_op: Operation | None = None
        self.shown: VersionDiff | None = None
        self.files = QComboBox(self)
        self.files.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.files.setMinimumContentsLength(16)
        self.show_all = QCheckBox("Show internal files", self)
        self.show_all.setToolTip("Also list the versions of memdesk's own files (stored proposals, settings…)")
        self.model = VersionsModel(self)
        self.table = row_table(self.model, self, stretch_column=len(self.model.HEADERS) - 1)
        self.diff = SideBySideDiff("Now", "Version", self,
                                   identical_text="This version is the same as the current content.")
        self.restore_button = QPushButton("Restore version", self)
        self.restore_change_button = QPushButton("Restore this change", self)
        for button, key, slot, tip in (
                (self.restore_button, "Ctrl+R", self.restore_selected,
                 "Make the selected version the current content; what it replaces is kept in history"),
                (self.restore_change_button, "Ctrl+Shift+R", self.restore_change,
                 "Bring back only the change under the cursor (F7 / Shift+F7 move between changes)")):
            view_action(self, button.text(), key, slot)
            button.clicked.connect(slot)
            button.setToolTip(f"{tip} ({key})")
        self.status = QLabel(self)
        self.status.setWordWrap(True)

        top = QHBoxLayout()
        top.addWidget(QLabel("Show:", self))
        top.addWidget(self.files, 1)
        top.addWidget(self.show_all)
        actions = QHBoxLayout()
        actions.addWidget(self.status, 1)
        actions.addWidget(self.restore_change_button)
        actions.addWidget(self.restore_button)
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.table)
        splitter.addWidget(self.diff)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 3)
        splitter.setSizes([180, 620])  # a few versions on top, the diff gets the room
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)
        self.backups = BackupsStrip(session, self)  # Fusion's memory backups beside History (issue 21)
        self.backups.reviewRequested.connect(self.reviewConsolidation)
        layout.addWidget(self.backups)
        layout.addLayout(actions)

        self.files.currentIndexChanged.connect(lambda _i: self._load_versions())
        self.show_all.toggled.connect(lambda _on: self.refresh())
        self.table.selectionModel().currentRowChanged.connect(lambda cur, _prev: self._show_diff(cur.row()))
        self.diff.currentHunkChanged.connect(lambda _i: self._update_buttons())
        session.memoryReplaced.connect(lambda _s: self.refresh())
        session.backendChanged.connect(lambda _b: self.refresh())
        session.changedElsewhere.connect(lambda _path: self.refresh())  # another host wrote (live changes)
        session.noticedOutside.connect(lambda n: n.rewritten and self.refresh())  # a program's rewrite was kept
        self.refresh()

    # -- listing --------------------------------------------------------------------------------
    def _is_document(self, path: str) -> bool:
        return self.session.project.layout.is_document(path) or is_memory_document(path)

    def _listed(self, path: str) -> bool:
        return self.show_all.isChecked() or self._is_document(path)

    def _versions(self, path: str | None) -> list[history.Version]:
        """The project's versions (from the backend's own history when it keeps one); [] with the reason shown."""
        try:
            project = self.session.project  # history.db (or the backend's history): on the project's worker
            versions = self.session.worker.call(lambda: project.list_versions(path), "")
        except Exception as exc:  # a damaged history.db, an unreachable server: say so, keep the view usable
            self.status.setText(f"The history cannot be read: {exc}")
            return []
        if self.status.text().startswith("The history cannot be read"):
            self.status.clear()
        return versions

    def refresh(self) -> None:
        """Reload the file list and the versions (keeping the file filter and selection when possible)."""
        everything = self.show_all.isChecked()
        chosen = self.files.currentText()
        paths = sorted({v.path for v in self._versions(None) if self._listed(v.path)})
        first = ALL_FILES if everything else ALL_DOCUMENTS
        self.files.blockSignals(True)
        self.files.clear()
        self.files.addItems([first, *paths])
        self.files.setCurrentIndex(max(0, self.files.findText(chosen)))
        self.files.blockSignals(False)
        self._load_versions()
        if hasattr(self, "backups"):
            self.backups.refresh()

    def _load_versions(self) -> None:
        selected = self.selected_version()
        path = None if self.files.currentIndex() <= 0 else self.files.currentText()
        versions = [v for v in self._versions(path) if self._listed(v.path)]
        self.model.set_rows(versions)
        row = next((i for i, v in enumerate(versions) if selected and v.id == selected.id), 0 if versions else -1)
        if row >= 0:
            self.table.selectRow(row)  # the current-row signal computes the diff
        else:
            self.shown = None
            self.diff.set_busy("No versions stored yet. A version is kept each time a memory document is "
                               "replaced." + ("" if self.show_all.isChecked() else
                                              " Internal files are hidden (Show internal files)."))
        self._update_buttons()

    def selected_version(self) -> history.Version | None:
        """The version selected in the list."""
        row = self.table.currentIndex().row()
        return self.model.rows[row] if 0 <= row < len(self.model.rows) else None

    # -- diff -----------------------------------------------------------------------------------
    def _current(self, path: str) -> str:
        if self._is_document(path):
            return self.session.project.read(path)  # through the backend, wherever it keeps the document
        return read_file(self.session.root, path) or ""

    def _show_diff(self, row: int) -> None:
        if not 0 <= row < len(self.model.rows):
            return
        version = self.model.rows[row]
        if self.diff_op is not None:
            self.diff_op.cancel()
        self.shown = None
        try:
            current = self.session.worker.call(lambda: self._current(version.path), "")  # a backend may ask its server
        except Exception as exc:
            self.diff.set_busy(f"Cannot read the current {version.path}: {exc}")
            self._update_buttons()
            return
        project = self.session.project
        self.diff.set_busy("Computing the diff…")
        # From the version to now: what was added since (an agent's append) shows as added lines.
        self.diff.set_titles(f"Version {version.id} · {source_label(version.source)} · {format_when(version.created_at)}",
                             f"Now: {version.path}")
        self._update_buttons()

        def work(_token: object) -> VersionDiff | str:
            found = project.get_version(version.id)  # the backend's own history when it keeps one
            if found is None:
                return "This version is no longer in the history."
            return VersionDiff(version, current, found[1], diff_texts(found[1], current))

        self.diff_op = run_in_background(work, self._on_diff, self._on_diff_error, parent=self)

    def _on_diff(self, result: VersionDiff | str) -> None:
        self.diff_op = None
        if isinstance(result, str):
            self.diff.set_busy(result)
        else:
            self.shown = result
            self.diff.set_diff(result.diff)
        self._update_buttons()

    def _on_diff_error(self, exc: BaseException) -> None:
        self.diff_op = None
        self.diff.set_busy(f"The diff could not be computed: {exc}")
        self._update_buttons()

    def _update_buttons(self) -> None:
        self.restore_button.setEnabled(self.selected_version() is not None)
        self.restore_change_button.setEnabled(self.shown is not None and self.diff.current_hunk() is not None)

    # -- restore --------------------------------------------------------------------------------
    def _write(self, path: str, text: str, expected_hash: str) -> Changes:
        """Write ``text`` as ``path`` with source ``restore`` if it still has ``expected_hash`` (raises on failure)."""
        if not self._is_document(path):  # history rows are untrusted: only memory documents are restored
            raise MemoryBackendError(f"{path} is not a memory document of this project; memdesk restores memory "
                                     "documents only", "INVALID_CONFIG", self.session.backend.id)
        return self.session.worker.call(  # off the GUI thread, one write at a time
            lambda: self.session.project.write(path, text, expected_hash=expected_hash, source="restore"),
            f"Restoring a change of {path}…").changes

    def _announce(self, path: str, changes: Changes, message: str) -> None:
        self.status.setText(message)
        self.restored.emit(path)
        self.session.apply(changes, "restore")  # the editor reloads a restored current document
        self.refresh()

    def restore_selected(self) -> bool:
        """Restore the selected version after confirmation; True when it was restored."""
        version = self.selected_version()
        if version is None:
            return False
        if not self.confirm(self, f"Make version {version.id} ({source_label(version.source)}, "
                                  f"{format_when(version.created_at)}) the current content of {version.path}? "
                                  "The content it replaces is kept in the history."):
            return False
        try:
            # memory documents only; on the project's serial worker, off the GUI thread
            changes = self.session.worker.call(lambda: self.session.project.restore(version.id),
                                               f"Restoring version {version.id}…").changes
        except Exception as exc:
            self.status.setText(f"Version {version.id} was not restored: {exc}")
            return False
        self._announce(version.path, changes, f"Restored version {version.id} of {version.path}.")
        return True

    def restore_change(self) -> bool:
        """Bring back only the current change of the shown version after confirmation; True when written."""
        shown, hunk = self.shown, self.diff.current_hunk()
        if shown is None or hunk is None:
            return False
        version = shown.version
        # The diff runs from the version to now: undoing one hunk gives "now" with that place as it was.
        where = (f"lines {hunk.new_start + 1}–{hunk.new_end}" if hunk.added > 1 else
                 f"line {hunk.new_start + 1}" if hunk.added == 1 else f"after line {hunk.new_start}")
        if not self.confirm(self, f"Bring back this change from version {version.id} into {version.path} "
                                  f"({where} now: −{hunk.added} +{hunk.removed} lines)? The rest of the file stays "
                                  "as it is; the content it replaces is kept in the history."):
            return False
        others = [h.index for h in shown.diff.hunks if h.index != hunk.index]
        text = apply_hunks(shown.content, shown.current, shown.diff.hunks, others)
        try:
            changes = self._write(version.path, text, fileio.content_hash(shown.current))
        except Exception as exc:
            self.status.setText(f"The change was not restored: {exc}")
            return False
        self._announce(version.path, changes,
                       f"Restored one change ({where}) of {version.path} from version {version.id}.")
        return True
