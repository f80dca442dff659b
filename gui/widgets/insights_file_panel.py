"""The insights file, two ways: grouped by category (tree with counts and sources, each insight's inline
markdown rendered) and raw text to edit.

The panel does no I/O: it is given the file's text and emits ``saveRequested(text)`` when the
operator saves the raw text.
"""

from __future__ import annotations

import html
import re

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Signal
from PySide6.QtGui import QFontDatabase, QPalette
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from core.insights import InsightSection, parse_insights_markdown
from gui.models import USER, InsightTreeModel, display_content
from gui.proposal_text import inline_html
from gui.widgets.review_list import RichTextDelegate, RichTree

_LAST_UPDATED = re.compile(r"^## Last Updated:\s*(.+?)\s*$", re.MULTILINE)


def last_updated(text: str | None) -> str | None:
    """The date on the ``## Last Updated:`` line, if any."""
    match = _LAST_UPDATED.search(text or "")
    return match.group(1) if match else None


class InsightDelegate(RichTextDelegate):
    """A section row in bold with its count; an insight rendered, its source after it."""

    def html(self, index: QModelIndex | QPersistentModelIndex, palette: QPalette, selected: bool) -> str:
        """The rich text of a section or an insight row."""
        muted = palette.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.PlaceholderText)
        bullet = index.data(USER)
        if bullet is None:
            return f"<b>{html.escape(str(index.data() or ''))}</b>"
        source = f" <span style='color:{muted.name()}'><small>· {html.escape(bullet.source)}</small></span>" \
            if bullet.source else ""
        return inline_html(display_content(bullet.content)) + source


class InsightsFilePanel(QWidget):
    """Tabs "By category" and "Raw" over the text of ``.fusion/memory-insights.md``."""

    saveRequested = Signal(str)
    reloadRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.sections: list[InsightSection] = []
        self.model = InsightTreeModel(self)
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        self.tree = RichTree(self, InsightDelegate)
        self.tree.setModel(self.model)
        self.tree.setColumnHidden(1, True)  # the source is written after each insight
        self.tree.setAlternatingRowColors(True)
        grouped = QWidget(self)
        col = QVBoxLayout(grouped)
        col.addWidget(self.summary)
        col.addWidget(self.tree, 1)

        self.raw = QPlainTextEdit(self)
        self.raw.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.raw_status = QLabel(self)
        self.raw_status.setWordWrap(True)
        self.reload_button = QPushButton("Reload", self)
        self.reload_button.setToolTip("Discard the edits and show the file as it is on disk")
        self.save_button = QPushButton("Save", self)
        raw_page = QWidget(self)
        raw_col = QVBoxLayout(raw_page)
        raw_col.addWidget(self.raw, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.raw_status, 1)
        buttons.addWidget(self.reload_button)
        buttons.addWidget(self.save_button)
        raw_col.addLayout(buttons)

        self.tabs = QTabWidget(self)
        self.tabs.addTab(grouped, "By category")
        self.tabs.addTab(raw_page, "Raw")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)

        self.raw.modificationChanged.connect(self._update_buttons)
        self.save_button.clicked.connect(lambda: self.saveRequested.emit(self.raw.toPlainText()))
        self.reload_button.clicked.connect(self.reloadRequested)
        self._update_buttons()

    def set_text(self, text: str | None, *, keep_edits: bool = True) -> None:
        """Show the file's ``text`` (``None``: no file yet); raw edits in progress are kept if asked."""
        self.sections = parse_insights_markdown(text)
        self.model.set_sections(self.sections)
        self.tree.expandAll()
        total = sum(len(s.bullets) for s in self.sections)
        if text is None:
            self.summary.setText("No insights file yet: merging accepted insights creates it.")
        else:
            date = last_updated(text)
            self.summary.setText(f"<b>{total} insights</b> in {len(self.sections)} sections"
                                 + (f" · last updated <b>{date}</b>" if date else ""))
        if not (keep_edits and self.raw.document().isModified()):
            self.raw.setPlainText(text or "")
            self.raw.document().setModified(False)
        self._update_buttons()

    def set_read_only(self, read_only: bool, why: str = "") -> None:
        """Forbid raw edits (an unreadable file), saying why."""
        self.raw.setReadOnly(read_only)
        if why:
            self.raw_status.setText(why)
        self._update_buttons()

    def raw_modified(self) -> bool:
        """True when the raw text has unsaved edits."""
        return self.raw.document().isModified()

    def mark_saved(self, message: str) -> None:
        """The raw text was saved."""
        self.raw.document().setModified(False)
        self.raw_status.setText(message)

    def _update_buttons(self, *_args: object) -> None:
        modified = self.raw.document().isModified()
        self.save_button.setEnabled(modified and not self.raw.isReadOnly())
        self.reload_button.setEnabled(modified)
        if modified:
            self.raw_status.setText("Unsaved edits.")
