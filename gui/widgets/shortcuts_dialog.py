"""Help ▸ Keyboard shortcuts: every ``QAction`` with a shortcut, generated from the actions themselves.

Nothing is listed by hand: the dialog walks the window's actions (menus and the views' own actions,
built so far), so a shortcut added anywhere shows up here. An action's place is its menu, or the
``shortcutScope`` property a view sets on its actions ("Conflict", "Backends"…).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QMenu,
    QMenuBar,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

SCOPE_PROPERTY = "shortcutScope"


def action_scope(action: QAction) -> str:
    """Where an action lives: its ``shortcutScope`` property, else its menu's title, else "Window"."""
    scope = action.property(SCOPE_PROPERTY)
    if scope:
        return str(scope)
    menus = [o for o in action.associatedObjects() if isinstance(o, QMenu)]
    return menus[0].title().replace("&", "") if menus else "Window"


def shortcut_rows(root: QWidget) -> list[tuple[str, str, str]]:
    """``(where, action, keys)`` for every action under ``root`` that has a shortcut, sorted."""
    rows: set[tuple[str, str, str]] = set()
    for action in root.findChildren(QAction):
        keys = list(dict.fromkeys(k.toString(QKeySequence.SequenceFormat.NativeText)
                                  for k in action.shortcuts() if not k.isEmpty()))
        if not keys or not action.text():
            continue
        text = action.text().replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip(".…")
        rows.add((action_scope(action), text, ", ".join(keys)))
    bars = root.findChildren(QMenuBar)
    menus = [a.text().replace("&", "") for a in bars[0].actions()] if bars else []
    order = {title: i for i, title in enumerate(menus)}  # menus in menu-bar order, then the views
    return sorted(rows, key=lambda r: (order.get(r[0], len(order)), r[0], r[1]))


class ShortcutsDialog(QDialog):
    """A table of the shortcuts of ``root``'s actions."""

    def __init__(self, root: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent or root)
        self.setObjectName("shortcutsDialog")
        self.setWindowTitle("Keyboard shortcuts — memdesk")
        self.rows = shortcut_rows(root)
        intro = QLabel("Every shortcut of the open window. Views list theirs once they have been opened.", self)
        intro.setWordWrap(True)
        self.table = QTableWidget(len(self.rows), 3, self)
        self.table.setHorizontalHeaderLabels(["Where", "Action", "Shortcut"])
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 8)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setAlternatingRowColors(True)
        for row, values in enumerate(self.rows):
            for column, value in enumerate(values):
                item = QTableWidgetItem(value)
                if column == 2:
                    item.setFont(self.table.font())
                    item.setTextAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, column, item)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.resize(560, 520)

    def shortcut_of(self, action_text: str) -> str | None:
        """The keys listed for the action named ``action_text`` (tests, help)."""
        return next((keys for _where, text, keys in self.rows if text == action_text), None)
