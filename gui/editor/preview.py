"""Live markdown preview: debounced, rendered off the GUI thread with a time budget, and safe.

ReText's pattern (``triggerPreviewUpdate`` / ``updatePreviewBox``): each change restarts a short
timer; when it fires a render starts on a worker thread unless one is already running, in which
case one more render is queued for when it lands. A render that takes longer than
:data:`RENDER_BUDGET_MS` is abandoned and the text is shown as it is. Long files are previewed by
section around the cursor (:mod:`gui.editor.preview_window`), so neither the render nor ``setHtml``
(which runs on the GUI thread) stalls typing.

Safety (design §6): the HTML comes from :mod:`gui.editor.markdown_render` (raw HTML escaped, images
dropped, only http(s) links); the document loads no resource at all (:class:`SafeDocument`); links
are not followed by the browser: an http(s) link is handed to the desktop only when clicked.

The preview follows the editor: :meth:`PreviewPane.follow_line` scrolls it so that the same source
line is at the top, mapping lines to positions through the headings both sides share.
"""

from __future__ import annotations

import html
import threading
from bisect import bisect_right
from collections.abc import Callable

from PySide6.QtCore import QTimer, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QImage, QShowEvent, QTextDocument
from PySide6.QtWidgets import QLabel, QTextBrowser, QVBoxLayout, QWidget

from gui import resources
from gui.editor.markdown_render import render_markdown
from gui.editor.preview_window import PreviewWindow, preview_window
from gui.editor.sections import find_headings
from gui.tasks import Operation, run_in_background

DEBOUNCE_MS = 250
RENDER_BUDGET_MS = 3000
SAFE_SCHEMES = ("http", "https")

#: Returns the editor text and the cursor's line (0-based).
TextSource = Callable[[], tuple[str, int]]
#: What a render hands back: the window rendered, its HTML (None: unchanged), its heading lines.
RenderResult = tuple[PreviewWindow, str | None, list[int]]


class SafeDocument(QTextDocument):
    """A text document that loads nothing: no local file, no network, no ``data:`` image.

    ``QTextDocument.loadResource`` would read ``file:`` URLs (``<img src="file:///etc/passwd">``),
    and when it gives nothing Qt's image handler opens the file itself (``/dev/zero`` until memory
    runs out). So every request is answered with a blank placeholder (a 1x1 transparent image, an
    empty style sheet), which stops both; the requests are kept in :attr:`blocked` for tests.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.blocked: set[str] = set()
        self._blank = QImage(1, 1, QImage.Format.Format_ARGB32)
        self._blank.fill(0)

    def loadResource(self, kind: int, name: QUrl) -> object:  # noqa: N802 (Qt override)
        """Answer every resource with a blank placeholder (never ``None``: Qt would then load it)."""
        if len(self.blocked) < 100:  # asked again on every repaint: keep a bounded record
            self.blocked.add(name.toString())
        if kind == QTextDocument.ResourceType.ImageResource.value:
            return self._blank
        return ""


class _Browser(QTextBrowser):
    """A ``QTextBrowser`` that never loads a resource or follows a link by itself."""

    def loadResource(self, kind: int, name: QUrl) -> object:  # noqa: N802 (Qt override)
        """Refuse every resource (a document other than :class:`SafeDocument` would ask here)."""
        return QImage() if kind == QTextDocument.ResourceType.ImageResource.value else ""


def _render(text: str, cursor_line: int, last_source: str | None) -> RenderResult:
    window = preview_window(text, cursor_line)
    headings = [h.line for h in find_headings(window.source)]
    if window.source == last_source:
        return window, None, headings  # nothing changed: keep the HTML shown
    try:
        return window, render_markdown(window.source), headings
    except Exception as exc:  # whatever the memory holds, show it: as the text it is
        note = f"The preview could not render this part ({type(exc).__name__}); it shows the text as it is."
        shown = PreviewWindow(window.source, window.first_line, note)
        return shown, f"<pre>{html.escape(window.source)}</pre>", []


class PreviewPane(QWidget):
    """The rendered memory, with a note when it shows only a part or gave up on a render."""

    rendered = Signal()  # a render landed (whether or not the HTML changed)
    linkRefused = Signal(str)  # a clicked link that is not http(s): the URL

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("previewPane")
        self.note = QLabel(self)
        self.note.setObjectName("previewNote")
        self.note.setWordWrap(True)
        self.note.setVisible(False)
        self.note.setToolTip("Long files are previewed a part at a time, so typing stays fast; "
                             "the part follows the cursor.")
        self.document = SafeDocument(self)
        self.browser = _Browser(self)
        self.browser.setDocument(self.document)
        self.browser.setOpenLinks(False)
        self.browser.setOpenExternalLinks(False)
        self._css = resources.read_text("preview.css")
        self.document.setDefaultStyleSheet(self._css)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.note)
        layout.addWidget(self.browser, 1)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._start_render)
        self._budget = QTimer(self)
        self._budget.setSingleShot(True)
        self._budget.setInterval(RENDER_BUDGET_MS)
        self._budget.timeout.connect(self._over_budget)
        self._source: TextSource = lambda: ("", 0)
        self._op: Operation | None = None
        self._worker_idle = threading.Event()
        self._worker_idle.set()
        self._pending = False
        self._stale = True
        self._last_source: str | None = None
        self._window = PreviewWindow("")
        self._heading_lines: list[int] = []
        self._follow: int | None = None
        #: True while the preview scrolls itself to follow the editor (not the operator scrolling it).
        self.following = False
        #: True while the editor follows the preview: the preview then does not follow the editor back.
        self.follow_suspended = False
        self.render_count = 0
        #: Opens a clicked http(s) link (tests replace it).
        self.open_url: Callable[[QUrl], object] = QDesktopServices.openUrl
        self.browser.anchorClicked.connect(self._on_link)

    # -- what to render ------------------------------------------------------------------------
    def set_text_source(self, source: TextSource) -> None:
        """Tell the pane where to get the text (and cursor line) to render."""
        self._source = source

    def set_dark(self, dark: bool) -> None:
        """Use the dark (or light) preview colours and render again."""
        self._css = resources.read_text("preview.css") + (resources.read_text("preview-dark.css") if dark else "")
        self.document.setDefaultStyleSheet(self._css)
        self._last_source = None
        self.schedule()

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
        self._stale = False
        self._show(_render(text, line, self._last_source))

    def cancel(self) -> None:
        """Stop the timers and drop the result of a render in flight."""
        self._timer.stop()
        self._budget.stop()
        self._pending = False
        if self._op is not None:
            self._op.cancel()
            self._op = None

    def showEvent(self, event: QShowEvent) -> None:
        """Catch up with edits made while the preview was hidden."""
        super().showEvent(event)
        if self._stale:
            self._timer.start()

    # -- rendering -----------------------------------------------------------------------------
    def _start_render(self) -> None:
        if self._op is not None or not self._worker_idle.is_set():
            self._pending = True  # at most one in flight (an abandoned one included)
            if self._op is None:
                self._timer.start()  # poll until the abandoned render lets its thread go
            return
        text, line = self._source()
        last = self._last_source
        self._stale = False
        idle = self._worker_idle
        idle.clear()

        def work(_token: object) -> RenderResult:
            try:
                return _render(text, line, last)
            finally:
                idle.set()

        self._op = run_in_background(work, on_done=self._on_done, on_error=self._on_error, parent=self)
        self._op.finished.connect(self._op.deleteLater)
        self._budget.start()

    def _on_done(self, result: RenderResult) -> None:
        self._op = None
        self._budget.stop()
        self._show(result)
        if self._pending:
            self._pending = False
            self._start_render()

    def _on_error(self, exc: BaseException) -> None:
        self._op = None
        self._budget.stop()
        self.note.setText(f"Preview failed: {exc}")
        self.note.setVisible(True)
        self.rendered.emit()

    def _over_budget(self) -> None:
        """The render took too long: drop it and show the text as it is."""
        if self._op is None:
            return
        self._op.cancel()
        self._op = None
        text, line = self._source()
        window = preview_window(text, line)
        self.browser.setPlainText(window.source)
        self._window, self._heading_lines, self._last_source = window, [], None
        self.note.setText(f"The preview stopped rendering this part after {RENDER_BUDGET_MS // 1000} s; "
                          "it shows the text as it is.")
        self.note.setVisible(True)
        self.render_count += 1
        self.rendered.emit()

    def _show(self, result: RenderResult) -> None:
        window, html, heading_lines = result
        if html is not None:
            self.browser.setHtml(html)
            self._last_source = window.source
        self._window, self._heading_lines = window, heading_lines
        self.note.setText(window.note or "")
        self.note.setVisible(window.note is not None)
        self._apply_follow()
        self.render_count += 1
        self.rendered.emit()

    # -- following the editor ------------------------------------------------------------------
    def follow_line(self, line: int) -> None:
        """Scroll so that document line ``line`` (0-based; the editor's top line) is at the top."""
        if self.follow_suspended:  # the editor is following the preview (gui.editor.scroll_sync)
            return
        self._follow = line
        self._apply_follow()

    def _apply_follow(self) -> None:
        if self._follow is None:
            return
        bar = self.browser.verticalScrollBar()
        self.following = True
        try:
            bar.setValue(round(self.y_for_line(self._follow)))
        finally:
            self.following = False

    def line_for_y(self, y: float) -> int:
        """The document line (0-based) shown at height ``y`` of the preview: :meth:`y_for_line` inverted."""
        first = self._window.first_line
        total = max(self._window.source.count("\n") + 1, 1)
        lo, hi = 0, total
        while lo < hi:  # the last line whose top is at or above y
            mid = (lo + hi + 1) // 2
            if self.y_for_line(first + mid) <= y + 0.5:
                lo = mid
            else:
                hi = mid - 1
        return first + lo

    def y_for_line(self, line: int) -> float:
        """Where document line ``line`` is in the rendered preview (through the shared headings)."""
        rel = line - self._window.first_line
        total_lines = max(self._window.source.count("\n") + 1, 1)
        layout = self.document.documentLayout()
        height = layout.documentSize().height()
        tops = [layout.blockBoundingRect(b).top() for b in self._heading_blocks()]
        anchors = [(0, 0.0), (total_lines, height)]
        if tops and len(tops) == len(self._heading_lines):
            anchors[1:1] = list(zip(self._heading_lines, tops, strict=True))
        rel = min(max(rel, 0), total_lines)
        if rel == 0:
            return 0.0
        k = max(bisect_right([a[0] for a in anchors], rel) - 1, 0)
        (l0, y0), (l1, y1) = anchors[k], anchors[min(k + 1, len(anchors) - 1)]
        return y0 if l1 <= l0 else y0 + (y1 - y0) * (rel - l0) / (l1 - l0)

    def _heading_blocks(self) -> list:
        blocks, block = [], self.document.begin()
        while block.isValid():
            if block.blockFormat().headingLevel() > 0:
                blocks.append(block)
            block = block.next()
        return blocks

    def top_heading(self) -> str:
        """The text of the last heading at or above the top of the preview's view ("" if none)."""
        top = self.browser.verticalScrollBar().value() + 2
        layout = self.document.documentLayout()
        above = [b.text() for b in self._heading_blocks() if layout.blockBoundingRect(b).top() <= top]
        return above[-1] if above else ""

    # -- links ---------------------------------------------------------------------------------
    def _on_link(self, url: QUrl) -> None:
        if url.scheme().lower() in SAFE_SCHEMES:
            self.open_url(url)
        elif not url.scheme() and url.fragment():
            self.browser.scrollToAnchor(url.fragment())
        else:
            self.linkRefused.emit(url.toString())
