"""The GUI thread never reads or writes a file of the project or of memdesk's state, lists or stats one,
opens a database or connects (issue 19 item 6), checked with Python's audit hooks and wrapped stat calls
(tests/gui/gui_thread_io.py) while the operator opens a project, shows every view, saves, switches
backends (file → sqlite → file, and postgres on a real cluster, where psycopg's connects are checked by
their thread), applies a prune, closes the project and quits, through the real window and keys."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.gui.gui_thread_io import recording

CTRL = Qt.KeyboardModifier.ControlModifier


def test_save_switch_history_and_audit_do_no_io_on_the_gui_thread(qtbot, window, sample_project):
    edit = window.editor.text_edit
    with recording() as seen:
        edit.setFocus()
        qtbot.keyClicks(edit, "typed on the GUI thread, written off it ")
        qtbot.keyClick(edit, Qt.Key.Key_S, CTRL)
        window.session.switch_backend("sqlite")
        qtbot.keyClicks(edit, "and on sqlite ")
        qtbot.keyClick(edit, Qt.Key.Key_S, CTRL)
        window.session.switch_backend("file")
        for key in window.view_keys():  # every view built and shown (History lists versions, Audit runs…)
            window.show_view(key)
            qtbot.wait(10)
        audit = window.show_view("audit")
        qtbot.mouseClick(audit.save_button, Qt.MouseButton.LeftButton)
    assert seen == [], "\n".join(seen)
    text = (sample_project / ".fusion/memory.md").read_text(encoding="utf-8")
    assert text.startswith("typed on the GUI thread, written off it and on sqlite ")
    assert (sample_project / ".fusion/memory-audit.md").is_file()


def test_a_prune_apply_does_no_io_on_the_gui_thread(qtbot, sample_project):
    from core.insights import MEMORY_WORKING_PATH
    from tests.gui.views.test_prune_view import load_reply, make_view

    view = make_view(qtbot, sample_project)
    load_reply(qtbot, view)
    before = (sample_project / MEMORY_WORKING_PATH).read_bytes()
    with recording() as seen:
        qtbot.mouseClick(view.apply_button, Qt.MouseButton.LeftButton)
    assert seen == [], "\n".join(seen)
    assert (sample_project / MEMORY_WORKING_PATH).read_bytes() != before


def _seeded(layered_project, user_config_dir):
    """The layered sample with two stored insight proposals, a dream waiting for review and a held write in
    the Inbox: every view has something of the project's own to read."""
    from datetime import UTC, datetime

    from core.automation.extraction import run_extraction
    from core.consolidation import run_dream
    from core.project import Project
    from core.providers import OfflineProvider
    from core.storage.pipeline import Writer

    root = layered_project
    for path in root.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    for _ in range(2):
        assert run_extraction(root, OfflineProvider("offline")).ok
    project = Project(root)
    try:
        run_dream(project, OfflineProvider("offline"), now=datetime(2026, 8, 21, tzinfo=UTC))
        held = project.append("Deploy key AKIAIOSFODNN7EXAMPLE for staging", writer=Writer("token", "ci-bot"),
                              source="http-append")
        assert held.status == "held"
    finally:
        project.close()
    return root


def test_open_every_view_save_switch_close_and_quit_read_nothing_on_the_gui_thread(qtbot, layered_project,
                                                                                    user_config_dir, tmp_path,
                                                                                    monkeypatch):
    """Opening a project, showing every view (stored proposals, a dream to review, a held write), saving,
    file → sqlite → file, closing the project and quitting: the GUI thread opens no file of the project or
    of memdesk's state, lists no folder of them and connects nowhere; all of it runs on the workers."""
    from PySide6.QtCore import QThreadPool

    from gui.main_window import MainWindow
    from gui.recent import RecentProjects

    root = _seeded(layered_project, user_config_dir)
    monkeypatch.setenv("MEMDESK_CACHE_DIR", str(tmp_path / "cache"))
    win = MainWindow(recent=RecentProjects(persist=False))
    win.confirm_discard = lambda: "discard"
    qtbot.addWidget(win)
    win.show()
    with recording() as seen:
        assert win.open_project(root)
        memory = root / win.session.current_path
        assert win.session.proposal is not None  # the newest stored proposal is under review
        for key in win.view_keys():
            win.show_view(key)
            qtbot.wait(20)
        inbox = win.show_view("inbox")
        assert inbox.list.count() == 1 and "ci-bot" in inbox.list.item(0).text()
        consolidation = win.show_view("consolidation")
        assert consolidation.proposal is not None and consolidation.scope.count() > 1
        win.tabs.setCurrentWidget(win.editor)
        edit = win.editor.text_edit
        edit.setFocus()
        qtbot.keyClicks(edit, "typed while nothing is read here ")
        qtbot.keyClick(edit, Qt.Key.Key_S, CTRL)
        win.session.switch_backend("sqlite")
        qtbot.keyClicks(edit, "and on sqlite ")
        qtbot.keyClick(edit, Qt.Key.Key_S, CTRL)
        assert win.session.backend.id == "sqlite" and not win.editor.dirty  # saved in the database
        win.session.switch_backend("file")
        win._close_project()
        assert win.session is None
        assert win.open_project(root)
        win.close()
        QThreadPool.globalInstance().waitForDone(5000)
    assert seen == [], "\n".join(seen)
    assert memory.read_text(encoding="utf-8").startswith("typed while nothing is read here # Project Memory")


def test_a_postgres_switch_connects_off_the_gui_thread(qtbot, window, sample_project, pg, pg_connection,
                                                       monkeypatch):
    """file → postgres, closed, opened again on postgres, → file, with the real cluster: the audit hook cannot
    see libpq's own connect, so every connection psycopg makes (the pool's, the change feed's) names its
    thread at psycopg's connect generator, wrapped here."""
    import threading

    import psycopg.generators

    from core.settings.bindings import confirmed
    from tests.core.pg_server import project_key

    real, threads = psycopg.generators.connect, []

    def spy(conninfo, *args, **kwargs):
        threads.append(threading.current_thread().name)
        return real(conninfo, *args, **kwargs)

    monkeypatch.setattr(psycopg.generators, "connect", spy)
    key = project_key()
    edit = window.editor.text_edit
    with recording() as seen:
        window.session.switch_backend("postgres", {"connection": pg_connection, "projectKey": key, "mirror": True})
        assert window.session.backend.id == "postgres"
        edit.setFocus()
        qtbot.keyClicks(edit, "kept in postgres ")
        qtbot.keyClick(edit, Qt.Key.Key_S, CTRL)
        assert not window.editor.dirty
        window._close_project()  # the pool and the change feed are closed on the worker
        assert window.open_project(sample_project)  # bound to postgres: opening connects
        assert window.session.backend.id == "postgres"
        assert window.editor.text_edit.toPlainText().startswith("kept in postgres ")
        window.session.switch_backend("file")
        window._close_project()
    assert seen == [], "\n".join(seen)
    assert confirmed(sample_project) == (pg_connection, key)
    main = threading.main_thread().name
    assert threads and main not in threads, threads
    assert (sample_project / ".fusion/memory.md").read_text(encoding="utf-8").startswith("kept in postgres ")
