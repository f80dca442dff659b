"""The strip shown while a project's team binding waits for the operator's confirmation (issue 19, item 3).

A project's settings may name a team connection and project key; memdesk opens it read-only, reading
nothing from the team's database, until the operator confirms that binding once for this folder
(:mod:`core.settings.bindings`). The strip says which connection and key, and its button confirms.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget


class BindingBanner(QFrame):
    """The reason the memory is read-only and a Confirm button; emits :attr:`confirmRequested` when clicked."""

    confirmRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.setProperty("level", "warning")
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.button = QPushButton("Confirm binding", self)
        self.button.setToolTip("Bind this folder to the team connection and project key its settings name "
                               "(kept in your user config, for this folder only)")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.button)
        self.button.clicked.connect(self.confirmRequested)
        self.setVisible(False)

    def show_reason(self, reason: str | None) -> None:
        """Show ``reason`` with the button, or hide the strip when there is none."""
        if not reason:
            self.label.clear()
            self.setVisible(False)
            return
        self.label.setText(reason[:1].upper() + reason[1:] + ".")
        self.setVisible(True)

    def text(self) -> str:
        """The message shown ("" when hidden)."""
        return self.label.text() if not self.isHidden() else ""
