"""Scroll the editor and the preview together, both ways.

The preview already follows the editor (its top line, through the shared headings:
:meth:`gui.editor.preview.PreviewPane.follow_line`). This adds the other way: when the operator
scrolls the preview, the editor scrolls so the line shown at the preview's top is the editor's top
line — without moving the cursor, and without the preview snapping back to follow the editor.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer

from gui.editor.preview import PreviewPane
from gui.editor.text_edit import MemoryTextEdit


class ScrollSync(QObject):
    """Makes ``edit`` follow ``preview`` when the operator scrolls the preview."""

    def __init__(self, edit: MemoryTextEdit, preview: PreviewPane, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._edit, self._preview = edit, preview
        #: Whether the editor follows the preview (View ▸ Scroll editor and preview together).
        self.enabled = True
        # Only the operator's scrolling (wheel, keys, the scroll bar): a re-render that resets the
        # preview's scroll bar, or the preview following the editor, must not move the editor.
        bar = preview.browser.verticalScrollBar()
        bar.actionTriggered.connect(lambda _action: QTimer.singleShot(0, self._on_preview_scrolled))

    def _on_preview_scrolled(self) -> None:
        if not self.enabled or self._preview.following or not self._preview.isVisible():
            return
        line = self._preview.line_for_y(self._preview.browser.verticalScrollBar().value())
        if line == self._edit.first_visible_line():
            return
        block = self._edit.document().findBlockByNumber(min(line, self._edit.document().blockCount() - 1))
        if not block.isValid():
            return
        self._preview.follow_suspended = True
        try:
            self._edit.verticalScrollBar().setValue(block.firstLineNumber())
        finally:
            self._preview.follow_suspended = False
