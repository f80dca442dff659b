"""Issue 23, reads on record, in the app: given a client's read in the Activity view, the operator opens exactly
the version that client read (Shift+Enter), after the document was appended to and then replaced."""

from __future__ import annotations

import httpx
from PySide6.QtCore import Qt

from core.project import Project
from core.server.tokens import TokenStore
from core.storage import readlog
from core.storage.fileio import content_hash
from core.storage.history import versions as history
from gui.views.activity_view import ActivityView
from tests.gui.desk_window import DREAMS


def test_shift_enter_on_a_read_shows_the_text_that_read_served(qtbot, desk, layered_project, user_config_dir):
    token = TokenStore().create("claude-desktop")
    server = desk.desk.server
    assert server.start(desk.session.root, 0), server.error
    try:
        reply = httpx.get(f"{server.url}/api/memory/file", params={"path": "DREAMS.md"},
                          headers={"Authorization": f"Bearer {token}", "User-Agent": "claude-desktop/1.0"},
                          timeout=30)
        assert reply.status_code == 200
    finally:
        server.stop()
    served = reply.json()["content"]
    readlog.flush()
    other = Project(layered_project)  # an agent's process appends, then someone replaces the whole file
    try:
        other.append("A dream noted after the read", path=DREAMS, author="mcp:reviewer")
        other.write(DREAMS, "# Memory Dreams\n\nRewritten after the read.\n", author="operator")
    finally:
        other.close()
    history.settled()
    now = (layered_project / DREAMS).read_text(encoding="utf-8")
    assert now != served and content_hash(served) != content_hash(now)

    view = desk.show_view("activity")
    assert isinstance(view, ActivityView)
    qtbot.waitUntil(lambda: view.load_count > 0 and any(e.kind == "read" for e in view.model.entries), timeout=5000)
    assert " and 1 read (Shift+Enter shows what a read served)" in view.count_label.text()  # one GET: "1 read"
    view.kind_filter.setCurrentIndex(view.kind_filter.findText("read"))
    assert len(view.visible_rows()) == 1
    view.table.setCurrentIndex(view.model.index(0, 0))
    view.table.setFocus()
    qtbot.keyClick(view.table, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    dialog = view.read_dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.shown_text() == served  # the version read, not the file now
    assert dialog.title.text().startswith("claude-desktop/1.0 read .fusion/memory/DREAMS.md at ")
    assert content_hash(served)[:12] in dialog.title.text()
    served_lines = served.split("\n")
    assert dialog.text_edit.textCursor().selectedText().replace("\u2029", "\n") == "\n".join(served_lines)
    assert desk.session.current_path != DREAMS or desk.editor.text_edit.toPlainText() == now  # editor untouched
    dialog.close()
