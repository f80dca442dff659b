"""Fusion's memory backups beside History (issue 21, must-have 4): pick a snapshot, see what differs, review a restore.

A strip under the History view's version list: Fusion's snapshots (``.fusion/backups/memory/memory-<stamp>/``,
listed by :func:`core.consolidation.backups.list_backups`), and for the one picked, each of its documents
with the lines a restore would add and remove against the document now, so the difference is seen first.
"Review restore…" stages the restore as a proposal (nothing is written) and asks for it to be reviewed in
the Consolidation view, where each change is shown as a diff with its ledger and lost facts and applied
through the write pipeline. The strip hides itself when there is no backup.
"""

from __future__ import annotations

import difflib
import logging

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from core.consolidation.backups import BACKUPS_DIR, list_backups, stage_restore
from core.storage import fileio
from gui.session import ProjectSession
from gui.tasks import Operation, run_in_background

log = logging.getLogger(__name__)


def _counts(now: str | None, then: str) -> tuple[int, int]:
    """Lines a restore adds and removes."""
    added = removed = 0
    for line in difflib.unified_diff((now or "").splitlines(), then.splitlines(), lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def backup_differences(session: ProjectSession, name: str) -> list[tuple[str, int, int]]:
    """``(document, lines added, lines removed)`` a restore of backup ``name`` would make, for each document."""
    project = session.project
    backup = next((b for b in list_backups(project) if b.name == name), None)
    if backup is None:
        return []
    out = []
    for inner, doc in backup.files:
        try:
            then = fileio.read_in_root(project.root, f"{BACKUPS_DIR}/{backup.name}/{inner}",
                                       max_size=fileio.MAX_FILE_SIZE)
            now = project.backend.read_document(doc)
        except Exception as exc:  # a linked-out or oversized copy is not restorable: said, not followed
            log.info("backup %s: %s not compared: %s", name, inner, exc)
            continue
        if then is not None:
            out.append((doc, *_counts(now, then)))
    return out


class BackupsStrip(QWidget):
    """Lists Fusion's memory backups with what each would change; stages a restore for review."""

    reviewRequested = Signal(str)  # the id of the staged restore proposal

    def __init__(self, session: ProjectSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.picker = QComboBox(self)
        self.picker.setToolTip("Fusion's memory snapshots (.fusion/backups/memory/), newest first")
        self.review_button = QPushButton("Review restore…", self)
        self.review_button.setToolTip("Stage restoring this backup as a proposal: each change is shown as a diff "
                                      "in the Consolidation view before anything is written")
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Fusion's memory backups:", self))
        row.addWidget(self.picker, 1)
        row.addWidget(self.review_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.summary)
        self.picker.currentIndexChanged.connect(lambda _i: self._show())
        self.review_button.clicked.connect(self.review)
        self._comparing: Operation | None = None
        self.refresh()

    def refresh(self) -> None:
        """List the backups again (keeping the one picked)."""
        chosen = self.picker.currentData()
        project = self.session.project
        try:  # the backups folder is listed on the project's worker
            backups = self.session.worker.call(lambda: list_backups(project), "")
        except Exception as exc:
            log.warning("cannot list Fusion's memory backups: %s", exc)
            backups = []
        self.picker.blockSignals(True)
        self.picker.clear()
        for b in backups:
            self.picker.addItem(f"{b.name} ({b.scope}, {len(b.files)} documents)", b.name)
        self.picker.setCurrentIndex(max(0, self.picker.findData(chosen)) if backups else -1)
        self.picker.blockSignals(False)
        self.setVisible(bool(backups))
        self._show()

    def _show(self) -> None:
        """Compare the picked backup with the documents now, off the GUI thread (a snapshot may be large)."""
        name = self.picker.currentData()
        self.review_button.setEnabled(False)
        if self._comparing is not None:
            self._comparing.cancel()
            self._comparing = None
        if not isinstance(name, str):
            self.summary.clear()
            return
        self.summary.setText("Comparing with the documents now…")
        session = self.session
        self._comparing = run_in_background(lambda _token: (name, backup_differences(session, name)),
                                            self._compared, self._compare_failed, parent=self)

    def _compare_failed(self, exc: BaseException) -> None:
        self._comparing = None
        self.summary.setText(f"Cannot compare this backup with the documents now: {exc}")

    def _compared(self, result: tuple[str, list[tuple[str, int, int]]]) -> None:
        self._comparing = None
        name, diffs = result
        if name != self.picker.currentData():
            return  # another backup was picked meanwhile
        changed = [(d, a, r) for d, a, r in diffs if a or r]
        self.review_button.setEnabled(bool(changed))
        if not changed:
            self.summary.setText("Every document of this backup is the same as now." if diffs
                                 else "Nothing in this backup can be restored.")
            return
        parts = [f"{d.rsplit('/', 1)[-1] if '/agent-memory/' not in d else d.split('/agent-memory/')[-1]} "
                 f"(+{a} −{r})" for d, a, r in changed]
        self.summary.setText(f"A restore would change {len(changed)} of {len(diffs)} documents: {', '.join(parts)}")

    def review(self) -> None:
        """Stage the restore of the picked backup (nothing is written) and ask for its review."""
        name = self.picker.currentData()
        if not isinstance(name, str) or not self.review_button.isEnabled():
            return
        try:
            project = self.session.project  # the staged proposal is written: on the project's worker
            proposal = self.session.worker.call(lambda: stage_restore(project, name), "Staging the restore…",
                                                disable=(self.review_button,))
        except Exception as exc:
            self.summary.setText(f"Cannot stage the restore: {exc}")
            return
        self.reviewRequested.emit(proposal.id)
