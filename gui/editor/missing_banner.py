"""The strip shown when the current document does not exist yet, with a button that creates it.

Opening a folder creates nothing; the operator decides here whether memory should be created,
and the button says exactly which file (with its layout's scaffold) will appear.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget


class MissingDocumentBanner(QFrame):
    """"No memory here yet" and a Create button; emits :attr:`createRequested` when clicked."""

    createRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.setProperty("level", "info")
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.button = QPushButton("Create", self)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.button)
        self.button.clicked.connect(self.createRequested)
        self.setVisible(False)

    def show_for(self, relpath: str, can_create: bool) -> None:
        """Say that ``relpath`` does not exist; offer to create it when it can be written."""
        self.label.setText(f"{relpath} does not exist yet. Nothing has been created in this folder."
                           + ("" if can_create else " It cannot be created here: the memory is read-only."))
        self.button.setText(f"Create {relpath.rsplit('/', 1)[-1]}")
        self.button.setVisible(can_create)
        self.setVisible(True)

    def text(self) -> str:
        """The message shown ("" when hidden)."""
        return self.label.text() if not self.isHidden() else ""
