"""The memory firewall's policy as a table: one row per writer, one column per rule family, a choice per cell.

Each cell shows the effective action (the default or an override) and offers allow / warn / hold / refuse;
``changeRequested(writer, rule, action)`` asks for a change (the view saves it with
:func:`core.firewall.policy.set_rule` and shows the table again). Choosing the default action removes the
override.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHeaderView, QTableWidget, QWidget

from core.firewall.policy import ACTIONS, RULE_KEYS, WRITER_KINDS, Policy

RULES = (*RULE_KEYS, "error")


class FirewallPolicyTable(QTableWidget):
    """Writers × rule families, each cell a combo box of actions."""

    changeRequested = Signal(str, str, str)  # writer, rule, action

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(len(WRITER_KINDS), len(RULES), parent)
        self.setObjectName("firewallPolicy")
        self.setHorizontalHeaderLabels(list(RULES))
        self.setVerticalHeaderLabels(list(WRITER_KINDS))
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self._filling = False

    def set_policy(self, policy: Policy) -> None:
        """Show ``policy``'s effective action for every writer and rule family."""
        self._filling = True
        table = policy.effective()
        for row, writer in enumerate(WRITER_KINDS):
            for col, rule in enumerate(RULES):
                box = self.cellWidget(row, col)
                if not isinstance(box, QComboBox):
                    box = QComboBox(self)
                    box.addItems(list(ACTIONS))
                    box.currentTextChanged.connect(lambda action, w=writer, r=rule: self._changed(w, r, action))
                    self.setCellWidget(row, col, box)
                box.setCurrentText(table[writer][rule])
                overridden = rule in policy.rules.get(writer, {})
                box.setToolTip(f"{writer} · {rule}: {'set for this project' if overridden else 'default'}")
        self._filling = False

    def _changed(self, writer: str, rule: str, action: str) -> None:
        if not self._filling:
            self.changeRequested.emit(writer, rule, action)
