"""File ▸ New document… (Ctrl+N): create a daily note, an agent's memory or ``DREAMS.md`` from the app.

The operator picks what (a daily note, long-term ``MEMORY.md`` or ``DREAMS.md``), for whom (the
project, an agent listed, or a new agent id typed in) and, for a daily note, the day (today in UTC
by default, so Ctrl+N then Enter makes today's note). The path it will have is shown as it is typed,
with whether it exists already. Create writes nothing but the scaffold Fusion gives that file (the
project's or the agent's), through :meth:`core.project.Project.create_document`, which never
overwrites; an existing document is simply opened. A bad agent id is said under the field and
nothing is written. The seed layout has only ``.fusion/memory.md``: the dialog says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Literal

from PySide6.QtCore import QDate, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDateEdit,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from core.documents.layout import AGENT_DIR, DREAMS_NAME, Layout
from core.errors import MemoryBackendError

Kind = Literal["daily", "memory", "dreams"]
KINDS: tuple[tuple[Kind, str], ...] = (("daily", "Daily note"), ("memory", "Long-term memory (MEMORY.md)"),
                                       ("dreams", "Dreams (DREAMS.md)"))
PROJECT = "The project (shared by every agent)"
NEW_DOCUMENT_KEYS = "Ctrl+N"


@dataclass(frozen=True)
class Target:
    """The document the choices name: its path, or why there is none."""

    path: str | None
    error: str | None = None


def target_path(layout: Layout, kind: Kind, agent: str | None, day: date) -> Target:
    """The project-relative path of the chosen document (``agent`` None: the project's own)."""
    if not layout.layered:
        return Target(None, "This project is in the seed layout: its one memory document is .fusion/memory.md. "
                            "Daily notes, dreams and agents' memory belong to the layered layout (.fusion/memory/).")
    if agent is not None and not agent.strip():
        return Target(None, "Type the agent's id (letters, digits, '.', '_' or '-').")
    try:
        if kind == "daily":
            return Target(layout.daily_path(day, agent))
        if kind == "memory":
            return Target(layout.long_term_path(agent))
        if agent is None:
            return Target(layout.dreams_path)
        return Target(f"{layout.long_term_path(agent).rsplit('/', 1)[0]}/{DREAMS_NAME}")
    except MemoryBackendError as exc:
        return Target(None, exc.message)


class NewDocumentDialog(QDialog):
    """What to create; :attr:`target` is the chosen path (``exists(path)`` says whether it is there)."""

    def __init__(self, layout: Layout, agents: list[str], exists: Callable[[str], bool], parent: QWidget | None = None,
                 today: date | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("newDocumentDialog")
        self.setWindowTitle("New document — memdesk")
        self._layout, self._exists = layout, exists
        self.kind = QComboBox(self)
        for key, label in KINDS:
            self.kind.addItem(label, key)
        self.owner = QComboBox(self)
        self.owner.setEditable(True)
        self.owner.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.owner.addItem(PROJECT)
        for agent in agents:
            self.owner.addItem(agent)
        self.owner.lineEdit().setPlaceholderText("an agent's id, e.g. reviewer")
        self.owner.setToolTip("The project, an agent listed, or type a new agent's id")
        self.day = QDateEdit(self)
        self.day.setCalendarPopup(True)
        self.day.setDisplayFormat("yyyy-MM-dd")
        today = today or datetime.now(UTC).date()
        self.day.setDate(QDate(today.year, today.month, today.day))
        self.path_label = QLabel(self)
        self.path_label.setObjectName("newDocumentPath")
        self.path_label.setTextFormat(Qt.TextFormat.PlainText)
        self.path_label.setWordWrap(True)
        self.path_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel,
                                        self)
        self.create_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("&What:", self.kind)
        form.addRow("&For:", self.owner)
        self.day_label = QLabel("&Day:", self)
        self.day_label.setBuddy(self.day)
        form.addRow(self.day_label, self.day)
        layout_box = QVBoxLayout(self)
        layout_box.addLayout(form)
        layout_box.addWidget(self.path_label)
        layout_box.addStretch(1)
        layout_box.addWidget(self.buttons)
        self.kind.currentIndexChanged.connect(self._update)
        self.owner.editTextChanged.connect(self._update)
        self.day.dateChanged.connect(self._update)
        self.target = Target(None)
        self._update()
        self.resize(520, 240)

    def agent(self) -> str | None:
        """The chosen agent's id as typed (``None``: the project)."""
        text = self.owner.currentText()
        return None if text == PROJECT else text.strip()

    def _update(self, *_args: object) -> None:
        kind: Kind = self.kind.currentData()
        self.day.setVisible(kind == "daily")
        self.day_label.setVisible(kind == "daily")
        picked = self.day.date()
        self.target = target_path(self._layout, kind, self.agent(), date(picked.year(), picked.month(), picked.day()))
        if self.target.path is None:
            self.path_label.setText(self.target.error or "")
            self.path_label.setProperty("level", "error")
            self.create_button.setText("Create")
            self.create_button.setEnabled(False)
        else:
            there = self._exists(self.target.path)
            whose = "an agent's" if self.target.path.startswith(f"{AGENT_DIR}/") else "the project's"
            self.path_label.setText(f"{self.target.path}\n" + (
                "It exists already: Open shows it." if there else
                f"New: created with Fusion's scaffold for {whose} file; nothing else is written."))
            self.path_label.setProperty("level", "info")
            self.create_button.setText("Open" if there else "Create")
            self.create_button.setEnabled(True)
        self.path_label.style().unpolish(self.path_label)
        self.path_label.style().polish(self.path_label)

    def _accept(self) -> None:
        if self.target.path is not None:
            self.accept()
