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
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QFont

from core.backends import BackendInfo
from core.insights import CATEGORY_SECTIONS, INSIGHT_CATEGORIES, InsightSection, MemoryInsight
from gui.proposal_text import inline_html

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
    (pending, accepted, rejected), whether the insights file already holds it, the ``choice``
    the operator made but did not save yet (``""``, ``accepted`` or ``rejected``), and the line of the
    memory it came from.
    """

    number: int
    insight: MemoryInsight
    status: str = "pending"
    duplicate: bool = False
    choice: str = ""
    source_line: int | None = None  # the line of the memory it came from, when found

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


class ProposalReviewModel(QAbstractItemModel):
    """Proposed insights grouped by category: a row per category (with its counts), its insights beneath.

    ``rows`` keeps the insights flat, in the proposal's order; ``set_choice(row, …)`` takes a flat row.
    """

    ItemRole = USER + 1  # the ReviewItem of an insight row (None on a category row)
    CategoryRole = USER + 2  # the category of either kind of row
    HtmlRole = USER + 3  # the insight's content as safe inline HTML
    TotalRole = USER + 4  # how many insights a category row holds

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[ReviewItem] = []
        self.groups: list[tuple[str, list[int]]] = []  # (category, flat rows)
        self._html: dict[int, str] = {}

    def set_rows(self, rows: Sequence[ReviewItem]) -> None:
        """Replace the insights."""
        self.beginResetModel()
        self.rows = list(rows)
        order = {c: n for n, c in enumerate(INSIGHT_CATEGORIES)}
        by_category: dict[str, list[int]] = {}
        for row, item in enumerate(self.rows):
            by_category.setdefault(item.insight.category, []).append(row)
        self.groups = sorted(by_category.items(), key=lambda g: (order.get(g[0], len(order)), g[0]))
        self._html = {}
        self.endResetModel()

    # -- flat rows -----------------------------------------------------------------------------
    def item_index(self, row: int) -> QModelIndex:
        """The index of flat row ``row``."""
        for number, (_category, members) in enumerate(self.groups):
            if row in members:
                return self.index(members.index(row), 0, self.index(number, 0))
        return QModelIndex()

    def flat_row(self, index: _Index) -> int | None:
        """The flat row of an insight index (``None`` for a category row)."""
        if not index.isValid() or index.internalId() == 0:
            return None
        return self.groups[int(index.internalId()) - 1][1][index.row()]

    def category_rows(self, category: str) -> list[int]:
        """The flat rows of ``category``."""
        return next((members for name, members in self.groups if name == category), [])

    def set_choice(self, row: int, choice: str) -> bool:
        """Choose ``accepted``, ``rejected`` or ``""`` (undecided) for row ``row``; a merged row cannot change."""
        item = self.rows[row]
        if item.status == "accepted":
            return False
        self.rows[row] = replace(item, choice="" if choice == item.status else choice)
        index = self.item_index(row)
        self.dataChanged.emit(index, index)
        group = index.parent()
        self.dataChanged.emit(group, group)
        return True

    def chosen(self, choice: str) -> list[int]:
        """The numbers of the insights with an unsaved ``choice`` (``accepted`` or ``rejected``)."""
        return [i.number for i in self.rows if i.unsaved and i.choice == choice]

    # -- Qt --------------------------------------------------------------------------------------
    def index(self, row: int, column: int, parent: _Index = _ROOT) -> QModelIndex:
        if not self.hasIndex(row, column, parent):
            return QModelIndex()
        # Internal id: 0 for a category row, the category's number + 1 for an insight row.
        return self.createIndex(row, column, parent.row() + 1 if parent.isValid() else 0)

    def parent(self, index: _Index = _ROOT) -> QModelIndex:  # type: ignore[override]
        if not index.isValid() or index.internalId() == 0:
            return QModelIndex()
        return self.createIndex(int(index.internalId()) - 1, 0, 0)

    def rowCount(self, parent: _Index = _ROOT) -> int:  # noqa: N802 (Qt override)
        if not parent.isValid():
            return len(self.groups)
        if parent.internalId() == 0 and parent.column() == 0:
            return len(self.groups[parent.row()][1])
        return 0

    def columnCount(self, parent: _Index = _ROOT) -> int:  # noqa: N802 (Qt override)
        return 1

    def flags(self, index: _Index) -> Qt.ItemFlag:
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable if index.isValid() else Qt.ItemFlag.NoItemFlags

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if index.internalId() == 0:
            category, members = self.groups[index.row()]
            if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
                return f"{category_title(category)} ({len(members)})"
            if role == Qt.ItemDataRole.ToolTipRole:
                return group_counts([self.rows[r] for r in members])
            if role == self.CategoryRole:
                return category
            if role == self.TotalRole:
                return len(members)
            return None
        row = self.flat_row(index)
        item = self.rows[row]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return f"{review_status(item)}: {display_content(item.insight.content)}"
        if role == Qt.ItemDataRole.ToolTipRole:
            return item.insight.source or ""
        if role == self.ItemRole:
            return item
        if role == self.CategoryRole:
            return item.insight.category
        if role == self.HtmlRole:
            if row not in self._html:
                self._html[row] = inline_html(item.insight.content)
            return self._html[row]
        return None


STATUS_FILTERS = ("all", "pending", "accepted", "rejected")


class ReviewFilterModel(QSortFilterProxyModel):
    """Shows the insights matching a text (every word, in content, source or category) and a status;
    a category row stays while one of its insights shows."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.words: list[str] = []
        self.status = "all"
        self.hide_decided = False
        self.setRecursiveFilteringEnabled(True)
        self.setDynamicSortFilter(True)

    def set_filter(self, text: str | None = None, status: str | None = None, hide_decided: bool | None = None) -> None:
        """Change what shows (``None`` keeps a part as it is); ``status`` is one of :data:`STATUS_FILTERS`."""
        begin = getattr(self, "beginFilterChange", None)  # Qt 6.9+; older Qt only has invalidateFilter()
        if begin is not None:
            begin()
        if text is not None:
            self.words = text.lower().split()
        if status is not None:
            self.status = status
        if hide_decided is not None:
            self.hide_decided = hide_decided
        if begin is not None:
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self.invalidateFilter()

    def accepts(self, item: ReviewItem) -> bool:
        """True when ``item`` passes the filter."""
        state = item.state
        if self.hide_decided and state != "pending":
            return False
        if self.status == "pending" and state != "pending":
            return False
        if self.status == "accepted" and state not in ("accepted", "merged"):
            return False
        if self.status == "rejected" and state != "rejected":
            return False
        haystack = " ".join((item.insight.content, item.insight.source or "", item.insight.category)).lower()
        return all(word in haystack for word in self.words)

    def filterAcceptsRow(self, source_row: int, source_parent: _Index) -> bool:  # noqa: N802 (Qt override)
        if not source_parent.isValid():
            return False  # a category row shows through its insights (recursive filtering)
        model = self.sourceModel()
        item = model.index(source_row, 0, source_parent).data(ProposalReviewModel.ItemRole)
        return item is not None and self.accepts(item)


def category_title(category: str) -> str:
    """``pattern`` → ``Patterns`` (the heading the insights file files it under)."""
    return CATEGORY_SECTIONS.get(category, f"## {category.capitalize()}").removeprefix("## ")


def group_counts(items: Sequence[ReviewItem]) -> str:
    """``5 · 3 new · 1 to merge · 1 merged`` for the insights of one category."""
    counts: dict[str, int] = {}
    for item in items:
        key = review_status(item).removeprefix("already present, ")
        counts[key] = counts.get(key, 0) + 1
    order = ("new", "already present", "to merge", "to reject", "merged", "rejected")
    return " · ".join([str(len(items)), *(f"{counts[k]} {k}" for k in order if counts.get(k))])


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
