"""The conflict view's next / previous difference (F7 / Shift+F7), driven with keys in the real window."""

from __future__ import annotations

from PySide6.QtCore import Qt

from gui.widgets.diff_navigator import diff_hunks
from gui.widgets.shortcuts_dialog import ShortcutsDialog
from tests.gui.desk_window import CTRL, MEMORY


def _conflict(qtbot, desk, root):
    """Edit line 1 and the last line in the editor, rewrite line 5 on disk: three differences."""
    editor = desk.editor
    edit = editor.text_edit
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_Home, CTRL)
    qtbot.keyClicks(edit, "MINE-TOP ")
    qtbot.keyClick(edit, Qt.Key.Key_End, CTRL)
    qtbot.keyClicks(edit, " MINE-END")
    lines = (root / MEMORY).read_text(encoding="utf-8").split("\n")
    lines[4] = "- DISK rewrote this line"
    (root / MEMORY).write_text("\n".join(lines), encoding="utf-8")
    qtbot.waitUntil(lambda: editor.pages.currentWidget() is editor.conflict_view, timeout=5000)
    view = editor.conflict_view
    qtbot.waitUntil(lambda: bool(view.navigator.hunks), timeout=5000)
    return view


def test_f7_and_shift_f7_step_through_the_differences(qtbot, desk, layered_project):
    view = _conflict(qtbot, desk, layered_project)
    count = len(view.navigator.hunks)
    assert count == 3
    assert view.position_label.text() == "3 difference(s): F7 goes to the first"
    focus = view.merge_button
    qtbot.keyClick(focus, Qt.Key.Key_F7)
    assert view.position_label.text() == "Difference 1 of 3"
    assert view.mine.textCursor().selectedText().startswith("MINE-TOP # Project Memory")
    qtbot.keyClick(focus, Qt.Key.Key_F7)
    assert view.position_label.text() == "Difference 2 of 3"
    assert view.disk.textCursor().selectedText() == "- DISK rewrote this line"
    assert view.disk.textCursor().blockNumber() == 4
    qtbot.keyClick(focus, Qt.Key.Key_F7)
    assert view.mine.textCursor().selectedText().endswith(" MINE-END")
    qtbot.keyClick(focus, Qt.Key.Key_F7)  # wraps to the first
    assert view.position_label.text() == "Difference 1 of 3"
    qtbot.keyClick(focus, Qt.Key.Key_F7, Qt.KeyboardModifier.ShiftModifier)  # and back to the last
    assert view.position_label.text() == "Difference 3 of 3"
    # The last line is put in the upper third of the pane, not on its last visible row.
    rows = view.mine.viewport().height() // view.mine.fontMetrics().lineSpacing()
    first_shown = view.mine.firstVisibleBlock().blockNumber()
    assert view.mine.textCursor().blockNumber() - first_shown <= max(rows // 3 + 1, 1) or \
        view.mine.verticalScrollBar().value() == view.mine.verticalScrollBar().maximum()


def test_diff_hunks_are_the_blocks_in_order():
    only_a, only_b, hunks = diff_hunks("a\nb\nc\nd\n", "a\nB\nc\nd\ne\n")
    assert (only_a, only_b) == ({1}, {1, 4})
    assert [tuple(h) for h in hunks] == [(1, 2, 1, 2), (4, 4, 4, 5)]


def test_next_difference_is_listed(qtbot, desk, layered_project):
    _conflict(qtbot, desk, layered_project)
    rows = ShortcutsDialog(desk).rows
    assert ("Conflict", "Next difference", "F7") in rows
    assert ("Conflict", "Previous difference", "Shift+F7") in rows


def test_ctrl_shift_b_shows_the_base_tinted_by_who_changed_each_line(qtbot, desk, layered_project):
    original = (layered_project / MEMORY).read_text(encoding="utf-8")
    view = _conflict(qtbot, desk, layered_project)
    assert not view.base_pane.isVisible()
    qtbot.keyClick(view.merge_button, Qt.Key.Key_B,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert view.base_pane.isVisible() and view.base_button.isChecked()
    assert view.base_pane.text.toPlainText() == original.rstrip("\n") or \
        view.base_pane.text.toPlainText() == original
    assert view.base_pane.summary == "Base: 1 line(s) changed by you, 1 on disk, 0 by both"  # the end: added, no base line
    assert len(view.base_pane.text.extraSelections()) == 2
    qtbot.keyClick(view.merge_button, Qt.Key.Key_B,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert not view.base_pane.isVisible()


def test_base_changes_marks_lines_both_sides_changed():
    from gui.widgets.base_pane import base_changes

    by_mine, by_disk = base_changes("a\nb\nc\n", "a\nB1\nc\n", "a\nB2\nc\nd\n")
    assert by_mine == {1} and by_disk == {1}
