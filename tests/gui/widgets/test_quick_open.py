"""Quick open (Ctrl+P) over every document and the command palette (Ctrl+Shift+P), through the real window."""

from __future__ import annotations

from PySide6.QtCore import Qt

from gui.fuzzy import FuzzyIndex, fuzzy_score, match_positions
from gui.widgets.shortcuts_dialog import ShortcutsDialog
from tests.gui.desk_window import CTRL, CTRL_SHIFT

REVIEWER = ".fusion/agent-memory/reviewer/MEMORY.md"


def test_fuzzy_ranks_the_name_over_the_folders_and_splits_on_spaces():
    paths = [".fusion/memory/MEMORY.md", ".fusion/memory/DREAMS.md", REVIEWER,
             ".fusion/agent-memory/reviewer/2026-08-20.md", ".fusion/memory/2026-08-19.md"]
    index = FuzzyIndex(paths)
    assert [paths[m.index] for m in index.search("dream")] == [".fusion/memory/DREAMS.md"]
    assert paths[index.search("rev mem")[0].index] == REVIEWER
    assert paths[index.search("0819")[0].index] == ".fusion/memory/2026-08-19.md"
    assert [paths[m.index] for m in index.search("rev 0820")] == [".fusion/agent-memory/reviewer/2026-08-20.md"]
    assert index.search("qqq") == []
    assert fuzzy_score("dms", "DREAMS.md") is not None and fuzzy_score("smd", "ab") is None
    assert match_positions("drm", ".fusion/memory/DREAMS.md") == [15, 16, 19]  # D, R, M of DREAMS


def test_ctrl_p_filters_as_you_type_and_enter_opens_the_document(qtbot, desk):
    edit = desk.editor.text_edit
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_P, CTRL)
    picker = desk.desk.quick_open
    assert picker is not None and picker.isVisible()
    qtbot.waitUntil(picker.field.hasFocus, timeout=3000)
    assert len(picker.shown_texts()) == len(desk.session.documents()) == 10
    qtbot.keyClicks(picker.field, "rev mem")
    assert picker.shown_texts()[0] == REVIEWER  # filtered on the keystroke, no timer
    assert picker.count_label.text().endswith("of 10")
    qtbot.keyClick(picker.field, Qt.Key.Key_Return)
    assert not picker.isVisible()
    assert desk.session.current_path == REVIEWER
    assert desk.editor.text_edit.toPlainText() == (desk.session.root / REVIEWER).read_text(encoding="utf-8")


def test_quick_open_arrows_choose_another_row_and_esc_closes(qtbot, desk):
    picker = desk.desk.show_quick_open()
    qtbot.keyClicks(picker.field, "md")
    shown = picker.shown_texts()
    qtbot.keyClick(picker.field, Qt.Key.Key_Down)
    qtbot.keyClick(picker.field, Qt.Key.Key_Return)
    assert desk.session.current_path == shown[1]
    picker = desk.desk.show_quick_open()
    current = desk.session.current_path
    qtbot.keyClicks(picker.field, "dreams")
    qtbot.keyClick(picker.field, Qt.Key.Key_Escape)
    assert not picker.isVisible() and desk.session.current_path == current


def test_quick_open_with_no_match_opens_nothing(qtbot, desk):
    picker = desk.desk.show_quick_open()
    qtbot.keyClicks(picker.field, "zzzz")
    assert picker.shown_texts() == [] and picker.count_label.text() == "0 of 10"
    qtbot.keyClick(picker.field, Qt.Key.Key_Return)
    assert picker.isVisible() and desk.session.current_path == ".fusion/memory/MEMORY.md"


def test_the_command_palette_runs_the_action_chosen(qtbot, desk):
    edit = desk.editor.text_edit
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_P, CTRL_SHIFT)
    palette = desk.desk.palette
    assert palette is not None and palette.isVisible()
    assert "File: Save all" in palette.shown_texts() and "Edit: Find and replace" in palette.shown_texts()
    qtbot.keyClicks(palette.field, "toggle prev")
    assert palette.shown_texts()[0] == "View: Toggle preview"
    shown_before = not desk.editor.preview.isHidden()
    qtbot.keyClick(palette.field, Qt.Key.Key_Return)
    assert not palette.isVisible()
    assert (not desk.editor.preview.isHidden()) != shown_before


def test_the_palette_opens_find_and_replace_from_its_name(qtbot, desk):
    palette = desk.desk.show_palette()
    qtbot.keyClicks(palette.field, "replace")
    qtbot.keyClick(palette.field, Qt.Key.Key_Return)
    assert desk.editor.replace_bar.isVisible()


def test_quick_open_and_the_palette_are_listed_in_the_shortcuts(desk):
    rows = ShortcutsDialog(desk).rows
    assert ("File", "Quick open", "Ctrl+P") in rows
    assert ("View", "Command palette", "Ctrl+Shift+P") in rows
