"""The main window's tabs: the editor first, then one tab per view of the open project.

A view is described by a :class:`ViewSpec` and built the first time its tab is shown (or asked for):
its factory is called with the project's session, and a ``"module:Class"`` factory is imported only
then, so start-up imports no ``core`` code. A view that fails to build shows its error instead of
taking the window down. ``viewBuilt(view)`` says a view was just built, for the window to wire it.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QSizePolicy, QTabWidget, QVBoxLayout, QWidget

if TYPE_CHECKING:  # imported when a project is opened, to keep core off the start-up path
    from gui.session import ProjectSession

log = logging.getLogger(__name__)

ViewFactory = Callable[["ProjectSession"], QWidget]


@dataclass
class ViewSpec:
    """A tab: its key (``--view`` name), title, and how to build it for a session."""

    key: str
    title: str
    factory: ViewFactory | str  # "module:Class" is imported when the tab is first shown


VIEWS = [
    ViewSpec("settings", "Settings", "gui.views.settings_view:SettingsView"),
    ViewSpec("backends", "Backends", "gui.views.backends_view:BackendsView"),
    ViewSpec("insights", "Insights", "gui.views.insights_view:InsightsView"),
    ViewSpec("prune", "Prune review", "gui.views.prune_view:PruneView"),
    ViewSpec("audit", "Audit", "gui.views.audit_view:AuditView"),
]
OPTIONAL_VIEWS = [  # added when their module exists
    ViewSpec("search", "Search", "gui.views.search_view:SearchView"),
    ViewSpec("history", "History", "gui.views.history_view:HistoryView"),
    ViewSpec("activity", "Activity", "gui.views.activity_view:ActivityView"),
    ViewSpec("inbox", "Inbox", "gui.views.inbox_view:InboxView"),
    ViewSpec("consolidation", "Consolidation", "gui.views.consolidation_view:ConsolidationView"),
]


class _ViewSlot(QWidget):
    """Holds a tab's view, building it on first use (``built`` says so, for wiring)."""

    built = Signal(object)  # the view

    def __init__(self, spec: ViewSpec, session: ProjectSession) -> None:
        super().__init__()
        self.spec, self.session, self.view = spec, session, None
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)

    def ensure_view(self) -> QWidget:
        """Build the view now if it is not built yet, and return it."""
        if self.view is None:
            try:
                factory = self.spec.factory
                if isinstance(factory, str):
                    module, _, name = factory.partition(":")
                    factory = getattr(importlib.import_module(module), name)
                self.view = factory(self.session)
            except Exception as exc:
                log.exception("the %s view failed to load", self.spec.title)
                self.view = QLabel(f"The {self.spec.title} view failed to load: {exc}")
                self.view.setWordWrap(True)
            self._layout.addWidget(self.view)
            self.view.show()
            self.built.emit(self.view)
        return self.view


class ViewTabs(QTabWidget):
    """The editor and the views of one project, each view built when its tab is first shown."""

    viewBuilt = Signal(object)  # a view just built

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setDocumentMode(True)
        self.specs = VIEWS + [s for s in OPTIONAL_VIEWS if _module_exists(s.factory)]
        self.session: ProjectSession | None = None
        self.editor: QWidget | None = None
        self.currentChanged.connect(self._on_current_changed)

    def set_project(self, session: ProjectSession, editor: QWidget) -> None:
        """Show ``editor`` and a tab per view of ``session`` (the tabs must be empty)."""
        self.session, self.editor = session, editor
        self.addTab(editor, "Editor")
        for spec in self.specs:
            self.addTab(self._slot(spec, session), spec.title)

    def clear_project(self) -> None:
        """Remove and delete every tab."""
        self.blockSignals(True)  # removing tabs must not build the views that become current
        while self.count():
            widget = self.widget(0)
            self.removeTab(0)
            widget.deleteLater()
        self.blockSignals(False)
        self.session, self.editor = None, None

    def add_view(self, title: str, view: QWidget | ViewFactory, key: str | None = None) -> bool:
        """Add a tab (or replace the one with the same key): a widget as is, or a factory called with the
        session, again for each project opened. False when no tab was added (a factory without a project)."""
        key = key or title.lower().split()[0]
        index = next((i for i in range(self.count()) if _slot_key(self.widget(i)) == key), -1)
        self.specs = [s for s in self.specs if s.key != key]
        if index >= 0:
            old = self.widget(index)
            self.removeTab(index)
            old.deleteLater()
        if isinstance(view, QWidget):
            widget: QWidget = view
        else:
            spec = ViewSpec(key, title, view)
            self.specs.append(spec)
            if self.session is None:
                return False
            widget = self._slot(spec, self.session)
        self.insertTab(index if index >= 0 else self.count(), widget, title)
        return True

    def view_keys(self) -> list[str]:
        """The ``--view`` names of the tabs, in order."""
        return ["editor", *(s.key for s in self.specs)]

    def show_view(self, key: str, *, switch: bool = True) -> QWidget:
        """Return the view of tab ``key`` (built if needed), making it the current tab unless not ``switch``."""
        for index in range(self.count()):
            widget = self.widget(index)
            if _slot_key(widget) == key or (key == "editor" and widget is self.editor):
                if switch:
                    self.setCurrentIndex(index)
                return widget.ensure_view() if isinstance(widget, _ViewSlot) else widget
        raise KeyError(f"no view {key!r}; available: {', '.join(self.view_keys())}")

    def refresh_current(self) -> None:
        """Refresh the current tab's view when it is a built view that can refresh."""
        slot = self.currentWidget()
        if isinstance(slot, _ViewSlot) and hasattr(slot.view, "refresh"):
            slot.view.refresh()

    def _slot(self, spec: ViewSpec, session: ProjectSession) -> _ViewSlot:
        slot = _ViewSlot(spec, session)
        slot.built.connect(self.viewBuilt)
        return slot

    def _on_current_changed(self, index: int) -> None:
        slot = self.widget(index)
        if isinstance(slot, _ViewSlot):
            slot.ensure_view()
        self._size_by_current()

    def _size_by_current(self) -> None:
        """Only the shown tab's minimum counts: a tab's stack asks for the widest of all its pages, so once
        the Insights view (561 px) had been shown the editor with a document beside it needed 933 px and
        the window outgrew an 800 px screen. Hidden pages ignore their size hints until shown."""
        current = self.currentWidget()
        for index in range(self.count()):
            page = self.widget(index)
            policy = page.sizePolicy()
            own = page.property("shownHorizontalPolicy")
            if own is None:  # the page's own policy, given back whenever it is shown
                own = policy.horizontalPolicy()
                page.setProperty("shownHorizontalPolicy", own)
            wanted = own if page is current else QSizePolicy.Policy.Ignored
            if policy.horizontalPolicy() != wanted:
                policy.setHorizontalPolicy(wanted)
                page.setSizePolicy(policy)


def _slot_key(widget: QWidget | None) -> str | None:
    return widget.spec.key if isinstance(widget, _ViewSlot) else None


def _module_exists(target: object) -> bool:
    if not isinstance(target, str):
        return True
    try:
        return importlib.util.find_spec(target.partition(":")[0]) is not None
    except (ImportError, ValueError):
        return False
