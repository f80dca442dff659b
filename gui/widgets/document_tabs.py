"""Open documents as tabs above the editor: every document opened this session, "•" on unsaved ones.

A click (or Ctrl+PgDown / Ctrl+PgUp) shows another; the editor keeps each one's text, undo and
unsaved edits (:mod:`gui.editor.documents`). Ctrl+W or a tab's × closes a tab — one with unsaved edits
is not closed (the status bar says to save it first), so no tab ever takes edits away with it.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QTabBar, QWidget

NEXT_KEYS, PREVIOUS_KEYS, CLOSE_KEYS = "Ctrl+PgDown", "Ctrl+PgUp", "Ctrl+W"


def tab_title(relpath: str) -> str:
    """``MEMORY.md``, ``reviewer/2026-08-20.md`` for an agent's file, a daily note's date…"""
    parts = relpath.split("/")
    if len(parts) >= 2 and parts[-3:-2] == ["agent-memory"]:
        return f"{parts[-2]}/{parts[-1]}"
    return parts[-1]


class DocumentTabs(QTabBar):
    """One tab per opened document; ``documentChosen(path)`` when the operator picks one."""

    documentChosen = Signal(str)
    message = Signal(str)

    def __init__(self, is_dirty: Callable[[str], bool], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("documentTabs")
        self._is_dirty = is_dirty
        self.setTabsClosable(True)
        self.setMovable(True)
        self.setExpanding(False)
        self.setDocumentMode(True)
        self.setElideMode(self.elideMode().ElideMiddle)
        self.setUsesScrollButtons(True)
        self._syncing = False
        self.currentChanged.connect(self._on_current)
        self.tabCloseRequested.connect(self.close_tab)

    def paths(self) -> list[str]:
        """The documents in tab order."""
        return [self.tabData(i) for i in range(self.count())]

    def show_document(self, relpath: str) -> None:
        """Make ``relpath``'s tab current (added at the end when new)."""
        self._syncing = True
        try:
            index = self.paths().index(relpath) if relpath in self.paths() else -1
            if index < 0:
                index = self.addTab(tab_title(relpath))
                self.setTabData(index, relpath)
                self.setTabToolTip(index, relpath)
                self._mark(index, self._is_dirty(relpath))
            self.setCurrentIndex(index)
        finally:
            self._syncing = False

    def set_dirty(self, relpath: str, dirty: bool) -> None:
        """Mark (or unmark) ``relpath`` as having unsaved edits."""
        if relpath in self.paths():
            self._mark(self.paths().index(relpath), dirty)

    def _mark(self, index: int, dirty: bool) -> None:
        title = tab_title(self.tabData(index))
        self.setTabText(index, f"{title} •" if dirty else title)

    def _on_current(self, index: int) -> None:
        if not self._syncing and index >= 0:
            self.documentChosen.emit(self.tabData(index))

    def step(self, delta: int) -> None:
        """Show the next (``1``) or previous (``-1``) tab, wrapping."""
        if self.count() > 1:
            self.setCurrentIndex((self.currentIndex() + delta) % self.count())

    def close_tab(self, index: int | None = None) -> bool:
        """Close tab ``index`` (the current one by default) unless its document has unsaved edits."""
        index = self.currentIndex() if index is None else index
        if index < 0 or self.count() <= 1:
            return False
        path = self.tabData(index)
        if self._is_dirty(path):
            self.message.emit(f"{path} has unsaved edits: save it (Ctrl+S) first; the tab stays open")
            return False
        self.removeTab(index)  # the current one removed: the next becomes current and is shown
        return True
