"""Renders a view of the main window to a PNG (``memdesk --screenshot FILE.png --view NAME``).

Works offscreen: the window is laid out at the requested size, the view is shown, pending work
(the preview render, first paints) is let finish, and ``QWidget.grab()`` takes the picture.
"""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEventLoop
from PySide6.QtWidgets import QWidget

DEFAULT_SIZE = (1280, 800)


def settle(ms: int = 200) -> None:
    """Process events for ``ms`` milliseconds (lets background results land and layouts settle)."""
    deadline = time.monotonic() + ms / 1000
    while time.monotonic() < deadline:
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
        time.sleep(0.005)


def grab_to_png(widget: QWidget, path: Path) -> bool:
    """Save a picture of ``widget`` as PNG at ``path`` (folders created); True on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return widget.grab().save(str(path), "PNG")


def screenshot_window(window: QWidget, view: str, path: Path,
                      size: tuple[int, int] = DEFAULT_SIZE) -> bool:
    """Show ``view`` of a :class:`~gui.main_window.MainWindow` at ``size`` and save it to ``path``."""
    window.resize(*size)
    window.show()
    window.show_view(view)  # type: ignore[attr-defined]
    settle(300)
    editor = getattr(window, "editor", None)
    if view == "editor" and editor is not None:
        editor.preview.render_now()
    settle(200)
    return grab_to_png(window, path)
