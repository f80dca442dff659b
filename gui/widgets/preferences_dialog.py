"""Edit ▸ Preferences… (Ctrl+,): what was CLI-only — PostgreSQL connections, API tokens, the local server.

Three pages (:mod:`gui.widgets.prefs_connections`, :mod:`gui.widgets.prefs_tokens`,
:mod:`gui.widgets.prefs_server`); every change is written as the CLI writes it, at once, so the
dialog has only Close. Destructive actions (remove a connection, revoke a token) ask first.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QMessageBox, QTabWidget, QVBoxLayout, QWidget

from gui.local_server import LocalServer
from gui.widgets.prefs_connections import ConnectionsPage
from gui.widgets.prefs_server import ServerPage
from gui.widgets.prefs_tokens import TokensPage

PREFERENCES_KEYS = "Ctrl+,"


class PreferencesDialog(QDialog):
    """The three pages; ``confirm(text)`` asks before a destructive action (tests replace it)."""

    def __init__(self, server: LocalServer, project: Path | None, parent: QWidget | None = None,
                 confirm: Callable[[str], bool] | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("preferencesDialog")
        self.setWindowTitle("Preferences — memdesk")
        self.confirm = confirm or self._ask
        ask = lambda text: self.confirm(text)  # noqa: E731  (late-bound: tests swap confirm after building)
        self.tabs = QTabWidget(self)
        self.connections = ConnectionsPage(ask, self)
        self.tokens = TokensPage(ask, self)
        self.server = ServerPage(server, project, self)
        self.tabs.addTab(self.connections, "&Connections")
        self.tabs.addTab(self.tokens, "API &tokens")
        self.tabs.addTab(self.server, "Local &server")
        self.tokens.created.connect(self.server.set_token)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        buttons.button(QDialogButtonBox.StandardButton.Close).setAutoDefault(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(buttons)
        self.resize(640, 520)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Enter acts in the field it was pressed in (save, create), never as Close; Esc closes."""
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            event.accept()
            return
        super().keyPressEvent(event)

    def _ask(self, text: str) -> bool:
        buttons = QMessageBox.StandardButton
        return QMessageBox.question(self, "memdesk", text, buttons.Yes | buttons.Cancel,
                                    buttons.Cancel) == buttons.Yes
