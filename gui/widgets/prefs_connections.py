"""Preferences ▸ Connections: the user's named PostgreSQL connections (:mod:`core.settings.connections`).

A list (name and DSN with the password masked), and a form to add or replace one: name and DSN. Save
validates first (a bad name or DSN is said in one line and nothing is written); Test connects and
says the server and schema versions; Remove asks first. Without the ``postgres`` extra the page says
what to install.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
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

from core.settings import connections
from gui.serial_worker import SerialWorker

NO_PSYCOPG = ("PostgreSQL connections need the 'postgres' extra (psycopg); install it with "
              "pip install 'memdesk[postgres]' (./run.sh installs it).")


def _status(label: QLabel, text: str, level: str) -> None:
    label.setText(text)
    label.setProperty("level", level)
    label.style().unpolish(label)
    label.style().polish(label)


class ConnectionsPage(QWidget):
    """List, add, replace, test and remove named connections."""

    def __init__(self, confirm: Callable[[str], bool], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("connectionsPage")
        self._confirm = confirm
        intro = QLabel("Named PostgreSQL connections, kept in your user folder (never in a project); a "
                       "project's postgres backend names one. Passwords are never shown.", self)
        intro.setWordWrap(True)
        self.table = QTableWidget(0, 2, self)
        self.table.setObjectName("connectionsTable")
        self.table.setHorizontalHeaderLabels(["Name", "Connection (password masked)"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.name = QLineEdit(self)
        self.name.setObjectName("connectionName")
        self.name.setPlaceholderText("team")
        self.dsn = QLineEdit(self)
        self.dsn.setObjectName("connectionDsn")
        self.dsn.setPlaceholderText("postgresql://user:password@host:5432/dbname")
        self._worker = SerialWorker(self)  # connection tests run here, one at a time, off the GUI thread
        self.save_button = QPushButton("&Save connection", self)
        self.test_button = QPushButton("&Test", self)
        self.remove_button = QPushButton("&Remove…", self)
        self.status = QLabel("", self)
        self.status.setObjectName("connectionsStatus")
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        form = QFormLayout()
        form.addRow("&Name:", self.name)
        form.addRow("&DSN:", self.dsn)
        row = QHBoxLayout()
        row.addWidget(self.save_button)
        row.addStretch(1)
        row.addWidget(self.test_button)
        row.addWidget(self.remove_button)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.table, 1)
        layout.addLayout(form)
        layout.addLayout(row)
        layout.addWidget(self.status)
        for button in self.findChildren(QPushButton):  # Enter in a field acts on that field, not a button
            button.setAutoDefault(False)
        self.save_button.clicked.connect(self.save)
        self.test_button.clicked.connect(self.test)
        self.remove_button.clicked.connect(self.remove)
        self.dsn.returnPressed.connect(self.save)
        self.table.itemSelectionChanged.connect(self._on_selected)
        self.refresh()

    def refresh(self) -> None:
        """Read the connections again."""
        try:
            conns = self._worker.call(connections.list_connections, "")  # the user config file, off the GUI thread
        except Exception as exc:
            _status(self.status, f"Cannot read {connections.connections_path()}: {exc}", "error")
            conns = []
        self.table.setRowCount(len(conns))
        for row, conn in enumerate(conns):
            self.table.setItem(row, 0, QTableWidgetItem(conn.name))
            try:
                shown = conn.redacted
            except ModuleNotFoundError:
                shown = "(install the postgres extra to show it)"
            self.table.setItem(row, 1, QTableWidgetItem(shown))
        has = bool(conns)
        self.test_button.setEnabled(has)
        self.remove_button.setEnabled(has)

    def names(self) -> list[str]:
        """The names listed (tests)."""
        return [self.table.item(r, 0).text() for r in range(self.table.rowCount())]

    def _selected(self) -> str | None:
        row = self.table.currentRow()
        return self.table.item(row, 0).text() if row >= 0 and self.table.item(row, 0) else None

    def _on_selected(self) -> None:
        name = self._selected()
        if name is not None:
            self.name.setText(name)
            self.dsn.clear()  # the stored DSN (with its password) is never put back on screen

    def save(self) -> bool:
        """Add or replace the connection in the form; nothing is written when it is bad."""
        name, dsn = self.name.text().strip(), self.dsn.text().strip()
        try:
            conn = self._worker.call(lambda: connections.set_connection(name, dsn), "")  # the user config file
        except ModuleNotFoundError:
            _status(self.status, NO_PSYCOPG, "error")
            return False
        except Exception as exc:
            _status(self.status, f"Not saved: {exc}", "error")
            return False
        self.dsn.clear()
        self.refresh()
        _status(self.status, f"Saved {conn.name}: {conn.redacted}", "info")
        return True

    def test(self) -> bool:
        """Connect with the selected (or named) connection and say what answered."""
        name = self._selected() or self.name.text().strip()
        if not name:
            _status(self.status, "Choose a connection to test.", "warning")
            return False
        _status(self.status, f"Testing {name}…", "info")
        try:  # a connect waits for the network (up to its timeout): on a worker, the window painting meanwhile
            result = self._worker.call(lambda: connections.test_connection(name), "",
                                       disable=(self.test_button, self.save_button, self.remove_button))
        except ModuleNotFoundError:
            _status(self.status, NO_PSYCOPG, "error")
            return False
        except Exception as exc:
            _status(self.status, str(exc), "error")
            return False
        _status(self.status, result.message, "info" if result.ok else "error")
        return result.ok

    def remove(self) -> bool:
        """Remove the selected connection (asked first)."""
        name = self._selected()
        if name is None:
            _status(self.status, "Choose a connection to remove.", "warning")
            return False
        if not self._confirm(f"Remove the connection {name!r}? Projects that name it will not reach their "
                             "database until it is added again."):
            return False
        try:
            self._worker.call(lambda: connections.remove_connection(name), "")
        except Exception as exc:
            _status(self.status, f"Not removed: {exc}", "error")
            return False
        self.refresh()
        _status(self.status, f"Removed {name}", "info")
        return True
