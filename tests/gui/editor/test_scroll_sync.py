"""The editor and the preview scroll together both ways, on the real 1,293-line memory."""

from __future__ import annotations

from PySide6.QtCore import Qt


def test_scrolling_the_preview_scrolls_the_editor_without_moving_the_cursor(qtbot, open_editor, real_project):
    editor = open_editor(real_project, size=(1200, 700))
    qtbot.waitUntil(lambda: editor.preview.render_count > 0, timeout=10_000)
    editor.preview.render_now()
    edit, preview = editor.text_edit, editor.preview
    cursor_before = edit.textCursor().position()
    bar = preview.browser.verticalScrollBar()
    assert bar.maximum() > 0
    preview.browser.setFocus()
    for _ in range(12):  # the operator pages down in the preview
        qtbot.keyClick(preview.browser, Qt.Key.Key_PageDown)
    qtbot.wait(50)  # the editor follows once the scroll has happened
    value = bar.value()
    assert value > 0
    line = preview.line_for_y(value)
    assert line > 10
    assert abs(edit.first_visible_line() - line) <= 1  # the editor shows the same place
    assert edit.textCursor().position() == cursor_before  # and the cursor stayed where it was
    assert bar.value() == value  # the preview did not snap back to follow the editor


def test_a_preview_render_does_not_move_the_editor(qtbot, open_editor, real_project):
    editor = open_editor(real_project, size=(1200, 700))
    qtbot.waitUntil(lambda: editor.preview.render_count > 0, timeout=10_000)
    edit = editor.text_edit
    edit.verticalScrollBar().setValue(edit.verticalScrollBar().maximum() // 3)
    top = edit.first_visible_line()
    editor.preview.render_now()  # a fresh render resets the preview's scroll bar
    qtbot.wait(50)
    assert edit.first_visible_line() == top
