"""Help ▸ About memdesk: the version, the Python and Qt it runs on, the open project, and the docs."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt, qVersion
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

#: The documents Help links to, by title (paths inside the repository).
DOCS = (("memdesk guide (README)", "README.md"), ("Agents: HTTP API and MCP", "docs/servers.md"),
        ("Team memory on PostgreSQL", "docs/postgres.md"), ("What an agent loads (budget)", "docs/budget.md"))


def docs_root() -> Path:
    """The folder holding README.md and docs/ (the repository checkout memdesk runs from)."""
    return Path(__file__).resolve().parents[2]


def doc_path(relpath: str) -> Path | None:
    """The local file of a document in :data:`DOCS`, or ``None`` when it is not there (an installed wheel)."""
    path = docs_root() / relpath
    return path if path.is_file() else None


def about_text(project: Path | None) -> str:
    """The About text (plain)."""
    from core.version import (
        memdesk_version,  # here, not at the top: the window's menus import DOCS at start-up
    )

    lines = [f"memdesk {memdesk_version()}",
             "A desktop editor and settings manager for the memory of AI coding agents, compatible with Fusion.",
             "",
             f"Python {platform.python_version()} · Qt {qVersion()} · PySide6 {pyside_version} · {sys.platform}"]
    if project is not None:
        lines.append(f"Project: {project}")
    return "\n".join(lines)


class AboutDialog(QDialog):
    """Name, version, runtime, project, and the documents (links open them)."""

    def __init__(self, project: Path | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("aboutDialog")
        self.setWindowTitle("About memdesk")
        self.text = QLabel(about_text(project), self)
        self.text.setObjectName("aboutText")
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        links = []
        for title, rel in DOCS:
            path = doc_path(rel)
            if path is not None:
                links.append(f'<a href="{path.as_uri()}">{title}</a>')
        self.links = QLabel("Documentation: " + " · ".join(links) if links else "", self)
        self.links.setObjectName("aboutLinks")
        self.links.setTextFormat(Qt.TextFormat.RichText)
        self.links.setOpenExternalLinks(True)
        self.links.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(self.links)
        layout.addStretch(1)
        layout.addWidget(buttons)
        self.resize(520, 220)
