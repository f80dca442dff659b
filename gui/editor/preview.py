"""Live markdown preview: debounced, rendered off the GUI thread, at most one render in flight.

ReText's pattern (``triggerPreviewUpdate`` / ``updatePreviewBox``): each change restarts a short
timer; when it fires a render starts on a worker thread unless one is already running, in which
case one more render is queued for when it lands. Long files are previewed around the cursor so
that neither the render nor ``setHtml`` (which runs on the GUI thread) stalls typing.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from itertools import accumulate

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QLabel, QTextBrowser, QVBoxLayout, QWidget

from gui import resources
from gui.tasks import Operation, run_in_background

DEBOUNCE_MS = 250
FULL_PREVIEW_CHARS = 24 * 1024
WINDOW_CHARS = 12 * 1024
EXTENSIONS = ("extra", "sane_lists")

_DATED = re.compile(r"^<!-- (\d{4}-\d{2}-\d{2}) -->$", re.MULTILINE)
_NESTED_ITEM = re.compile(r"^( +)(?=(?:[-*+]|\d+[.)]) )", re.MULTILINE)

#: Returns the editor text and the cursor's line (0-based).
TextSource = Callable[[], tuple[str, int]]


def preview_window(text: str, cursor_line: int, full: int = FULL_PREVIEW_CHARS,
                   budget: int = WINDOW_CHARS) -> tuple[str, str | None]:
    """Return the markdown to preview and a note when it is only the part around the cursor.

    Whole sections (from one heading to the next) are taken around the cursor's section while
    they fit ``budget``; a single section longer than that is cut to lines around the cursor.
    """
    if len(text) <= full:
        return text, None
    lines = text.split("\n")
    n = len(lines)
    line = min(max(cursor_line, 0), n - 1)
    prefix = list(accumulate((len(s) + 1 for s in lines), initial=0))
    bounds = sorted({0, n, *(i for i, s in enumerate(lines) if s.startswith("#"))})
    k = bisect_right(bounds, line) - 1
    lo_k, hi_k = k, k + 1
    if prefix[bounds[hi_k]] - prefix[bounds[lo_k]] > budget:
        lo, hi = line, line + 1
        while (lo > 0 or hi < n) and prefix[hi] - prefix[lo] < budget:
            lo, hi = max(lo - 1, 0), min(hi + 1, n)
    else:
        grew = True
        while grew:
            grew = False
            if lo_k > 0 and prefix[bounds[hi_k]] - prefix[bounds[lo_k - 1]] <= budget:
                lo_k, grew = lo_k - 1, True
            if hi_k < len(bounds) - 1 and prefix[bounds[hi_k + 1]] - prefix[bounds[lo_k]] <= budget:
                hi_k, grew = hi_k + 1, True
        lo, hi = bounds[lo_k], bounds[hi_k]
    note = (f"Long file: the preview shows lines {lo + 1}–{hi} of {n}, around the cursor, "
            "so typing stays fast.")
    source = "\n".join(lines[lo:hi])
    if len(source) > 2 * budget:  # one enormous line (a pasted blob): show its start only
        source = source[: 2 * budget]
        note = f"Long line: the preview shows the first {2 * budget:,} characters of lines {lo + 1}–{hi}."
    return source, note


def render_markdown(text: str) -> str:
    """Render memory markdown to HTML (python-markdown with ``extra`` and ``sane_lists``)."""
    import markdown  # imported on the worker thread: keeps it off the start-up path

    text = _DATED.sub(r'<p class="entry-date">\1</p>\n', text)
    # Agents indent nested bullets by two spaces (as GitHub reads them); python-markdown wants four.
    if any(len(m.group(1)) % 4 for m in _NESTED_ITEM.finditer(text)):
        text = _NESTED_ITEM.sub(lambda m: m.group(1) * 2, text)
    return markdown.markdown(text, extensions=list(EXTENSIONS), output_format="html")


def _render(text: str, cursor_line: int, last_source: str | None) -> tuple[str, str | None, str | None]:
    source, note = preview_window(text, cursor_line)
    if source == last_source:
        return source, note, None  # nothing changed: keep the HTML shown
    return source, note, render_markdown(source)


class PreviewPane(QWidget):
    """A ``QTextBrowser`` showing the rendered memory, with a note when it shows only a part."""

    rendered = Signal()  # a render landed (whether or not the HTML changed)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("previewPane")
        self.note = QLabel(self)
        self.note.setObjectName("previewNote")
        self.note.setWordWrap(True)
        self.note.setVisible(False)
        self.browser = QTextBrowser(self)
        self.browser.setOpenExternalLinks(True)
        self.browser.document().setDefaultStyleSheet(resources.read_text("preview.css"))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.note)
        layout.addWidget(self.browser, 1)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._start_render)
        self._source: TextSource = lambda: ("", 0)
        self._op: Operation | None = None
        self._pending = False
        self._stale = True
        self._last_source: str | None = None
        self.render_count = 0

    def set_text_source(self, source: TextSource) -> None:
        """Tell the pane where to get the text (and cursor line) to render."""
        self._source = source

    def schedule(self) -> None:
        """Render after a pause in typing (restarts the debounce timer)."""
        self._stale = True
        if self.isVisible():
            self._timer.start()

    def busy(self) -> bool:
        """True while a render is running or waiting for the debounce timer."""
        return self._op is not None or self._timer.isActive() or self._pending

    def render_now(self) -> None:
        """Render synchronously on this thread (screenshots, tests); cancels what was in flight."""
        self.cancel()
        text, line = self._source()
        self._show(_render(text, line, self._last_source))

    def cancel(self) -> None:
        """Stop the timer and drop the result of a render in flight."""
        self._timer.stop()
        self._pending = False
        if self._op is not None:
            self._op.cancel()
            self._op = None

    def showEvent(self, event: QShowEvent) -> None:
        """Catch up with edits made while the preview was hidden."""
        super().showEvent(event)
        if self._stale:
            self._timer.start()

    def _start_render(self) -> None:
        if self._op is not None:
            self._pending = True  # at most one in flight: render once more when it lands
            return
        text, line = self._source()
        last = self._last_source
        self._stale = False
        self._op = run_in_background(lambda _token: _render(text, line, last), on_done=self._on_done,
                                     on_error=self._on_error, parent=self)
        self._op.finished.connect(self._op.deleteLater)

    def _on_done(self, result: tuple[str, str | None, str | None]) -> None:
        self._op = None
        self._show(result)
        if self._pending:
            self._pending = False
            self._start_render()

    def _on_error(self, exc: BaseException) -> None:
        self._op = None
        self.note.setText(f"Preview failed: {exc}")
        self.note.setVisible(True)
        self.rendered.emit()

    def _show(self, result: tuple[str, str | None, str | None]) -> None:
        source, note, html = result
        if html is not None:
            bar = self.browser.verticalScrollBar()
            keep = bar.value() if note is None else 0
            self.browser.setHtml(html)
            bar.setValue(keep)
            self._last_source = source
        self.note.setText(note or "")
        self.note.setVisible(note is not None)
        self.render_count += 1
        self.rendered.emit()

