"""Helpers of the desk tools' tests (their window is the ``desk`` fixture in conftest)."""

from __future__ import annotations

from PySide6.QtCore import Qt

MEMORY = ".fusion/memory/MEMORY.md"
DREAMS = ".fusion/memory/DREAMS.md"
CTRL = Qt.KeyboardModifier.ControlModifier
CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier

def type_text(qtbot, widget, text: str) -> None:
    """Type ``text`` into ``widget`` key by key (a newline is Return)."""
    for i, line in enumerate(text.split("\n")):
        if i:
            qtbot.keyClick(widget, Qt.Key.Key_Return)
        if line:
            qtbot.keyClicks(widget, line)
