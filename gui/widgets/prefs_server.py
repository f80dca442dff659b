"""Preferences ▸ Local server: start and stop ``memdesk serve`` for the open project, and the MCP config
block an agent host needs, ready to copy (:mod:`gui.local_server`)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QButtonGroup,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from gui.local_server import DEFAULT_PORT, HOST, LocalServer, mcp_config
from gui.widgets.prefs_connections import _status


class ServerPage(QWidget):
    """Port, Start/Stop, state, and the MCP config block (stdio, or HTTP to the running server)."""

    def __init__(self, server: LocalServer, project: Path | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("serverPage")
        self.server, self.project = server, project
        #: The token created in this dialog, put in the HTTP block (it is never readable again).
        self.token: str | None = None
        intro = QLabel("Serve this project's memory to agents on this machine: the HTTP API and MCP at /mcp, "
                       f"on {HOST} only, with your API tokens. It stops when the project closes.", self)
        intro.setWordWrap(True)
        self.port = QSpinBox(self)
        self.port.setObjectName("serverPort")
        self.port.setRange(0, 65535)
        self.port.setValue(server.port or DEFAULT_PORT)
        self.port.setToolTip("0 picks a free port")
        self.start_button = QPushButton("&Start", self)
        self.stop_button = QPushButton("St&op", self)
        self.state = QLabel("", self)
        self.state.setObjectName("serverState")
        self.state.setWordWrap(True)
        self.state.setTextFormat(Qt.TextFormat.PlainText)
        self.state.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.stdio = QRadioButton("The host &starts memdesk (stdio, no token)", self)
        self.http = QRadioButton("The host connects to this &running server (HTTP, a token)", self)
        self.stdio.setChecked(True)
        group = QButtonGroup(self)
        group.addButton(self.stdio)
        group.addButton(self.http)
        self.block = QPlainTextEdit(self)
        self.block.setObjectName("mcpConfig")
        self.block.setReadOnly(True)
        self.block.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.copy_button = QPushButton("&Copy MCP config", self)
        row = QHBoxLayout()
        row.addWidget(QLabel("&Port:", self))
        row.itemAt(0).widget().setBuddy(self.port)
        row.addWidget(self.port)
        row.addWidget(self.start_button)
        row.addWidget(self.stop_button)
        row.addStretch(1)
        copy_row = QHBoxLayout()
        copy_row.addStretch(1)
        copy_row.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(row)
        layout.addWidget(self.state)
        layout.addWidget(QLabel("MCP config for an agent host (Claude Desktop, Cursor, Codex…):", self))
        layout.addWidget(self.stdio)
        layout.addWidget(self.http)
        layout.addWidget(self.block, 1)
        layout.addLayout(copy_row)
        for button in self.findChildren(QPushButton):  # Enter in a field acts on that field, not a button
            button.setAutoDefault(False)
        self.start_button.clicked.connect(self.start)
        self.stop_button.clicked.connect(self.stop)
        self.stdio.toggled.connect(lambda _on: self.show_state())
        self.copy_button.clicked.connect(self.copy)
        server.stateChanged.connect(self.show_state)
        self.show_state()

    def start(self) -> bool:
        """Start serving the open project on the chosen port."""
        if self.project is None:
            _status(self.state, "Open a project first: the server serves the open project.", "error")
            return False
        ok = self.server.start(self.project, self.port.value())
        if ok:
            self.http.setChecked(True)
        return ok

    def stop(self) -> None:
        """Stop serving."""
        self.server.stop()

    def set_token(self, _name: str, token: str) -> None:
        """A token was just created: the HTTP block carries it (copy it now)."""
        self.token = token
        self.show_state()

    def show_state(self) -> None:
        """Say whether it serves, where, and show the config block for the chosen way."""
        running = self.server.running
        self.start_button.setEnabled(not running and self.project is not None)
        self.stop_button.setEnabled(running)
        self.port.setEnabled(not running)
        if running:
            _status(self.state, f"Serving {self.server.root} on {self.server.url} (API docs {self.server.url}/docs, "
                                f"MCP {self.server.url}/mcp)", "info")
        elif self.server.error:
            _status(self.state, f"Not serving: {self.server.error}", "error")
        else:
            _status(self.state, "Not serving.", "info")
        if self.project is None:
            self.block.setPlainText("Open a project first.")
            return
        if self.stdio.isChecked():
            self.block.setPlainText(mcp_config(self.project, "stdio"))
        else:
            self.block.setPlainText(mcp_config(self.project, "http", self.server.url, self.token))

    def copy(self) -> str:
        """Put the config block on the clipboard and return it."""
        text = self.block.toPlainText()
        QGuiApplication.clipboard().setText(text)
        _status(self.state, "Copied the MCP config: paste it into the host's MCP settings.", "info")
        return text
