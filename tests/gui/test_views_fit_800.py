"""Issue 22, "every view works at 800x600", found by looking at screenshots of every view (round 5):

- once the Insights view (561 px) had been shown, opening a document beside the editor made the window
  933 px wide: a tab widget asks for its widest page, shown or not;
- the conflict view with a document beside needed 911 px (its "N difference(s)…" line never wrapped);
- the status bar gave "Settings: …" 40 px, which showed "S" and a sliver;
- the consolidation view's middle column elided its buttons to "↑ P…nge" and "↓ N…nge".

Each is checked in the real window at 800x600 with the widgets' own sizes and texts.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from gui.widgets.diff_view import SideBySideDiff
from tests.gui.desk_window import CTRL, MEMORY


def at_800(qtbot, desk):
    desk.resize(800, 600)
    qtbot.wait(100)
    for key in desk.view_keys():  # every view built once, the widest among them
        desk.show_view(key)
        qtbot.wait(20)
    desk.show_view("editor")
    qtbot.wait(50)


def fits(desk) -> bool:
    return desk.minimumSizeHint().width() <= 800 and desk.width() == 800


def test_a_document_beside_the_editor_fits_800_after_every_view_was_shown(qtbot, desk):
    at_800(qtbot, desk)
    desk.actions_by_name["side"].trigger()
    qtbot.wait(100)
    assert desk.desk.side is not None and desk.desk.side.isVisible()
    assert fits(desk), desk.minimumSizeHint().width()
    desk.show_view("insights")  # the shown view's own minimum still holds
    qtbot.wait(50)
    assert desk.tabs.minimumSizeHint().width() >= desk.tabs.currentWidget().minimumSizeHint().width()


def test_the_conflict_view_beside_a_document_fits_800(qtbot, desk, layered_project):
    at_800(qtbot, desk)
    desk.actions_by_name["side"].trigger()
    editor = desk.editor
    edit = editor.text_edit
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_Home, CTRL)
    qtbot.keyClicks(edit, "MINE ")
    path = layered_project / MEMORY
    path.write_text("DISK " + path.read_text(encoding="utf-8"), encoding="utf-8")
    qtbot.waitUntil(lambda: editor.pages.currentWidget() is editor.conflict_view, timeout=5000)
    qtbot.wait(100)
    assert fits(desk), desk.minimumSizeHint().width()
    label = editor.conflict_view.position_label
    assert label.text() and label.wordWrap()


def test_the_status_bar_names_the_settings_store_whole_at_800(qtbot, desk):
    at_800(qtbot, desk)
    label = desk.status.store_label
    assert label.text().startswith("Settings: ")
    assert label.width() >= label.fontMetrics().horizontalAdvance(label.text())
    assert QLabel.text(label) == label.text()  # what is shown is the whole text, not "S…"
    assert fits(desk)


def test_the_consolidation_diff_buttons_are_whole_when_narrow(qtbot, desk):
    at_800(qtbot, desk)
    view = desk.show_view("consolidation")
    qtbot.wait(100)
    diff = view.findChild(SideBySideDiff)
    assert diff.width() < 400  # the middle column at 800 px
    for button, arrow in ((diff.previous_button, "↑"), (diff.next_button, "↓")):
        assert button.text() == arrow
        assert button.width() >= button.sizeHint().width()
        assert button.toolTip().endswith("F7)")
    desk.resize(1280, 800)
    desk.show_view("history")  # a wide one shows the words again
    qtbot.wait(100)
    wide = desk.tabs.currentWidget().findChild(SideBySideDiff)
    if wide is not None and wide.width() > 500:
        assert wide.previous_button.text() == "↑ Previous change"


def test_the_backend_details_wrap_instead_of_being_cut_at_800(qtbot, desk):
    at_800(qtbot, desk)
    view = desk.show_view("backends")
    qtbot.wait(100)
    list_width, details_width = view.splitter.sizes()
    assert 200 <= list_width <= 340 and details_width >= 250
    # was: the name in one line wider than the column, cut, and a sideways scroll bar under it
    assert view.title.wordWrap() and view.title.width() <= details_width
    assert view.title.heightForWidth(view.title.width()) <= view.title.height()  # all of it shown
    scroll = view.title.parentWidget().parentWidget().parentWidget()
    assert not scroll.horizontalScrollBar().isVisible()
    for badge in view.badges.findChildren(QLabel):
        if badge.isVisible():
            assert badge.width() >= badge.sizeHint().width()  # each badge whole


def test_the_document_list_drops_columns_before_it_cuts_names(qtbot, desk):
    desk.resize(1280, 800)
    qtbot.wait(100)
    desk.resize(800, 600)  # the list keeps most of its width when the window shrinks
    qtbot.wait(100)
    picker = desk.picker
    metrics = picker.fontMetrics()
    for path, item in picker._items.items():
        rect = picker.visualRect(picker.indexFromItem(item, 0))  # the name's cell, indentation excluded
        # was: Layer and Changed kept at 285 px, and "MEM…", "2026-…" left of them
        assert rect.width() >= metrics.horizontalAdvance(item.text(0)) + 4, (path, picker.width())
