"""The full text of one changed row, before and after, wrapped, with its changed words highlighted.

Long memory lines run far past the width of a diff pane; this strip shows the row under review whole.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QWidget

from core.documents.diff import DiffRow
from gui.widgets.colors import css, help_colour


def highlighted_html(text: str, spans: tuple[tuple[int, int], ...], word_role: str) -> str:
    """``text`` as HTML with ``spans`` on the ``word_role`` background."""
    out, last = [], 0
    for start, end in spans:
        out.append(html.escape(text[last:start]))
        out.append(f"<span style='background:{css(word_role)}'>{html.escape(text[start:end])}</span>")
        last = end
    out.append(html.escape(text[last:]))
    return "".join(out)


class LineDetail(QFrame):
    """Shows a row of a diff in full; hidden for unchanged rows."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.row: DiffRow | None = None
        self.heading = QLabel(self)
        pal = self.heading.palette()
        pal.setColor(self.heading.foregroundRole(), help_colour())
        self.heading.setPalette(pal)
        self.before = self._text_label()
        self.after = self._text_label()
        grid = QGridLayout(self)
        grid.setContentsMargins(8, 4, 8, 4)
        grid.addWidget(self.heading, 0, 0, 1, 2)
        grid.addWidget(self.before, 1, 0)
        grid.addWidget(self.after, 1, 1)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)
        self.hide()

    def _text_label(self) -> QLabel:
        label = QLabel(self)
        label.setWordWrap(True)
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return label

    def set_row(self, row: DiffRow | None, note: str = "") -> None:
        """Show ``row`` (``None`` or an unchanged row hides the strip), with ``note`` (a reason) after its place."""
        self.row = row
        if row is None or row.kind == "equal":
            self.hide()
            return
        where = {"replace": f"Line {row.left_no} changed (now line {row.right_no})",
                 "delete": f"Line {row.left_no} removed", "insert": f"Line {row.right_no} added"}[row.kind]
        self.heading.setText(f"{where} — reason given: {note}" if note else where)
        left = row.left if row.left is not None else ""
        right = row.right if row.right is not None else ""
        left_spans = row.left_spans if row.kind == "replace" else ()
        right_spans = row.right_spans if row.kind == "replace" else ()
        self.before.setText(f"<div style='background:{css('removed-line')}'>"
                            f"{highlighted_html(left, left_spans, 'removed-word')}</div>" if left else "")
        self.after.setText(f"<div style='background:{css('added-line')}'>"
                           f"{highlighted_html(right, right_spans, 'added-word')}</div>" if right else "")
        self.show()
