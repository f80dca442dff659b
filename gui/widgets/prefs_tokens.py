"""Preferences ▸ API tokens: the tokens agents use with the local server (:mod:`core.server.tokens`).

Create asks for a name (who will use it) and shows the token once, with Copy; memdesk keeps only its
hash, so it cannot be shown again. The list gives each token's name, creation time and first
characters; Revoke (asked first) takes effect on a running server at its next request.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.server.tokens import TokenStore
from gui.serial_worker import SerialWorker
from gui.widgets.prefs_connections import _status


class TokensPage(QWidget):
    """Create (shown once), list and revoke API tokens."""

    created = Signal(str, str)  # name, token: the one time it exists in clear

    def __init__(self, confirm: Callable[[str], bool], parent: QWidget | None = None,
                 store: TokenStore | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("tokensPage")
        self._confirm = confirm
        self.store = store or TokenStore()
        intro = QLabel("Agents and scripts use a token with the local server (HTTP and MCP). Each write "
                       "records the token's name as its author. A token is shown only when it is created.", self)
        intro.setWordWrap(True)
        self.table = QTableWidget(0, 3, self)
        self.table.setObjectName("tokensTable")
        self.table.setHorizontalHeaderLabels(["Name", "Created", "Starts with"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.name = QLineEdit(self)
        self.name.setObjectName("tokenName")
        self.name.setPlaceholderText("who will use it: claude-desktop, ci-bot…")
        self._worker = SerialWorker(self)  # the tokens file is written here, off the GUI thread
        self.create_button = QPushButton("&Create token", self)
        self.revoke_button = QPushButton("Re&voke…", self)
        self.secret = QLineEdit(self)
        self.secret.setObjectName("tokenSecret")
        self.secret.setReadOnly(True)
        self.secret.setVisible(False)
        self.copy_button = QPushButton("Cop&y", self)
        self.copy_button.setVisible(False)
        self.status = QLabel("", self)
        self.status.setObjectName("tokensStatus")
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        create_row = QHBoxLayout()
        create_row.addWidget(QLabel("&Name:", self))
        create_row.itemAt(0).widget().setBuddy(self.name)
        create_row.addWidget(self.name, 1)
        create_row.addWidget(self.create_button)
        secret_row = QHBoxLayout()
        secret_row.addWidget(self.secret, 1)
        secret_row.addWidget(self.copy_button)
        bottom = QHBoxLayout()
        bottom.addStretch(1)
        bottom.addWidget(self.revoke_button)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.table, 1)
        layout.addLayout(bottom)
        layout.addLayout(create_row)
        layout.addLayout(secret_row)
        layout.addWidget(self.status)
        for button in self.findChildren(QPushButton):  # Enter in a field acts on that field, not a button
            button.setAutoDefault(False)
        self.create_button.clicked.connect(self.create)
        self.name.returnPressed.connect(self.create)
        self.revoke_button.clicked.connect(self.revoke)
        self.copy_button.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.secret.text()))
        self.refresh()

    def refresh(self) -> None:
        """Read the tokens again."""
        try:
            tokens = self._worker.call(self.store.list, "")  # the tokens file, off the GUI thread
        except Exception as exc:
            _status(self.status, f"Cannot read the tokens: {exc}", "error")
            tokens = []
        self.table.setRowCount(len(tokens))
        for row, token in enumerate(tokens):
            for column, value in enumerate((token.name, token.created_at, f"{token.prefix}…")):
                self.table.setItem(row, column, QTableWidgetItem(value))
        self.revoke_button.setEnabled(bool(tokens))

    def names(self) -> list[str]:
        """The names listed (tests)."""
        return [self.table.item(r, 0).text() for r in range(self.table.rowCount())]

    def create(self) -> str | None:
        """Create a token named as typed and show it once; ``None`` (and why) when the name is refused."""
        name = self.name.text().strip()
        try:
            token = self._worker.call(lambda: self.store.create(name), "")  # the tokens file, off the GUI thread
        except Exception as exc:
            _status(self.status, f"Not created: {exc}", "error")
            return None
        self.secret.setText(token)
        self.secret.setVisible(True)
        self.copy_button.setVisible(True)
        self.secret.setFocus()
        self.secret.selectAll()
        self.name.clear()
        self.refresh()
        _status(self.status, f"Token {name!r} created. Copy it now: it is shown only this once "
                             "(memdesk keeps only its hash).", "warning")
        self.created.emit(name, token)
        return token

    def revoke(self) -> bool:
        """Revoke the selected token (asked first)."""
        row = self.table.currentRow()
        if row < 0:
            _status(self.status, "Choose a token to revoke.", "warning")
            return False
        name = self.table.item(row, 0).text()
        if not self._confirm(f"Revoke the token {name!r}? Whoever uses it is refused from their next request."):
            return False
        try:
            self._worker.call(lambda: self.store.revoke(name), "")
        except Exception as exc:
            _status(self.status, f"Not revoked: {exc}", "error")
            return False
        self.secret.clear()
        self.secret.setVisible(False)
        self.copy_button.setVisible(False)
        self.refresh()
        _status(self.status, f"Revoked {name}", "info")
        return True
