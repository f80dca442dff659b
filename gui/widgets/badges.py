"""Capability badges: small rounded chips (read, write, search, insights, transactions).

``CapabilityBadges`` is a widget row of chips; :func:`paint_badges` draws the same chips with a
painter, for item delegates.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QRect, QRectF, Qt
from PySide6.QtGui import QFont, QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import QLabel, QWidget

from core.backends import CAPABILITIES
from gui.widgets.colors import colour, css
from gui.widgets.flow_layout import FlowLayout
from gui.widgets.parts import scaled_font

_PAD_X, _PAD_Y, _GAP = 7, 2, 5


def _chip_font(base: QFont) -> QFont:
    return scaled_font(base, 0.85)


class CapabilityBadges(QWidget):
    """A row of chips, one per capability the backend has; missing ones are shown struck out and grey."""

    def __init__(self, capabilities: Iterable[str] = (), parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layout = FlowLayout(self, _GAP)  # a narrow column (800 px) wraps the chips, never cuts them
        self.chips: dict[str, QLabel] = {}
        for cap in CAPABILITIES:
            chip = QLabel(cap, self)
            chip.setFont(_chip_font(self.font()))
            self.chips[cap] = chip
            self._layout.addWidget(chip)
        self.set_capabilities(capabilities)

    def set_capabilities(self, capabilities: Iterable[str]) -> None:
        """Show ``capabilities`` as present and the others as absent."""
        present = set(capabilities)
        for cap, chip in self.chips.items():
            on = cap in present
            chip.setProperty("present", on)
            chip.setToolTip(f"{'Supports' if on else 'Does not support'} {cap}")
            chip.setStyleSheet(
                f"QLabel {{ background: {css('badge-bg') if on else 'transparent'};"
                f" color: {css('badge-fg') if on else css('badge-off-fg')};"
                f" border: 1px solid {css('badge-fg') if on else css('badge-off-fg')};"
                f" border-radius: 8px; padding: {_PAD_Y}px {_PAD_X}px;"
                f" text-decoration: {'none' if on else 'line-through'}; }}"
            )

    def present(self) -> list[str]:
        """The capabilities shown as present, in the standard order."""
        return [cap for cap, chip in self.chips.items() if chip.property("present")]


def paint_badges(painter: QPainter, rect: QRect, capabilities: Iterable[str], base_font: QFont) -> int:
    """Draw the present ``capabilities`` as chips from ``rect``'s top-left; return the width used."""
    present = [cap for cap in CAPABILITIES if cap in set(capabilities)]
    font = _chip_font(base_font)
    metrics = QFontMetrics(font)
    painter.save()
    painter.setFont(font)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    x = rect.left()
    height = metrics.height() + 2 * _PAD_Y
    for cap in present:
        width = metrics.horizontalAdvance(cap) + 2 * _PAD_X
        chip = QRectF(x, rect.top(), width, height)
        painter.setPen(QPen(colour("badge-fg"), 1))
        painter.setBrush(colour("badge-bg"))
        painter.drawRoundedRect(chip.adjusted(0.5, 0.5, -0.5, -0.5), height / 2, height / 2)
        painter.drawText(chip, Qt.AlignmentFlag.AlignCenter, cap)
        x += width + _GAP
    painter.restore()
    return x - rect.left()


def badges_height(base_font: QFont) -> int:
    """The height of a chip drawn by :func:`paint_badges` with ``base_font``."""
    return QFontMetrics(_chip_font(base_font)).height() + 2 * _PAD_Y
