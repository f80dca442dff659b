"""A message strip shown at the top of a view (warning, error or info); hidden while it has no message.

It carries the ``level`` property the application style sheet styles ``#banner`` by; without that
style sheet (a view on its own, in tests) it colours itself.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QFrame, QHBoxLayout, QLabel, QWidget

from gui.widgets.colors import css

KINDS = ("info", "warning", "error", "ok")


class Banner(QFrame):
    """A coloured, word-wrapped message; :meth:`show_message` shows it and :meth:`clear` hides it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.kind = "info"
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.addWidget(self.label, 1)
        self.hide()

    def text(self) -> str:
        """The message shown (``""`` when hidden)."""
        return self.label.text() if not self.isHidden() else ""

    def show_message(self, text: str, kind: str = "warning") -> None:
        """Show ``text`` styled as ``kind`` (one of :data:`KINDS`)."""
        if kind not in KINDS:
            raise ValueError(f"unknown banner kind {kind!r}; expected one of {', '.join(KINDS)}")
        self.kind = kind
        self.label.setText(text)
        self.setProperty("level", "info" if kind == "ok" else kind)
        app = QApplication.instance()
        app_styles_banners = isinstance(app, QApplication) and "#banner" in app.styleSheet()
        if app_styles_banners and kind != "ok":
            self.setStyleSheet("")
            self.style().unpolish(self)
            self.style().polish(self)
        else:
            self.setStyleSheet(
                f"QFrame#banner {{ background: {css(kind + '-bg')}; border: 1px solid {css(kind + '-fg')};"
                f" border-radius: 4px; }} QFrame#banner QLabel {{ color: {css(kind + '-fg')}; }}"
            )
        self.show()

    def clear(self) -> None:
        """Hide the banner."""
        self.label.clear()
        self.hide()
