"""Settings ▸ Connect to Fusion…: give a running Fusion's URL and token once (kept in the user config).

The same as ``memdesk fusion connect``: memdesk checks, off the GUI thread, that the Fusion answers for
this project (its ``GET /api/projects`` and ``GET /api/settings`` with the token) before keeping anything;
a refusal or no answer is one line in the dialog and nothing is kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from gui.tasks import run_in_background


class FusionConnectDialog(QDialog):
    """URL and token of a running Fusion; Connect checks them, then keeps them for this project."""

    connected = Signal(str)  # the URL kept

    def __init__(self, root: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.root = root
        self.setWindowTitle("Connect to Fusion")
        self.url = QLineEdit(self)
        self.url.setPlaceholderText("http://127.0.0.1:4040")
        self.token = QLineEdit(self)
        self.token.setEchoMode(QLineEdit.EchoMode.Password)
        self.token.setPlaceholderText("Fusion's daemon token")
        self.message = QLabel("Fusion's URL and daemon token are kept in your user config, never in the project.",
                              self)
        self.message.setWordWrap(True)
        form = QFormLayout()
        form.addRow("URL", self.url)
        form.addRow("Token", self.token)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.connect_button = self.buttons.addButton("Connect", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self.try_connect)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.message)
        layout.addWidget(self.buttons)
        self._op: Any = None

    def try_connect(self) -> None:
        """Check the URL and token against the running Fusion (off the GUI thread), then keep them."""
        url, token, root = self.url.text().strip(), self.token.text().strip() or None, self.root
        self.connect_button.setEnabled(False)
        self.message.setText("Connecting…")

        def work(_token: object) -> str:
            from core.errors import SettingsError
            from core.settings.store.connections import FusionConnection, check_url, save_connection
            from core.settings.store.detect import probe

            checked = check_url(url)
            store, reason = probe(root, FusionConnection(checked, token))
            if store is None:
                raise SettingsError(f"not connected: {reason}")
            save_connection(root, checked, token, store.client.conn.project_id)  # type: ignore[attr-defined]
            return checked

        self._op = run_in_background(work, on_done=self._done, on_error=self._failed, parent=self)

    def _done(self, url: str) -> None:
        self.message.setText(f"Connected to Fusion at {url}.")
        self.connected.emit(url)
        self.accept()

    def _failed(self, exc: BaseException) -> None:
        self.connect_button.setEnabled(True)
        self.message.setText(" ".join(str(exc).split()))
