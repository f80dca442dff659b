"""Prune review view (placeholder until its real implementation lands)."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from gui.session import ProjectSession


class PruneView(QWidget):
    """Prune review of the open project."""

    def __init__(self, session: ProjectSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Prune review"))

    def refresh(self) -> None:
        """Reload what the view shows from the session."""
