"""The load-budget meter in the status bar: how much of the document the tightest chosen agent loads.

A small bar (used / limit of the binding limit, red past the cut), a label ("✂ Claude Code: line
167/1,293": the first line it does not load) and a "Readers" button whose menu picks which agents read this document. The tooltip
lists every chosen agent's view. It knows nothing of the editor: it shows what it is given
(:meth:`set_budgets`, :meth:`set_consumers`) and says what the operator chose (``consumersChosen``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QHBoxLayout, QMenu, QProgressBar, QToolButton, QWidget

from gui.widgets.elided_label import ElidedLabel

if TYPE_CHECKING:  # the status bar is built before any core code is loaded (fast start-up)
    from core.budget import ConsumerBudget

_BAR_STYLE = ("QProgressBar {{ border: 1px solid palette(mid); border-radius: 2px; background: palette(base); }}"
              " QProgressBar::chunk {{ background: {}; }}")
_COLOURS = {"ok": "#3c9a5f", "near": "#c9962b", "over": "#c8453c"}


def meter_text(budget: ConsumerBudget | None) -> str:
    """The meter's short label for the tightest budget (the tooltip has the full story)."""
    if budget is None:
        return "No agent chosen"
    cut = budget.cut
    if cut is None:
        binding = budget.binding()
        if binding is None:
            return f"{budget.consumer_name}: loads it all"
        return f"{budget.consumer_name}: {binding.used:,}/{binding.limit:,} {_word(binding.unit)}"
    if cut.kind == "window":
        return f"{budget.consumer_name}: {cut.last_loaded_line:,} lines/read"
    if cut.kind == "middle":
        return f"✂ {budget.consumer_name}: drops {cut.first_line:,}–{(cut.resume_line or 0) - 1:,}"
    return f"✂ {budget.consumer_name}: line {cut.first_line:,}/{budget.total_lines:,}"


def _word(unit: str) -> str:
    return {"chars": "chars", "utf16": "chars"}.get(unit, unit)


class BudgetMeter(QWidget):
    """Bar, label and reader chooser; ``consumersChosen`` carries the ids the operator ticked."""

    consumersChosen = Signal(list)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("budgetMeter")
        self.bar = QProgressBar(self)
        self.bar.setObjectName("budgetBar")
        self.bar.setRange(0, 1000)
        self.bar.setTextVisible(False)
        self.bar.setFixedSize(40, 9)
        self.label = ElidedLabel("", self)
        self.label.setObjectName("budgetLabel")
        self.chooser = QToolButton(self)
        self.chooser.setObjectName("budgetChooser")
        self.chooser.setText("Readers")
        self.chooser.setToolTip("Choose which agents read this document; the meter shows the one that loads least")
        self.chooser.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.menu = QMenu(self.chooser)
        self.chooser.setMenu(self.menu)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 0)
        layout.setSpacing(6)
        layout.addWidget(self.bar)
        layout.addWidget(self.label)
        layout.addWidget(self.chooser)
        self.budgets: list[ConsumerBudget] = []
        self.shown: ConsumerBudget | None = None
        self.state = "ok"
        self.clear()

    def set_consumers(self, options: Sequence[tuple[str, str]], chosen: Sequence[str]) -> None:
        """Offer ``options`` (id, name) in the chooser, ticking ``chosen``.

        The same options only update the ticks: the menu may be open, its action mid-signal.
        """
        actions = self.menu.actions()
        if [(a.data(), a.text()) for a in actions] == [(cid, f"{name} ({cid})") for cid, name in options]:
            for action in actions:
                action.blockSignals(True)
                action.setChecked(action.data() in chosen)
                action.blockSignals(False)
            return
        self.menu.clear()
        for cid, name in options:
            action = QAction(f"{name} ({cid})", self.menu)
            action.setCheckable(True)
            action.setChecked(cid in chosen)
            action.setData(cid)
            action.toggled.connect(self._on_toggled)
            self.menu.addAction(action)

    def chosen(self) -> list[str]:
        """The ids ticked in the chooser, in menu order."""
        return [a.data() for a in self.menu.actions() if a.isChecked()]

    def set_budgets(self, budgets: Sequence[ConsumerBudget]) -> None:
        """Show the tightest of ``budgets``; the tooltip holds every one."""
        from core.budget import tightest

        self.budgets = list(budgets)
        self.shown = tightest(self.budgets)
        self.label.setText(meter_text(self.shown))
        fraction = self.shown.fraction() if self.shown else 0.0
        self.bar.setValue(min(int(fraction * 1000), 1000))
        cut = self.shown.cut if self.shown else None
        self.state = "over" if cut is not None and cut.kind != "window" else "near" if fraction >= 0.8 else "ok"
        self.bar.setStyleSheet(_BAR_STYLE.format(_COLOURS[self.state]))
        self.setProperty("state", self.state)
        tips = [b.summary() for b in self.budgets] or ["No agent is chosen for this document."]
        self.setToolTip("\n".join(tips))
        self.label.setToolTip(self.toolTip())
        self.setVisible(True)

    def clear(self) -> None:
        """Show nothing (no project open)."""
        self.menu.clear()
        self.budgets, self.shown, self.state = [], None, "ok"
        self.label.setText("")
        self.bar.setValue(0)
        self.bar.setStyleSheet(_BAR_STYLE.format(_COLOURS["ok"]))
        self.setToolTip("")
        self.setVisible(False)

    def _on_toggled(self, _checked: bool) -> None:
        self.consumersChosen.emit(self.chosen())
