"""Markdown syntax highlighting for the memory editor, one block (line) at a time.

Highlights headings, list markers, inline code, bold, HTML comments (also across lines), fenced
code blocks and the dated entry markers (``<!-- YYYY-MM-DD -->``) that agents append. Work per
block is a few precompiled regular expressions, so typing stays fast in a 1 MiB file.
"""

from __future__ import annotations

import re

from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat, QTextDocument

_NORMAL, _IN_COMMENT, _IN_FENCE = -1, 1, 2

_HEADING = re.compile(r"^#{1,6}(\s|$)")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])(?=\s)")
_DATED = re.compile(r"^\s*<!-- \d{4}-\d{2}-\d{2} -->\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE = re.compile(r"`[^`\n]+`|\*\*[^*\n]+\*\*|__[^_\n]+__|<!--")


def _fmt(color: str, *, bold: bool = False, italic: bool = False, mono: bool = False,
         background: str | None = None) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(color))
    if bold:
        fmt.setFontWeight(QFont.Weight.Bold)
    if italic:
        fmt.setFontItalic(True)
    if mono:
        fmt.setFontFixedPitch(True)
    if background:
        fmt.setBackground(QColor(background))
    return fmt


class MarkdownHighlighter(QSyntaxHighlighter):
    """A ``QSyntaxHighlighter`` for memory markdown; attach it to the editor's document."""

    def __init__(self, document: QTextDocument | None = None) -> None:
        super().__init__(document)
        self.heading = _fmt("#1d4f91", bold=True)
        self.bullet = _fmt("#b35900", bold=True)
        self.code = _fmt("#8a1c5a", mono=True, background="#f3eef2")
        self.bold = _fmt("#202020", bold=True)
        self.comment = _fmt("#7a8290", italic=True)
        self.dated = _fmt("#0b7a3e", bold=True, background="#e6f4ea")
        self.fence = _fmt("#5a5a5a", mono=True, background="#f4f4f4")

    def highlightBlock(self, text: str) -> None:
        """Format one line; the block state carries open comments and code fences to the next."""
        previous = self.previousBlockState()
        if previous == _IN_FENCE:
            self.setFormat(0, len(text), self.fence)
            self.setCurrentBlockState(_NORMAL if _FENCE.match(text) else _IN_FENCE)
            return
        self.setCurrentBlockState(_NORMAL)
        if not text:
            if previous == _IN_COMMENT:
                self.setCurrentBlockState(_IN_COMMENT)
            return
        start = 0
        if previous == _IN_COMMENT:
            end = text.find("-->")
            if end < 0:
                self.setFormat(0, len(text), self.comment)
                self.setCurrentBlockState(_IN_COMMENT)
                return
            start = end + 3
            self.setFormat(0, start, self.comment)
        elif _FENCE.match(text):
            self.setFormat(0, len(text), self.fence)
            self.setCurrentBlockState(_IN_FENCE)
            return
        elif _DATED.match(text):
            self.setFormat(0, len(text), self.dated)
            return
        elif _HEADING.match(text):
            self.setFormat(0, len(text), self.heading)
            return
        else:
            bullet = _BULLET.match(text)
            if bullet:
                self.setFormat(bullet.start(), bullet.end() - bullet.start(), self.bullet)
        self._highlight_inline(text, start)

    def _highlight_inline(self, text: str, start: int) -> None:
        pos = start
        while True:
            m = _INLINE.search(text, pos)
            if m is None:
                return
            token = m.group(0)
            if token == "<!--":
                end = text.find("-->", m.end())
                if end < 0:
                    self.setFormat(m.start(), len(text) - m.start(), self.comment)
                    self.setCurrentBlockState(_IN_COMMENT)
                    return
                self.setFormat(m.start(), end + 3 - m.start(), self.comment)
                pos = end + 3
                continue
            self.setFormat(m.start(), len(token), self.code if token[0] == "`" else self.bold)
            pos = m.end()
