"""Builds memdesk's ``QApplication``: names and stylesheet."""

from __future__ import annotations

import gc
import os
import sys

from PySide6.QtCore import QMessageLogContext, QtMsgType, qInstallMessageHandler
from PySide6.QtWidgets import QApplication

from gui import gc_guard, resources

APP_NAME = "memdesk"
ORG_NAME = "memdesk"


def freeze_heap() -> None:
    """Move everything loaded so far out of the garbage collector's sight (``gc.freeze``).

    Start-up leaves a large, long-lived heap (Qt wrappers, pydantic models, the open memory);
    without this a full collection walks all of it and stalls the GUI thread for 50-100 ms. The
    young generation is also collected less often (a markdown render allocates a lot).
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 20, 20)


def _quiet_offscreen_platform() -> None:
    """Drop the offscreen platform's "does not support propagateSizeHints()" noise (screenshots)."""
    def handler(mode: QtMsgType, context: QMessageLogContext, message: str) -> None:
        if "does not support propagateSizeHints" in message:
            return
        if previous is not None:
            previous(mode, context, message)
        else:
            sys.stderr.write(message + "\n")

    previous = qInstallMessageHandler(handler)


#: How long a thread keeps the GIL when another asks for it (CPython's default: 5 ms); bench gui's stall figure.
GIL_SWITCH_S = 0.001


def create_app(argv: list[str] | None = None) -> QApplication:
    """Return the running ``QApplication`` or a new one named memdesk with its stylesheet."""
    app = QApplication.instance()
    if app is None:
        if os.environ.get("QT_QPA_PLATFORM") == "offscreen":
            _quiet_offscreen_platform()
        app = QApplication(list(argv) if argv is not None else [sys.argv[0]])
    assert isinstance(app, QApplication)
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(ORG_NAME)
    app.setStyleSheet(resources.read_text("style.qss"))
    gc_guard.install(app)  # Qt objects in cycles are destroyed on the GUI thread, never on a worker's
    # While a worker runs Python (a save's screen and history, a firewall scan), every Python slot and
    # override the GUI thread enters (a timer, each highlighted block, a paint) waits for the GIL until
    # the worker is made to drop it: 5 ms by default, so a repaint of 40 lines could wait 200 ms.
    sys.setswitchinterval(GIL_SWITCH_S)
    return app
