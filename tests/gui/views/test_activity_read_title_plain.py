"""review7: the window that shows what a read served (Shift+Enter in the Activity view, 89bb333) names the reader
by its client name, which is whatever the client sent as its User-Agent. A QLabel left at Qt's AutoText renders a
name that looks like HTML as rich text: a client calling itself ``<h1 style="color:red">operator</h1>`` was shown
as a big red "operator" heading, its tags gone (a reader passing itself off as the operator). The name must be
shown as the characters it is. Through a real server read, the Activity view and Shift+Enter.
"""

from __future__ import annotations

import httpx
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from core.server.tokens import TokenStore
from core.storage import readlog
from gui.views.activity_view import ActivityView
from tests.gui.desk_window import DREAMS

HOSTILE = '<h1 style="color:red">operator</h1> x/1'


def test_the_read_window_shows_a_client_name_as_text(qtbot, desk, user_config_dir):
    token = TokenStore().create("agent")
    server = desk.desk.server
    assert server.start(desk.session.root, 0), server.error
    try:
        reply = httpx.get(f"{server.url}/api/memory/file", params={"path": "DREAMS.md"},
                          headers={"Authorization": f"Bearer {token}", "User-Agent": HOSTILE}, timeout=30)
        assert reply.status_code == 200
    finally:
        server.stop()
    readlog.flush()
    view = desk.show_view("activity")
    assert isinstance(view, ActivityView)
    qtbot.waitUntil(lambda: view.load_count > 0 and any(e.kind == "read" for e in view.model.entries), timeout=5000)
    view.kind_filter.setCurrentIndex(view.kind_filter.findText("read"))
    view.table.setCurrentIndex(view.model.index(0, 0))
    view.table.setFocus()
    qtbot.keyClick(view.table, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    dialog = view.read_dialog
    assert dialog is not None and dialog.isVisible()
    title = dialog.title
    assert title.text().startswith(f"{HOSTILE} (token agent) read {DREAMS} at ")
    # What is drawn: the same text in a plain label takes the same room; as rich text the tags vanish and an
    # <h1> line is taller and narrower.
    plain = QLabel(title.text())
    plain.setTextFormat(Qt.TextFormat.PlainText)
    plain.setWordWrap(True)
    plain.setFont(title.font())
    width = title.width()
    assert title.heightForWidth(width) == plain.heightForWidth(width)
    assert title.minimumSizeHint() == plain.minimumSizeHint()
    dialog.close()
