"""The GUI keeps running while the disk or a database is slow (issue 19 item 6): each action waits on the
project's serial worker, held here on an event the test owns; the window's timers keep firing, the view
says what runs (status text, busy cursor), and once released the bytes on disk are the expected ones."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from gui.main_window import MainWindow
from gui.recent import RecentProjects
from tests.gui.widgets.test_preferences import prefs  # noqa: F401 (the Preferences dialog, opened with Ctrl+,)
from tests.gui.worker_gate import TICKS, run_while_held

CTRL = Qt.KeyboardModifier.ControlModifier


def _busy_cursor() -> bool:
    cursor = QGuiApplication.overrideCursor()
    return cursor is not None and cursor.shape() == Qt.CursorShape.BusyCursor


def test_ctrl_s_waits_for_the_worker_while_the_window_runs(qtbot, window, sample_project):
    edit = window.editor.text_edit
    edit.setFocus()
    qtbot.keyClicks(edit, "typed while the disk was slow ")
    memory = sample_project / ".fusion/memory.md"
    before = memory.read_bytes()

    def progress() -> bool:
        return window.status.currentMessage() == "Saving memory.md…" and _busy_cursor() and memory.read_bytes() == before

    _, ticks, saw = run_while_held(window.session.worker, lambda: qtbot.keyClick(edit, Qt.Key.Key_S, CTRL), progress)
    assert ticks >= TICKS and saw  # the GUI thread ran its timers while the save waited, and said so
    assert memory.read_text(encoding="utf-8").startswith("typed while the disk was slow ")
    assert not window.editor.dirty and QApplication.overrideCursor() is None


def test_a_reload_after_a_change_on_disk_reads_on_the_worker(qtbot, window, sample_project):
    memory = sample_project / ".fusion/memory.md"
    memory.write_text(memory.read_text(encoding="utf-8") + "\n- appended by an agent\n", encoding="utf-8")
    _, ticks, saw = run_while_held(window.session.worker, window.editor.on_disk_changed,
                                   lambda: "appended by an agent" not in window.editor.text())
    assert ticks >= TICKS and saw
    assert window.editor.text().endswith("- appended by an agent\n") and not window.editor.dirty


def test_a_backend_switch_waits_for_the_worker_while_the_window_runs(qtbot, window, sample_project):
    _, ticks, saw = run_while_held(window.session.worker, lambda: window.session.switch_backend("sqlite"),
                                   lambda: window.status.currentMessage() == "Switching the backend…")
    assert ticks >= TICKS and saw
    assert window.session.backend.id == "sqlite"
    settings = json.loads((sample_project / ".fusion/memdesk/settings.json").read_text(encoding="utf-8"))
    assert settings["memoryBackend"] == "sqlite" and (sample_project / ".fusion/memdesk/memory.db").is_file()


def test_a_prune_applies_on_the_worker_with_its_buttons_disabled(qtbot, sample_project):
    from core.insights import MEMORY_WORKING_PATH
    from core.insights import parse_insight_extraction_response as parse_reply
    from tests.gui.views.test_prune_view import REPLY, load_reply, make_view

    view = make_view(qtbot, sample_project)
    load_reply(qtbot, view)
    memory = sample_project / MEMORY_WORKING_PATH
    before = memory.read_bytes()
    assert view.apply_button.isEnabled()
    _, ticks, saw = run_while_held(
        view.session.worker, lambda: qtbot.mouseClick(view.apply_button, Qt.MouseButton.LeftButton),
        lambda: not view.apply_button.isEnabled() and not view.reject_button.isEnabled()
        and memory.read_bytes() == before)
    assert ticks >= TICKS and saw
    candidate = parse_reply((sample_project / REPLY).read_text()).pruned_memory
    assert memory.read_text() == candidate.strip() + "\n"
    assert "Applied</b> (all changes)." in view.outcome_label.text()


def test_an_inbox_accept_writes_on_the_worker(qtbot, project, user_config_dir):
    from gui.session import ProjectSession
    from gui.views.inbox_view import InboxView
    from tests.gui.views.test_inbox_view import MEMORY, _held

    root, _secret_id, _attack_id = _held(project, user_config_dir)
    view = InboxView(ProjectSession(root))
    qtbot.addWidget(view)
    view.show()
    said: list[str] = []
    view.session.worker.busyChanged.connect(lambda busy, what: busy and what and said.append(what))
    before = (root / MEMORY).read_bytes()
    _, ticks, saw = run_while_held(view.session.worker, lambda: view.act("redact"),
                                   lambda: (root / MEMORY).read_bytes() == before and view.list.count() == 2)
    assert ticks >= TICKS and saw and said and said[0].endswith(": redact…")
    assert "Deploy key [REDACTED:secret.aws-key] for staging" in (root / MEMORY).read_text()
    assert view.list.count() == 1


def test_a_connection_test_connects_on_a_worker(qtbot, prefs, user_config_dir):  # noqa: F811 (the fixture)
    from core.settings import connections

    page = prefs.connections
    connections.set_connection("gone", "host=127.0.0.1 port=1 dbname=memdesk user=memdesk connect_timeout=2")
    page.refresh()
    page.table.selectRow(page.names().index("gone"))
    _, ticks, saw = run_while_held(
        page._worker, lambda: qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton),
        lambda: page.status.text() == "Testing gone…" and not page.test_button.isEnabled())
    assert ticks >= TICKS and saw
    assert page.status.text().startswith("gone: cannot connect to ") and page.test_button.isEnabled()


def test_a_switch_to_a_backend_with_the_same_text_keeps_the_document(qtbot, window, sample_project):
    """file -> sqlite mirrors the same file: the editor keeps its document, undo and view (re-filling a
    1 MiB document after each switch held the GUI thread), and a save afterwards goes to the new backend."""
    edit = window.editor.text_edit
    edit.setFocus()
    qtbot.keyClicks(edit, "kept across the switch ")
    qtbot.keyClick(edit, Qt.Key.Key_S, CTRL)
    document, changes = edit.document(), []
    edit.textChanged.connect(lambda: changes.append(1))
    window.session.switch_backend("sqlite")
    assert window.session.backend.id == "sqlite"
    assert edit.document() is document and changes == [] and document.isUndoAvailable()
    assert window.editor.text().startswith("kept across the switch ") and not window.editor.dirty
    qtbot.keyClicks(edit, "then saved ")
    qtbot.keyClick(edit, Qt.Key.Key_S, CTRL)
    assert not window.editor.dirty and window.editor.notice.text() == ""
    text = (sample_project / ".fusion/memory.md").read_text(encoding="utf-8")
    assert text.startswith("kept across the switch then saved ")  # the cursor stayed where it was


def test_the_audit_report_is_saved_on_the_worker(qtbot, sample_project):
    from core.insights import MEMORY_AUDIT_PATH
    from tests.gui.views.test_audit_view import make_view

    view = make_view(qtbot, sample_project)
    report = sample_project / MEMORY_AUDIT_PATH
    report.unlink(missing_ok=True)
    _, ticks, saw = run_while_held(
        view.session.worker, lambda: qtbot.mouseClick(view.save_button, Qt.MouseButton.LeftButton),
        lambda: not view.save_button.isEnabled() and not report.exists())
    assert ticks >= TICKS and saw and view.save_button.isEnabled()
    assert report.read_text(encoding="utf-8").startswith("# ") and view.status.text().startswith("Saved ")


def test_opening_a_project_resolves_its_backend_off_the_gui_thread(qtbot, sample_project, monkeypatch):
    """Opening a project bound to a database connects while resolving its backend: the window keeps
    running and says so meanwhile (the open waits here on an event the GUI thread's timer sets)."""
    import threading

    from PySide6.QtCore import QTimer

    import gui.session as session_module

    real, gate, on_gui = session_module.open_project, threading.Event(), []

    def slow_open(root, registry=None):
        on_gui.append(threading.current_thread() is threading.main_thread())
        gate.wait(10)  # on the GUI thread this would hold it: the timer below could never set the gate
        return real(root, registry)

    monkeypatch.setattr(session_module, "open_project", slow_open)
    win = MainWindow(recent=RecentProjects(persist=False))
    qtbot.addWidget(win)
    win.show()
    ticks, said = [0], []

    def tick() -> None:
        ticks[0] += 1
        if ticks[0] == TICKS:
            said.append(win.status.currentMessage())
            gate.set()

    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(tick)
    timer.start()
    try:
        assert win.open_project(sample_project)
    finally:
        timer.stop()
        gate.set()
    assert on_gui == [False] and ticks[0] >= TICKS and said == [f"Opening {sample_project.name}…"]
    assert win.editor.text().startswith("# Project Memory")
    win.close()


def test_the_change_feed_connects_and_stops_off_the_gui_thread(qtbot):
    """Subscribing to a backend's changes connects (postgres LISTEN) and stopping joins the feed's thread
    (up to its 250 ms poll): both on the watcher's worker; a change the feed delivers still arrives."""
    import threading

    from gui.watcher import BackendChangeWatcher

    where: dict[str, bool] = {}

    class Handle:
        def stop(self) -> None:
            where["stop"] = threading.current_thread() is threading.main_thread()

    class Backend:
        def watch(self, callback):
            where["subscribe"] = threading.current_thread() is threading.main_thread()
            self.callback = callback
            return Handle()

    watcher = BackendChangeWatcher()
    backend = Backend()
    assert watcher.watch(backend) and watcher.active and where == {"subscribe": False}
    with qtbot.waitSignal(watcher.changed, timeout=5_000) as changed:
        threading.Thread(target=backend.callback, args=(type("Change", (), {"path": ".fusion/memory.md"})(),)).start()
    assert changed.args == [".fusion/memory.md"]
    watcher.stop()
    qtbot.waitUntil(lambda: "stop" in where, timeout=5_000)
    assert where == {"subscribe": False, "stop": False} and not watcher.active
