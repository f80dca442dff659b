"""Bring a tool window forward (the offscreen platform of tests and screenshots has no stacking: skip it)."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget


def bring_forward(window: QWidget) -> None:
    """Show ``window`` above the others and give it the keyboard."""
    if QGuiApplication.platformName() != "offscreen":
        window.raise_()
    window.activateWindow()
