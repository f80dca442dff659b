"""Issue 23's leftover 5: the Activity view reads at 800×600. Its "What" column had ~130 px beside columns sized
for 26 characters, cut in its middle: a firewall report read "secret.a…t appli…". Now the narrow columns fit
what they hold, "What" keeps its start (the rule and the line) and wraps onto two lines when narrow, its
tooltip holds it whole, and the selected row's "What" is shown whole under the table.

A real window with a sqlite-mirrored project: the agent's ``>>`` of a key is taken in by ``memdesk append`` (its
own process) and flagged; the rows are walked with the arrow keys. With ``MEMDESK_SHOTS`` set, pictures at
800×600 and 1600×1000, light and dark, are saved there.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QStyleOptionViewItem

from gui.views.activity_view import ActivityView
from tests.gui.views.mirrored_key import KEY, mirrored_key_project

RULE = "secret.aws-key (secret) at line"


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_activity_view_reads_at_800x600(qtbot, tmp_path, monkeypatch, theme):
    from gui.main_window import MainWindow
    from gui.recent import RecentProjects
    from gui.theme import ThemeManager

    monkeypatch.setenv("MEMDESK_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("MEMDESK_CACHE_DIR", str(tmp_path / "cache"))
    root = mirrored_key_project(tmp_path)
    manager = ThemeManager(persist=False)
    manager.set_mode(theme, remember=False)
    manager.apply()
    win = MainWindow(recent=RecentProjects(persist=False), theme=manager)
    qtbot.addWidget(win)
    win.confirm_discard = lambda: "discard"
    win.resize(800, 600)
    win.show()
    qtbot.waitExposed(win)
    win.open_project(root)
    view = win.show_view("activity")
    assert isinstance(view, ActivityView)
    qtbot.waitUntil(lambda: view.load_count > 0, timeout=5000)
    table = view.table
    rows = view.visible_rows()
    flag_row = next(i for i, r in enumerate(rows) if r[4].startswith(RULE))
    entry = view.model.entry(flag_row)
    whole = entry.text.splitlines()[0]
    assert len(whole) > 200 and whole.startswith(RULE)

    # What the cell paints: cut at its end (its start stays), wide enough for the rule and its line at least.
    index = view.model.index(flag_row, 4)
    option = QStyleOptionViewItem()
    table.initViewItemOption(option)  # as the table starts each cell's option before its delegate paints it
    table.itemDelegateForIndex(index).initStyleOption(option, index)
    assert option.textElideMode == Qt.TextElideMode.ElideRight
    assert option.features & QStyleOptionViewItem.ViewItemFeature.WrapText  # "What" wraps when narrow
    what = table.columnWidth(4)
    assert 2 * what >= table.fontMetrics().horizontalAdvance(RULE + " 4 in .fusion/memory.md: flagged"), what
    assert what >= table.viewport().width() * 0.33, (what, table.viewport().width())
    assert table.wordWrap() and table.rowHeight(flag_row) >= 2 * table.fontMetrics().lineSpacing()
    doc = view.model.index(flag_row, 3)
    option = QStyleOptionViewItem()
    table.initViewItemOption(option)
    table.itemDelegateForIndex(doc).initStyleOption(option, doc)
    assert option.textElideMode == Qt.TextElideMode.ElideLeft  # a path keeps its file name, on one line
    assert not option.features & QStyleOptionViewItem.ViewItemFeature.WrapText
    # The whole report: in the tooltip, and under the table once the row is selected with the keyboard.
    assert whole in view.model.data(index, Qt.ItemDataRole.ToolTipRole).replace("&#x27;", "'")
    assert view.detail.isHidden()
    table.setFocus()
    qtbot.keyClick(table, Qt.Key.Key_Home)
    for _ in range(flag_row):
        qtbot.keyClick(table, Qt.Key.Key_Down)
    assert table.currentIndex().row() == flag_row
    assert view.detail.isVisible() and view.detail.text() == f"memory.md: {whole}"
    # Laid out whole, between the table and the count, every line of it inside the window.
    qtbot.waitUntil(lambda: view.detail.geometry().bottom() < view.count_label.geometry().top(), timeout=3000)
    lines = view.detail.height() // view.detail.fontMetrics().lineSpacing()
    assert 2 <= lines <= 6, lines  # the whole report (some 260 characters) on the lines it takes
    assert view.table.geometry().bottom() < view.detail.geometry().top()
    bottom = view.detail.mapTo(win, view.detail.rect().bottomLeft()).y()
    assert bottom <= win.height(), (bottom, win.height())
    assert KEY not in view.detail.text() and not any(KEY in c for r in view.visible_rows() for c in r)
    _shot(win, f"activity-{theme}-800x600.png")

    win.resize(1600, 1000)
    qtbot.waitUntil(lambda: table.viewport().width() > 1000, timeout=5000)
    assert not table.wordWrap()  # wide: one line a row
    assert table.columnWidth(4) >= table.fontMetrics().horizontalAdvance(whole[:100])
    assert view.detail.text() == f"memory.md: {whole}"
    qtbot.waitUntil(lambda: view.detail.height() < 3 * view.detail.fontMetrics().lineSpacing(), timeout=3000)
    _shot(win, f"activity-{theme}-1600x1000.png")
    win.close()


def _shot(win, name: str) -> None:
    shots = os.environ.get("MEMDESK_SHOTS")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        win.grab().save(str(Path(shots) / name))


def test_walking_the_rows_does_not_fit_the_columns_again(qtbot, tmp_path, monkeypatch):
    """The line under the table changes height as rows are walked; that is no reason to measure the rows again
    (it did: scrolling 10,000 writes with PageDown took twice its CPU, ``python -m bench gui``)."""
    from gui.main_window import MainWindow
    from gui.recent import RecentProjects
    from gui.views import activity_layout

    monkeypatch.setenv("MEMDESK_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("MEMDESK_CACHE_DIR", str(tmp_path / "cache"))
    root = mirrored_key_project(tmp_path)
    win = MainWindow(recent=RecentProjects(persist=False))
    qtbot.addWidget(win)
    win.confirm_discard = lambda: "discard"
    win.resize(800, 600)
    win.show()
    qtbot.waitExposed(win)
    win.open_project(root)
    view = win.show_view("activity")
    qtbot.waitUntil(lambda: view.load_count > 0, timeout=5000)
    fits: list[int] = []
    real = activity_layout.fit_columns
    monkeypatch.setattr(activity_layout, "fit_columns", lambda table: (fits.append(1), real(table)))
    view.table.setFocus()
    heights = set()
    for key in (Qt.Key.Key_Home, Qt.Key.Key_Down, Qt.Key.Key_Down, Qt.Key.Key_Up, Qt.Key.Key_End):
        qtbot.keyClick(view.table, key)
        qtbot.wait(20)  # the layout settles: the table's height follows the line under it
        heights.add(view.detail.height())
    assert len(heights) > 1  # the line did change height (short and long rows)
    assert fits == []
    win.resize(900, 600)
    qtbot.waitUntil(lambda: bool(fits), timeout=3000)  # a new width fits them again
    win.close()
