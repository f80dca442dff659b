"""Keeps the load budget of the document being edited up to date without slowing typing.

Each change to the text restarts a short timer; when typing pauses the budget is computed once on a
worker thread (:func:`core.budget.document_budget`, about 10 ms on a 1 MiB file: too long to hold the
GUI thread), at most one at a time and once more if the text changed meanwhile. Then the cut line is
moved (:class:`gui.editor.cut_line.CutLineOverlay`) and ``budgetsChanged`` carries the result to the
status-bar meter. A keystroke itself does nothing but restart the timer.

The choice of agents per document is the project setting ``memdeskBudgetConsumers``; the tracker
turns the operator's choice into a settings patch and saves it through the session.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QPlainTextEdit

from core.budget import ConsumerBudget, all_consumers, chosen_consumer_ids, consumers_patch, document_budget
from core.budget import tightest as tightest_budget
from core.budget.sections import sections_past_cut
from gui.editor.cut_line import CutLineOverlay, mark_cut_in_markdown
from gui.tasks import Operation, run_in_background
from gui.widgets.outline import OutlineCut

if TYPE_CHECKING:
    from core.budget import Consumer
    from core.settings import ProjectSettings
    from gui.session import ProjectSession

log = logging.getLogger(__name__)

DEBOUNCE_MS = 250
DEFAULT_DOCUMENT = ".fusion/memory.md"


def cut_label(budget: ConsumerBudget) -> str:
    """The label drawn beside the cut line."""
    cut = budget.cut
    assert cut is not None
    if cut.kind == "window":
        return f"{budget.consumer_name}: one read ends here ({cut.last_loaded_line:,} lines)"
    if cut.kind == "middle":
        return f"✂ {budget.consumer_name} drops lines {cut.first_line:,}–{(cut.resume_line or 0) - 1:,}"
    part = " (part of this line)" if cut.partial else ""
    return f"✂ {budget.consumer_name} stops loading here{part}"


class BudgetTracker(QObject):
    """Budget of one document in one text field; ``session`` gives the project's settings and saves them."""

    budgetsChanged = Signal(list)  # list[ConsumerBudget], every chosen consumer
    choiceChanged = Signal(list, list)  # [(id, name)] offered, [id] chosen
    statusMessage = Signal(str)
    previewChanged = Signal()  # the cut moved: a marked preview should render again

    def __init__(self, edit: QPlainTextEdit, text_source: Callable[[], str], session: ProjectSession | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.edit = edit
        self.text_source = text_source
        self.session = session
        self.overlay = CutLineOverlay(edit)
        self.budgets: list[ConsumerBudget] = []
        self.compute_count = 0
        self._last_marker: tuple[int, str] | None = None
        # The user's own consumers are in memdesk's user config: read on the project's worker.
        worker = getattr(session, "worker", None)
        self._consumers: dict[str, Consumer] = worker.call(all_consumers, "") if worker is not None else all_consumers()
        self._settings: ProjectSettings | None = session.settings if session is not None else None
        self._relpath = _document_of(session)
        self._announced: str | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.start_recompute)
        self._op: Operation | None = None
        self._again = False
        edit.textChanged.connect(self._timer.start)  # the field's signal follows the document it shows
        self._active = True
        if session is not None:
            session.settingsChanged.connect(self.set_settings)
            session.backendChanged.connect(self._on_backend_changed)

    # -- inputs --------------------------------------------------------------------------------
    @property
    def relpath(self) -> str:
        """The document in the text field: the session's current one (it follows the document picker)."""
        current = getattr(self.session, "current_path", None)
        return current if isinstance(current, str) and current else self._relpath

    def set_document(self, relpath: str) -> None:
        """Track ``relpath`` (for a text field without a session that names its document)."""
        self._relpath = relpath
        self._emit_choice()
        self.schedule()

    def _on_backend_changed(self, *_args: object) -> None:
        self._relpath = _document_of(self.session)
        self._emit_choice()
        self.schedule()

    def set_settings(self, settings: ProjectSettings) -> None:
        """The project's settings changed (maybe who reads which document)."""
        before = self.chosen_ids()
        self._settings = settings
        if self.chosen_ids() != before:
            self._emit_choice()
            self.refresh()

    def choose_consumers(self, ids: Sequence[str]) -> bool:
        """Save ``ids`` as the readers of this document; False (and a message) when it cannot be saved."""
        try:
            patch = consumers_patch(self._settings, self.relpath, list(ids), self._consumers)
            if self.session is None:
                raise RuntimeError("no project to save the choice in")
            self.session.update_settings(patch)
        except Exception as exc:  # a bad config or a read-only folder: say so, keep the old choice
            log.warning("cannot save the readers of %s: %s", self.relpath, exc)
            self.statusMessage.emit(f"Readers not saved: {exc}")
            self._emit_choice()
            return False
        self.statusMessage.emit(f"{self.relpath} is read by {', '.join(self.chosen_ids())}")
        return True

    # -- state ---------------------------------------------------------------------------------
    def chosen_ids(self) -> list[str]:
        """Consumer ids reading the document (the project's choice or the defaults)."""
        return [cid for cid in chosen_consumer_ids(self.relpath, self._settings) if cid in self._consumers]

    def options(self) -> list[tuple[str, str]]:
        """Every consumer the operator can choose, as (id, name)."""
        return [(c.id, c.name) for c in self._consumers.values()]

    def tightest(self) -> ConsumerBudget | None:
        """The chosen consumer that loads least of the document."""
        return tightest_budget(self.budgets)

    def sections_past(self) -> list[tuple[str, int, bool]]:
        """The sections past the tightest cut, ``(heading, line, wholly)``, for the outline (parsed now)."""
        tight = self.tightest()
        if tight is None or tight.cut is None or tight.cut.kind == "window":
            return []
        return sections_past_cut(self.text_source(), tight.cut.first_line)

    def outline_cut(self) -> OutlineCut | None:
        """Where the tightest chosen agent stops loading, for the outline's marks (hard cuts only)."""
        tight = self.tightest()
        cut = tight.cut if tight is not None else None
        if tight is None or cut is None or cut.kind == "window":  # the end of one read loses nothing
            return None
        resume = cut.resume_line - 1 if cut.resume_line is not None else None
        return OutlineCut(cut.first_line - 1, resume, tight.consumer_name)

    def pending(self) -> bool:
        """True while a recompute waits for typing to pause or runs."""
        return self._timer.isActive() or self._op is not None or self._again

    # -- work ----------------------------------------------------------------------------------
    def schedule(self) -> None:
        """Recompute after the debounce delay."""
        self._timer.start()

    def refresh(self) -> None:
        """Recompute now, on this thread: the budgets, the cut line, the meter."""
        self._drop_running()
        self._apply(self._compute(self.text_source(), self.relpath, self._chosen()))

    def _chosen(self) -> list[Consumer]:
        return [self._consumers[cid] for cid in self.chosen_ids()]

    @staticmethod
    def _compute(text: str, relpath: str, consumers: list[Consumer]) -> list[ConsumerBudget] | Exception:
        try:  # no sections here: parsing the headings is half the work; sections_past() does it on demand
            return document_budget(text, relpath, consumers, sections=False)
        except Exception as exc:  # the budget is advice: never let it break editing
            log.exception("load budget of %s failed", relpath)
            return exc

    def start_recompute(self) -> None:
        """Recompute on a worker thread now (typing paused); one at a time, once more if asked meanwhile."""
        if self._op is not None:
            self._again = True  # one in flight: run once more when it lands
            return
        text, relpath, consumers = self.text_source(), self.relpath, self._chosen()  # a str: safe to share
        self._op = run_in_background(lambda _token: self._compute(text, relpath, consumers),
                                     on_done=self._landed, parent=self)
        self._op.finished.connect(self._op.deleteLater)

    def _landed(self, result: list[ConsumerBudget] | Exception) -> None:
        self._op = None
        self._apply(result)
        if self._again:
            self._again = False
            self.start_recompute()

    def _drop_running(self) -> None:
        self._timer.stop()
        self._again = False
        if self._op is not None:
            self._op.cancel()
            self._op = None

    def _apply(self, result: list[ConsumerBudget] | Exception) -> None:
        if self._announced != self.relpath:  # another document is shown: offer its readers
            self._emit_choice()
        if isinstance(result, Exception):
            self.statusMessage.emit(f"Load budget not computed: {result}")
            result = []
        self.budgets = result
        self.compute_count += 1
        tight = self.tightest()
        if tight is None or tight.cut is None:
            self.overlay.set_cut(None)
        else:
            self.overlay.set_cut(tight.cut.first_line, cut_label(tight), tight.cut.kind, tight.cut.resume_line)
        self.budgetsChanged.emit(self.budgets)
        marker = self._marker()
        if marker != self._last_marker:  # only then: the preview re-renders after typing anyway
            self._last_marker = marker
            self.previewChanged.emit()

    def marked(self, source: Callable[[], tuple[str, int]]) -> Callable[[], tuple[str, int]]:
        """Wrap a preview text source so the preview shows a marker where a chosen agent stops loading
        (hard cuts only: the end of one read is not a loss)."""
        def wrapped() -> tuple[str, int]:
            text, cursor_line = source()
            marker = self._marker()
            if marker is None:
                return text, cursor_line
            line, label = marker
            return mark_cut_in_markdown(text, line, label), cursor_line

        return wrapped

    def _marker(self) -> tuple[int, str] | None:
        tight = self.tightest()
        if tight is None or tight.cut is None or tight.cut.kind == "window":
            return None
        return tight.cut.first_line, f"✂ {tight.consumer_name} stops loading after this line"

    def _emit_choice(self) -> None:
        self._announced = self.relpath
        self.choiceChanged.emit(self.options(), self.chosen_ids())

    def announce(self) -> None:
        """Emit the current choice and budgets again (a meter was just connected)."""
        self._emit_choice()
        self.budgetsChanged.emit(self.budgets)

    def set_active(self, active: bool) -> None:
        """Follow the text (the default) or not at all: no timer, no cut line (for measuring the cost)."""
        if active and not self._active:
            self.edit.textChanged.connect(self._timer.start)
            self.refresh()
        elif not active and self._active:
            self.edit.textChanged.disconnect(self._timer.start)
            self._drop_running()
            self.overlay.set_cut(None)
        self._active = active

    def shutdown(self) -> None:
        """Stop the timer and drop a recompute in flight (the editor is going away)."""
        self._drop_running()


def _document_of(session: Any) -> str:
    if session is None:
        return DEFAULT_DOCUMENT
    current = getattr(session, "current_path", None)
    if isinstance(current, str) and current:
        return current
    path = getattr(session, "memory_path", None)
    try:
        return path.relative_to(session.root).as_posix() if path is not None else DEFAULT_DOCUMENT
    except ValueError:
        return DEFAULT_DOCUMENT
