"""Semantic colours (warning, error, ok, diff) picked to read well on the app's light or dark palette."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

# (light-palette colour, dark-palette colour) per role.
_COLOURS: dict[str, tuple[str, str]] = {
    "warning-bg": ("#fff4ce", "#4a3b00"),
    "warning-fg": ("#5c4400", "#ffe8a3"),
    "error-bg": ("#fde7e9", "#4b1c20"),
    "error-fg": ("#a4262c", "#ffb3b8"),
    "info-bg": ("#e5f1fb", "#0f2f4a"),
    "info-fg": ("#004578", "#b7dcff"),
    "ok-bg": ("#dff6dd", "#16351a"),
    "ok-fg": ("#0e6b0e", "#9fe29f"),
    "removed-line": ("#ffecec", "#4b1f22"),
    "removed-word": ("#ffb4b4", "#8a2f35"),
    "added-line": ("#e6ffec", "#1c3d25"),
    "added-word": ("#abf2bc", "#2f6d3c"),
    "filler": ("#f3f3f3", "#2a2a2a"),
    "filler-hatch": ("#dcdcdc", "#3a3a3a"),
    "badge-bg": ("#e8eaf6", "#2b3050"),
    "badge-fg": ("#283593", "#c5cae9"),
    "badge-off-fg": ("#9e9e9e", "#6d6d6d"),
    "active-bg": ("#dff6dd", "#16351a"),
}


def is_dark(palette: QPalette | None = None) -> bool:
    """True when the palette's window colour is dark."""
    pal = palette or QApplication.palette()
    return pal.color(QPalette.ColorRole.Window).lightness() < 128


def colour(role: str, palette: QPalette | None = None) -> QColor:
    """Return the colour of ``role`` (for example ``"error-fg"``) for the current palette."""
    light, dark = _COLOURS[role]
    return QColor(dark if is_dark(palette) else light)


def css(role: str, palette: QPalette | None = None) -> str:
    """Return the colour of ``role`` as ``#rrggbb`` for style sheets."""
    return colour(role, palette).name()


def help_colour(palette: QPalette | None = None) -> QColor:
    """The grey of help text: the palette's placeholder colour."""
    pal = palette or QApplication.palette()
    return pal.color(QPalette.ColorRole.PlaceholderText)
