"""Markdown syntax highlighting for the memory editor, one block (line) at a time.

Highlights headings, list markers, inline code, bold, HTML comments (also across lines), fenced
code blocks, the dated entry markers (``<!-- YYYY-MM-DD -->``) that agents append, the conflict
markers a hand merge leaves (``<<<<<<<``, ``=======``, ``>>>>>>>``) and the replacement characters
that stand for undecodable bytes in a file that is not UTF-8. Colours follow the light or dark
theme (:meth:`MarkdownHighlighter.set_dark`). Work per
block is a few precompiled regular expressions, so typing stays fast in a 1 MiB file.

Loading a whole file (:meth:`MarkdownHighlighter.bulk`) only carries the comment/fence state from
line to line; lines get their colours when they come into view (:meth:`format_blocks`), so
opening 13,000 lines does not format 13,000 lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtGui import (
    QColor,
    QFont,
    QSyntaxHighlighter,
    QTextBlock,
    QTextBlockUserData,
    QTextCharFormat,
    QTextDocument,
)

_NORMAL, _IN_COMMENT, _IN_FENCE = -1, 1, 2

_HEADING = re.compile(r"^#{1,6}(\s|$)")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])(?=\s)")
_DATED = re.compile(r"^\s*<!-- \d{4}-\d{2}-\d{2} -->\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE = re.compile(r"`[^`\n]+`|\*\*[^*\n]+\*\*|__[^_\n]+__|<!--")
_CONFLICT = re.compile(r"^(<{7}|={7}|>{7})(?:[ \t].*)?$")
_REPLACEMENT = "\ufffd"

# role: (light colour, dark colour, background light, background dark)
_PALETTE: dict[str, tuple[str, str, str | None, str | None]] = {
    "heading": ("#1d4f91", "#79b8ff", None, None),
    "bullet": ("#b35900", "#ffab70", None, None),
    "code": ("#8a1c5a", "#f0a3d0", "#f3eef2", "#2e2430"),
    "bold": ("#202020", "#f0f3f6", None, None),
    "comment": ("#7a8290", "#8b949e", None, None),
    "dated": ("#0b7a3e", "#56d364", "#e6f4ea", "#12261e"),
    "fence": ("#5a5a5a", "#c9d1d9", "#f4f4f4", "#1c2128"),
    "conflict": ("#82071e", "#ffdcd7", "#ffc9c5", "#6e1419"),
    "replacement": ("#ffffff", "#ffffff", "#cf222e", "#da3633"),
}


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

    def __init__(self, document: QTextDocument | None = None, *, dark: bool = False) -> None:
        super().__init__(document)
        self._lazy = False
        self._formatting = False
        #: How many bulk passes ran (each leaves lines to format on view; :meth:`EditorBuffer.format_visible`).
        self.bulk_count = 0
        self.dark = dark
        self._make_formats()

    def _make_formats(self) -> None:
        def fmt(role: str, **kw: bool) -> QTextCharFormat:
            light, dark, bg_light, bg_dark = _PALETTE[role]
            return _fmt(dark if self.dark else light, background=bg_dark if self.dark else bg_light, **kw)

        self.heading = fmt("heading", bold=True)
        self.bullet = fmt("bullet", bold=True)
        self.code = fmt("code", mono=True)
        self.bold = fmt("bold", bold=True)
        self.comment = fmt("comment", italic=True)
        self.dated = fmt("dated", bold=True)
        self.fence = fmt("fence", mono=True)
        self.conflict = fmt("conflict", bold=True)
        self.replacement = fmt("replacement", bold=True)

    def set_dark(self, dark: bool) -> None:
        """Switch to the dark (or light) colours; lines get them again as they come into view."""
        if dark == self.dark:
            return
        self.dark = dark
        self._make_formats()
        with self.bulk():  # clears every line's colours and its "formatted" mark, cheaply
            self.rehighlight()

    @contextmanager
    def bulk(self) -> Iterator[None]:
        """While loading or replacing the whole text, only carry state; format on view."""
        self._lazy = True
        try:
            yield
        finally:
            self._lazy = False
            self.bulk_count += 1  # at the end: a look at the view during the pass formatted nothing

    def format_blocks(self, first: QTextBlock, count: int) -> None:
        """Give ``count`` lines from ``first`` their colours if they have not been formatted yet."""
        if self._formatting:  # rehighlighting repaints, and a repaint may ask again
            return
        self._formatting = True
        try:
            block = first
            for _ in range(count):
                if not block.isValid():
                    return
                if block.userData() is None:
                    self.rehighlightBlock(block)
                block = block.next()
        finally:
            self._formatting = False

    def highlightBlock(self, text: str) -> None:
        """Carry the comment/fence state to the next line and, unless bulk loading, format the line."""
        previous = self.previousBlockState()
        self.setCurrentBlockState(_end_state(text, previous))
        if self._lazy:
            if self.currentBlockUserData() is not None:
                self.setCurrentBlockUserData(None)  # type: ignore[arg-type]  # to be formatted on view
            return
        if self.currentBlockUserData() is None:
            self.setCurrentBlockUserData(QTextBlockUserData())  # marks the line as formatted
        self._format(text, previous)

    def _format(self, text: str, previous: int) -> None:
        if _CONFLICT.match(text):
            self.setFormat(0, len(text), self.conflict)
            return
        self._format_markdown(text, previous)
        if _REPLACEMENT in text:
            for i, ch in enumerate(text):
                if ch == _REPLACEMENT:
                    self.setFormat(i, 1, self.replacement)

    def _format_markdown(self, text: str, previous: int) -> None:
        if previous == _IN_FENCE or (previous != _IN_COMMENT and _FENCE.match(text)):
            self.setFormat(0, len(text), self.fence)
            return
        start = 0
        if previous == _IN_COMMENT:
            end = text.find("-->")
            start = len(text) if end < 0 else end + 3
            self.setFormat(0, start, self.comment)
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
        while pos < len(text):
            m = _INLINE.search(text, pos)
            if m is None:
                return
            token = m.group(0)
            if token == "<!--":
                end = text.find("-->", m.end())
                stop = len(text) if end < 0 else end + 3
                self.setFormat(m.start(), stop - m.start(), self.comment)
                pos = stop
                continue
            self.setFormat(m.start(), len(token), self.code if token[0] == "`" else self.bold)
            pos = m.end()


def _end_state(text: str, previous: int) -> int:
    """The state after this line: inside a fence, inside an unclosed ``<!--`` comment, or normal."""
    if previous == _IN_FENCE:
        return _NORMAL if _FENCE.match(text) else _IN_FENCE
    pos = 0
    if previous == _IN_COMMENT:
        end = text.find("-->")
        if end < 0:
            return _IN_COMMENT
        pos = end + 3
    elif _FENCE.match(text):
        return _IN_FENCE
    opened = text.rfind("<!--", pos)
    return _IN_COMMENT if opened >= 0 and text.find("-->", opened + 4) < 0 else _NORMAL
