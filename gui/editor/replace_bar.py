"""Find and replace (Ctrl+H): a "Replace with" row under the editor's find bar.

The find bar (:mod:`gui.editor.find_bar`) keeps finding (case-insensitive, literal); this row adds
the replacement. Enter or "Replace" replaces the match that is selected and selects the next one
(the first press on an unselected match only selects it, as in every editor); Ctrl+Alt+Enter or
"Replace all" replaces every match as one undo step (Ctrl+Z brings them all back). Nothing is
written to disk: the edits are the editor's, saved with Ctrl+S like any other. A read-only
document is never changed: the row says why.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent, QTextCursor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit, QPushButton, QWidget

from gui.editor.find_bar import FindBar
from gui.editor.finder import Finder
from gui.editor.search_text import find_matches

REPLACE_KEYS = "Ctrl+H"


class ReplaceBar(QWidget):
    """The replacement field and its two buttons; works on ``edit`` through ``finder``'s query."""

    replaced = Signal(int)  # how many matches one action replaced

    def __init__(self, edit: QPlainTextEdit, find_bar: FindBar, finder: Finder, text: Callable[[], str],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("replaceBar")
        self._edit, self._find_bar, self._finder, self._text = edit, find_bar, finder, text
        self.field = QLineEdit(self)
        self.field.setObjectName("replaceField")
        self.field.setPlaceholderText("Replace with")
        self.result_label = QLabel("", self)
        self.result_label.setObjectName("replaceResult")
        self.result_label.setMinimumWidth(80)
        self.replace_button = QPushButton("&Replace", self)
        self.replace_button.setToolTip("Replace the selected match and select the next (Enter)")
        self.replace_all_button = QPushButton("Replace &all", self)
        self.replace_all_button.setToolTip("Replace every match, as one undo step (Ctrl+Alt+Enter)")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 0, 8, 4)
        label = QLabel("Replace:", self)
        label.setBuddy(self.field)
        layout.addWidget(label)
        layout.addWidget(self.field, 1)
        layout.addWidget(self.result_label)
        layout.addWidget(self.replace_button)
        layout.addWidget(self.replace_all_button)
        self.replace_button.clicked.connect(self.replace_next)
        self.replace_all_button.clicked.connect(self.replace_all)
        self.field.installEventFilter(self)
        find_bar.closeRequested.connect(lambda: self.setVisible(False))
        self.setVisible(False)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Enter replaces one, Ctrl+Alt+Enter all, Shift+Enter steps back, Esc closes both rows."""
        if watched is self.field and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            mods = event.modifiers()
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                all_mods = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
                if (mods & all_mods) == all_mods:
                    self.replace_all()
                elif mods & Qt.KeyboardModifier.ShiftModifier:
                    self._finder.find_previous()
                else:
                    self.replace_next()
                return True
            if event.key() == Qt.Key.Key_Escape:
                self.setVisible(False)
                self._finder.close()
                return True
        return super().eventFilter(watched, event)

    def open(self) -> None:
        """Show the find bar and this row; focus the find field when it is empty, else this one."""
        self._finder.open()
        self.setVisible(True)
        self.result_label.setText("")
        if self._find_bar.query():
            self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
            self.field.selectAll()

    def _blocked(self) -> bool:
        if self._edit.isReadOnly():
            self.result_label.setText("Read-only")
            self.result_label.setToolTip("This document is read-only (the banner above says why); nothing replaced.")
            return True
        return False

    def _selected_match(self) -> bool:
        cursor = self._edit.textCursor()
        start, length = cursor.selectionStart(), cursor.selectionEnd() - cursor.selectionStart()
        return length > 0 and (start, length) in set(find_matches(self._text(), self._find_bar.query()))

    def replace_next(self) -> int:
        """Replace the selected match (if a match is selected) and select the next; return 0 or 1."""
        if not self._find_bar.query() or self._blocked():
            return 0
        done = 0
        if self._selected_match():
            self._edit.textCursor().insertText(self.field.text())
            self._finder.invalidate()
            done = 1
        self._finder.find_next()
        if done:
            self.result_label.setText("Replaced 1")
            self.replaced.emit(1)
        return done

    def replace_all(self) -> int:
        """Replace every match as one undo step; return how many."""
        query = self._find_bar.query()
        if not query or self._blocked():
            return 0
        matches = find_matches(self._text(), query)
        if matches:
            replacement = self.field.text()
            cursor = QTextCursor(self._edit.document())
            cursor.beginEditBlock()
            for start, length in reversed(matches):  # from the end: earlier positions stay valid
                cursor.setPosition(start)
                cursor.setPosition(start + length, QTextCursor.MoveMode.KeepAnchor)
                cursor.insertText(replacement)
            cursor.endEditBlock()
            self._finder.invalidate()
            self._finder.refresh_count()
        self.result_label.setText(f"Replaced {len(matches):,}" if matches else "No matches")
        self.replaced.emit(len(matches))
        return len(matches)
