"""Thin Qt item models over plain core data: registered backends, the insights file, proposed insights,
and the base of every flat table of rows.

Each model only exposes its rows through roles; the data and every decision stay in ``core`` (or in
the view that owns the model).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QAbstractListModel,
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtGui import QFont, QGuiApplication, QPalette

from core.backends import BackendInfo
from core.insights import InsightSection, MemoryInsight
from gui.widgets.colors import colour

USER = Qt.ItemDataRole.UserRole
_ROOT = QModelIndex()
_Index = QModelIndex | QPersistentModelIndex


class RowTableModel(QAbstractTableModel):
    """A flat table of plain ``rows`` under the column titles ``HEADERS``; a subclass gives ``data``."""

    HEADERS: tuple[str, ...] = ()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[Any] = []

    def set_rows(self, rows: Sequence[Any]) -> None:
        """Replace the rows."""
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def rowCount(self, parent: _Index = _ROOT) -> int:  # noqa: N802 (Qt override)
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: _Index = _ROOT) -> int:  # noqa: N802 (Qt override)
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802 (Qt override)
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.HEADERS[section]
        return None


class BackendListModel(QAbstractListModel):
    """One row per registered backend; ``InfoRole`` gives its ``BackendInfo``."""

    InfoRole = USER + 1
    ActiveRole = USER + 2  # the backend the project is running on
    ConfiguredRole = USER + 3  # configured but not running (it fell back)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.infos: list[BackendInfo] = []
        self.active_id: str | None = None
        self.configured_id: str | None = None

    def set_backends(self, infos: Sequence[BackendInfo], active_id: str | None, configured_id: str | None) -> None:
        """Replace the rows."""
        self.beginResetModel()
        self.infos = list(infos)
        self.active_id, self.configured_id = active_id, configured_id
        self.endResetModel()

    def row_of(self, backend_id: str) -> int:
        """The row of ``backend_id``, -1 when it is not listed."""
        return next((i for i, info in enumerate(self.infos) if info.id == backend_id), -1)

    def rowCount(self, parent: QModelIndex = _ROOT) -> int:  # noqa: N802 (Qt override)
        return 0 if parent.isValid() else len(self.infos)

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.infos):
            return None
        info = self.infos[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return info.name
        if role == Qt.ItemDataRole.ToolTipRole:
            return info.description
        if role == self.InfoRole:
            return info
        if role == self.ActiveRole:
            return info.id == self.active_id
        if role == self.ConfiguredRole:
            return info.id == self.configured_id and info.id != self.active_id
        return None


class InsightTreeModel(QAbstractItemModel):
    """The insights file as a tree: one row per section (with its count), its bullets beneath.

    Columns: the insight's content and its source. A bullet that spans several lines is one row.
    """

    HEADERS = ("Insight", "Source")

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.sections: list[InsightSection] = []

    def set_sections(self, sections: Sequence[InsightSection]) -> None:
        """Replace the tree."""
        self.beginResetModel()
        self.sections = list(sections)
        self.endResetModel()

    def counts(self) -> dict[str, int]:
        """Bullets per section title (``Patterns`` → 4)."""
        return {section_title(s): len(s.bullets) for s in self.sections}

    def index(self, row: int, column: int, parent: QModelIndex = _ROOT) -> QModelIndex:
        if not self.hasIndex(row, column, parent):
            return QModelIndex()
        # Internal id: 0 for a section row, section number + 1 for a bullet row.
        return self.createIndex(row, column, parent.row() + 1 if parent.isValid() else 0)

    def parent(self, index: QModelIndex = _ROOT) -> QModelIndex:  # type: ignore[override]
        if not index.isValid() or index.internalId() == 0:
            return QModelIndex()
        return self.createIndex(int(index.internalId()) - 1, 0, 0)

    def rowCount(self, parent: QModelIndex = _ROOT) -> int:  # noqa: N802 (Qt override)
        if not parent.isValid():
            return len(self.sections)
        if parent.internalId() == 0 and parent.column() == 0:
            return len(self.sections[parent.row()].bullets)
        return 0

    def columnCount(self, parent: QModelIndex = _ROOT) -> int:  # noqa: N802 (Qt override)
        return len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802 (Qt override)
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.HEADERS[section]
        return None

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if index.internalId() == 0:
            section = self.sections[index.row()]
            if role == Qt.ItemDataRole.DisplayRole and index.column() == 0:
                return f"{section_title(section)} ({len(section.bullets)})"
            if role == Qt.ItemDataRole.FontRole:
                font = QFont()
                font.setBold(True)
                return font
            return None
        bullet = self.sections[int(index.internalId()) - 1].bullets[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            if index.column() == 0:
                return display_content(bullet.content)
            return bullet.source or ""
        if role == USER:
            return bullet
        return None


def section_title(section: InsightSection) -> str:
    """``## Patterns`` → ``Patterns``; the untitled leading block → ``(no section)``."""
    return section.heading.removeprefix("## ").strip() or "(no section)"


def display_content(content: str) -> str:
    """A bullet's content for display: continuation lines joined as markdown would (they wrap anew)."""
    return " ".join(line.strip() for line in content.splitlines() if line.strip())


@dataclass(frozen=True)
class ReviewItem:
    """A proposed insight under review: its number in the stored proposal and its stored ``status``
    (pending, accepted, rejected), whether the insights file already holds it, and the ``choice``
    the operator made but did not save yet (``""``, ``accepted`` or ``rejected``).
    """

    number: int
    insight: MemoryInsight
    status: str = "pending"
    duplicate: bool = False
    choice: str = ""

    @property
    def state(self) -> str:
        """``merged`` (accepted and saved), ``accepted`` / ``rejected`` (chosen or saved) or ``pending``."""
        if self.status == "accepted":
            return "merged"
        return self.choice or self.status

    @property
    def unsaved(self) -> bool:
        """True when the operator's choice differs from what is stored."""
        return bool(self.choice) and self.choice != self.status


class ProposalTableModel(RowTableModel):
    """Proposed insights: a check box (accept) per row, category, content, source and status."""

    HEADERS = ("Accept", "Category", "Insight", "Source", "Status")
    rows: list[ReviewItem]

    def set_choice(self, row: int, choice: str) -> bool:
        """Choose ``accepted``, ``rejected`` or ``""`` (undecided) for row ``row``; a merged row cannot change."""
        item = self.rows[row]
        if item.status == "accepted":
            return False
        self.rows[row] = replace(item, choice="" if choice == item.status else choice)
        self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.HEADERS) - 1))
        return True

    def chosen(self, choice: str) -> list[int]:
        """The numbers of the insights with an unsaved ``choice`` (``accepted`` or ``rejected``)."""
        return [i.number for i in self.rows if i.unsaved and i.choice == choice]

    def flags(self, index: QModelIndex) -> Qt.ItemFlag:
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.column() == 0 and self.rows[index.row()].state != "merged":
            base |= Qt.ItemFlag.ItemIsUserCheckable
        return base

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        item = self.rows[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.CheckStateRole and column == 0:
            return Qt.CheckState.Checked if item.state in ("accepted", "merged") else Qt.CheckState.Unchecked
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return self._text(item, column)
        if role == Qt.ItemDataRole.FontRole and (item.state == "rejected" or item.unsaved):
            font = QFont()
            font.setStrikeOut(item.state == "rejected")
            font.setItalic(item.unsaved and column == 4)
            return font
        if role == Qt.ItemDataRole.ForegroundRole:
            if item.state == "merged" or item.status == "rejected":
                return QGuiApplication.palette().color(QPalette.ColorRole.PlaceholderText)
            if item.duplicate and column == 4:
                return colour("warning-fg")
        if role == USER:
            return item
        return None

    @staticmethod
    def _text(item: ReviewItem, column: int) -> str:
        insight = item.insight
        if column == 1:
            return insight.category.capitalize()
        if column == 2:
            return insight.content
        if column == 3:
            return insight.source or ""
        if column == 4:
            return review_status(item)
        return ""

    def setData(self, index: QModelIndex, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:  # noqa: N802
        if role != Qt.ItemDataRole.CheckStateRole or index.column() != 0:
            return False
        checked = Qt.CheckState(value) == Qt.CheckState.Checked if not isinstance(value, bool) else value
        return self.set_choice(index.row(), "accepted" if checked else "")


_STATE_TEXT = {"merged": "merged", "pending": "new"}


def review_status(item: ReviewItem) -> str:
    """What the status column says: ``new``, ``to merge``, ``to reject``, ``merged`` or ``rejected``,
    after ``already present`` when the insights file holds it already."""
    if item.unsaved:
        state = "to merge" if item.choice == "accepted" else "to reject"
    else:
        state = _STATE_TEXT.get(item.state, item.state)
    if item.duplicate and item.state != "merged":
        return "already present" if state == "new" else f"already present, {state}"
    return state
