"""The legacy-file migration dialog: the diff MEMORY.md would get, then Apply or Cancel.

A layered project that still has ``.fusion/memory.md`` (which Fusion no longer reads) can move its
entries into ``.fusion/memory/MEMORY.md``. The dialog shows exactly what would change before
anything is written; applying keeps both old versions in history, so it can be undone from there.
"""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from core.project.migrate import MigrationPlan


class MigrateDialog(QDialog):
    """Shows a :class:`~core.project.migrate.MigrationPlan` as a unified diff; accepted means "apply it"."""

    def __init__(self, plan: MigrationPlan, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Migrate legacy memory.md")
        self.resize(900, 600)
        self.setMinimumSize(560, 360)
        self.plan = plan
        intro = QLabel(
            f"Fusion no longer reads .fusion/memory.md in this project. Applying moves {plan.moved} line(s) "
            f"into {plan.target} under the matching sections (Architecture goes under Decisions) and removes "
            "the legacy file. Both old versions stay in History.", self)
        intro.setWordWrap(True)
        self.diff = QPlainTextEdit(self)
        self.diff.setReadOnly(True)
        self.diff.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.diff.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.diff.setPlainText(plan.diff or "The legacy file adds nothing to MEMORY.md.")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, parent=self)
        self.apply_button = self.buttons.addButton("Apply migration", QDialogButtonBox.ButtonRole.AcceptRole)
        self.apply_button.setEnabled(plan.moved > 0)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.diff, 1)
        layout.addWidget(self.buttons)
