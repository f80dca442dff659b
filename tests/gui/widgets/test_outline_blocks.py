"""The outline reads headings as CommonMark does (core.documents.blocks): not inside HTML comments or code, and
``##\\tTitle``, setext and closing-hash headings too; typed with key events, as the operator sees it."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

MEMORY = ".fusion/memory.md"
TEXT = ("# Project Memory\n\n<!--\n## Hidden in a comment\n-->\n\n##\tArchitecture\n\n- one\n\n```\n## Fenced\n```\n\n"
        "Conventions\n-----------\n\n- two\n\n## Pitfalls ##\n\n- three\n")


def _titles(win) -> list[str]:
    tree = win.editor.outline.tree
    out = []
    for i in range(tree.topLevelItemCount()):
        top = tree.topLevelItem(i)
        out.append(top.text(0))
        out += [top.child(j).text(0) for j in range(top.childCount())]
    return out


def test_the_outline_follows_commonmark_as_the_operator_types(qtbot, open_budget_window, tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / ".fusion").mkdir(parents=True)
    (root / MEMORY).write_text(TEXT, encoding="utf-8")
    win = open_budget_window(root)
    qtbot.waitUntil(lambda: _titles(win) == ["Project Memory", "Architecture", "Conventions", "Pitfalls"],
                    timeout=5000)
    edit = win.editor.text_edit
    edit.setFocus()
    edit.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(edit, "<!--")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    qtbot.keyClicks(edit, "## Typed in a comment")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    qtbot.keyClicks(edit, "-->")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    qtbot.keyClicks(edit, "## Typed")
    qtbot.waitUntil(lambda: _titles(win)[-1] == "Typed", timeout=5000)
    assert "Typed in a comment" not in _titles(win) and "Hidden in a comment" not in _titles(win)
    assert "Fenced" not in _titles(win)
