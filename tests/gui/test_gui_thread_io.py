"""The GUI thread never writes a file, opens a database or connects (issue 19 item 6), checked with
Python's audit hooks while the operator saves, switches backends, looks at History and the Audit, creates a
document, applies a prune and saves a connection, through the real window and keys."""

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
    from tests.gui.test_prune_view import load_reply, make_view

    view = make_view(qtbot, sample_project)
    load_reply(qtbot, view)
    before = (sample_project / MEMORY_WORKING_PATH).read_bytes()
    with recording() as seen:
        qtbot.mouseClick(view.apply_button, Qt.MouseButton.LeftButton)
    assert seen == [], "\n".join(seen)
    assert (sample_project / MEMORY_WORKING_PATH).read_bytes() != before
