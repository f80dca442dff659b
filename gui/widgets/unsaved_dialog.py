"""The unsaved-documents dialog: every document with unsaved edits, then Save All, Discard All or Cancel.

Asked before anything would drop the editor's documents: quitting (Ctrl+Q, the window's close
button), opening another project, switching the memory backend. It lists *every* unsaved document,
not only the one shown, so an edit left in a document switched away from is never lost without the
operator having seen its name. The answer is one of :data:`Choice`; closing the dialog (Esc, the
title bar) is Cancel, and Cancel is what nothing else happened means.
"""

from __future__ import annotations

from typing import Literal

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QListWidget, QVBoxLayout, QWidget

Choice = Literal["save", "discard", "cancel"]


class UnsavedDialog(QDialog):
    """Lists ``paths`` (project-relative) and asks what to do with their edits before ``action``."""

    def __init__(self, paths: list[str], action: str = "closing", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("unsavedDialog")
        self.setWindowTitle("Unsaved memory")
        self.setModal(True)
        self.choice: Choice = "cancel"
        count = len(paths)
        what = "1 document has" if count == 1 else f"{count} documents have"
        self.intro = QLabel(f"{what} unsaved edits. Save them before {action}?", self)
        self.intro.setWordWrap(True)
        self.list = QListWidget(self)
        self.list.setObjectName("unsavedList")
        self.list.addItems(paths)
        self.list.setMaximumHeight(max(60, min(count, 8) * 24 + 8))
        self.buttons = QDialogButtonBox(self)
        box = QDialogButtonBox.ButtonRole
        self.save_button = self.buttons.addButton("&Save All", box.AcceptRole)
        self.discard_button = self.buttons.addButton("&Discard All", box.DestructiveRole)
        self.cancel_button = self.buttons.addButton("Cancel", box.RejectRole)
        self.save_button.setDefault(True)
        self.save_button.clicked.connect(lambda: self._answer("save"))
        self.discard_button.clicked.connect(lambda: self._answer("discard"))
        self.cancel_button.clicked.connect(lambda: self._answer("cancel"))
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addWidget(self.list)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(420)

    def paths(self) -> list[str]:
        """The documents listed."""
        return [self.list.item(i).text() for i in range(self.list.count())]

    def _answer(self, choice: Choice) -> None:
        self.choice = choice
        if choice == "cancel":
            self.reject()
        else:
            self.accept()

    def ask(self) -> Choice:
        """Show the dialog modally and return the answer ("cancel" when it was closed)."""
        self.choice = "cancel"
        self.exec()
        return self.choice
