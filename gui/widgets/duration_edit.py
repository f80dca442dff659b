"""A duration in human units: a number and a unit (seconds, minutes, hours, days) for a value kept in ms."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QComboBox, QLabel, QSpinBox, QWidget

from gui.widgets.colors import help_colour
from gui.widgets.field_editors import INT_MAX, FieldEditor

UNITS: tuple[tuple[str, int], ...] = (
    ("days", 86_400_000),
    ("hours", 3_600_000),
    ("minutes", 60_000),
    ("seconds", 1_000),
)
MILLISECONDS = ("milliseconds", 1)


def split_duration(ms: int) -> tuple[int, str, int]:
    """Return ``(number, unit, factor)``: the largest unit that expresses ``ms`` exactly."""
    for unit, factor in UNITS:
        if ms and ms % factor == 0:
            return ms // factor, unit, factor
    if ms % 1_000 == 0:
        return ms // 1_000, "seconds", 1_000
    return ms, MILLISECONDS[0], 1


def describe_duration(ms: int) -> str:
    """Say ``ms`` in words: ``1 day``, ``90 minutes``, ``0 seconds``."""
    number, unit, _ = split_duration(ms)
    return f"{number:,} {unit[:-1] if number == 1 else unit}"


class DurationEditor(FieldEditor):
    """Number + unit; :meth:`value` is milliseconds. Changing the unit keeps the number (1 hour → 1 day)."""

    def __init__(self, prop: dict[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(prop, parent)
        self.minimum_ms = int(prop.get("minimum", 0))
        self.number = QSpinBox(self)
        self.number.setRange(0, INT_MAX)
        self.number.setGroupSeparatorShown(True)
        self.number.setAccessibleName("amount")
        self.unit = QComboBox(self)
        self.unit.setAccessibleName("unit")
        for name, factor in UNITS[::-1]:
            self.unit.addItem(name, factor)
        self.raw = QLabel(self)
        pal = self.raw.palette()
        pal.setColor(self.raw.foregroundRole(), help_colour())
        self.raw.setPalette(pal)
        self._layout.addWidget(self.number)
        self._layout.addWidget(self.unit)
        self._layout.addWidget(self.raw)
        self._layout.addStretch(1)
        self.setFocusProxy(self.number)
        self.number.valueChanged.connect(self._edited)
        self.unit.activated.connect(lambda _i: self._edited())
        self._show_raw()

    def _edited(self) -> None:
        self._show_raw()
        self.changed.emit()

    def _show_raw(self) -> None:
        self.raw.setText(f"= {self.value():,} ms")

    def value(self) -> int:
        return self.number.value() * int(self.unit.currentData())

    def set_value(self, value: Any) -> None:
        ms = int(value) if isinstance(value, int | float) else self.minimum_ms
        number, unit, factor = split_duration(max(ms, 0))
        if unit == MILLISECONDS[0] and self.unit.findText(unit) < 0:
            self.unit.insertItem(0, MILLISECONDS[0], MILLISECONDS[1])
        self.number.blockSignals(True)
        self.unit.blockSignals(True)
        self.unit.setCurrentIndex(self.unit.findText(unit))
        self.number.setValue(min(number, INT_MAX))
        self.number.blockSignals(False)
        self.unit.blockSignals(False)
        self._show_raw()

    def set_duration(self, number: int, unit: str) -> None:
        """Set the number and unit as a user would (emits ``changed``)."""
        self.unit.setCurrentIndex(self.unit.findText(unit))
        self.number.setValue(number)
        self._edited()
