"""Light and dark themes: follow the system's colour scheme (Qt ≥ 6.5) or the operator's choice.

:class:`ThemeManager` holds the mode (``system``, ``light`` or ``dark``, kept in ``QSettings``),
applies it to the application (a palette, the stylesheet ``style.qss`` with ``style-dark.qss`` on
top) and emits ``changed(dark)`` so the editor's highlighter and preview can recolour. In ``system``
mode it follows ``QStyleHints.colorScheme`` as it changes.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QSettings, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from gui import resources

MODES = ("system", "light", "dark")
_KEY = "view/theme"

_DARK: dict[QPalette.ColorRole, str] = {
    QPalette.ColorRole.Window: "#1f2328",
    QPalette.ColorRole.WindowText: "#e6edf3",
    QPalette.ColorRole.Base: "#161a1f",
    QPalette.ColorRole.AlternateBase: "#1c2127",
    QPalette.ColorRole.Text: "#e6edf3",
    QPalette.ColorRole.Button: "#2a3038",
    QPalette.ColorRole.ButtonText: "#e6edf3",
    QPalette.ColorRole.BrightText: "#ff7b72",
    QPalette.ColorRole.Highlight: "#1f6feb",
    QPalette.ColorRole.HighlightedText: "#ffffff",
    QPalette.ColorRole.ToolTipBase: "#2a3038",
    QPalette.ColorRole.ToolTipText: "#e6edf3",
    QPalette.ColorRole.PlaceholderText: "#8b949e",
    QPalette.ColorRole.Link: "#58a6ff",
    QPalette.ColorRole.LinkVisited: "#bc8cff",
    QPalette.ColorRole.Light: "#3a414a",
    QPalette.ColorRole.Midlight: "#30363d",
    QPalette.ColorRole.Mid: "#2a3038",
    QPalette.ColorRole.Dark: "#111418",
    QPalette.ColorRole.Shadow: "#000000",
}
_DARK_DISABLED = {QPalette.ColorRole.Text: "#6e7681", QPalette.ColorRole.WindowText: "#6e7681",
                  QPalette.ColorRole.ButtonText: "#6e7681"}


def dark_palette() -> QPalette:
    """memdesk's dark palette."""
    palette = QPalette()
    for role, colour in _DARK.items():
        palette.setColor(role, QColor(colour))
    for role, colour in _DARK_DISABLED.items():
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(colour))
    return palette


def stylesheet(dark: bool) -> str:
    """The application stylesheet for a theme."""
    return resources.read_text("style.qss") + ("\n" + resources.read_text("style-dark.qss") if dark else "")


class ThemeManager(QObject):
    """The theme mode, persisted, and its application to the running ``QApplication``."""

    changed = Signal(bool)  # dark

    def __init__(self, settings: QSettings | None = None, *, persist: bool = True,
                 system_scheme: Callable[[], Qt.ColorScheme] | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        #: What the desktop asks for (tests pass their own).
        self.system_scheme = system_scheme or (lambda: QGuiApplication.styleHints().colorScheme())
        self._settings = settings if settings is not None or not persist else QSettings("memdesk", "memdesk")
        stored = str(self._settings.value(_KEY, "system")) if self._settings is not None else "system"
        self.mode = stored if stored in MODES else "system"
        self.dark: bool | None = None  # what was applied last (None: nothing yet)
        self._applying = False
        QGuiApplication.styleHints().colorSchemeChanged.connect(self._on_system_scheme)

    def system_is_dark(self) -> bool:
        """Whether the desktop asks for a dark scheme."""
        return self.system_scheme() == Qt.ColorScheme.Dark

    def wants_dark(self) -> bool:
        """Whether the current mode means dark."""
        return self.mode == "dark" or (self.mode == "system" and self.system_is_dark())

    def set_mode(self, mode: str, *, remember: bool = True) -> None:
        """Switch to ``mode`` (one of :data:`MODES`), remember it unless told not to, and apply it."""
        if mode not in MODES:
            raise ValueError(f"unknown theme {mode!r}; expected one of {', '.join(MODES)}")
        self.mode = mode
        if remember and self._settings is not None:
            self._settings.setValue(_KEY, mode)
            self._settings.sync()
        self.apply()

    def apply(self) -> bool:
        """Give the application the palette and stylesheet of the mode; return whether it is dark."""
        app = QApplication.instance()
        if not isinstance(app, QApplication):
            return False
        hints = QGuiApplication.styleHints()
        self._applying = True
        try:
            if self.mode == "system":
                hints.unsetColorScheme()
            else:  # lets native parts (title bars, dialogs) follow where the platform can
                hints.setColorScheme(Qt.ColorScheme.Dark if self.mode == "dark" else Qt.ColorScheme.Light)
            dark = self.wants_dark()
            app.setPalette(dark_palette() if dark else app.style().standardPalette())
            app.setStyleSheet(stylesheet(dark))
        finally:
            self._applying = False
        if dark != self.dark:
            self.dark = dark
            self.changed.emit(dark)
        return dark

    def _on_system_scheme(self, *_args: object) -> None:
        if self.mode == "system" and not self._applying and self.dark is not None:
            self.apply()
