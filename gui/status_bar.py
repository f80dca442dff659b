"""The main window's status bar: notices, backend name and id, capability badges, memory on/off,
load budget, editor size.

Transient messages (saved, merged, reloaded) show on the left for a few seconds; merges and reloads
are also kept in the notification list (:mod:`gui.widgets.notifications`) behind the "Notices" button.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QStatusBar, QWidget

from gui.editor.size_label import SizeLabel
from gui.widgets.budget_meter import BudgetMeter
from gui.widgets.elided_label import ElidedLabel
from gui.widgets.notifications import NotificationButton

MESSAGE_MS = 6000
_CAPABILITIES = ("read", "write", "search", "insights", "transactions")


#: Below this width the capability badges are hidden, so the window still fits 800 px.
NARROW_STATUS_PX = 1100


class StatusBar(QStatusBar):
    """Permanent facts about the open project on the right, messages on the left."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("statusBar")
        self.setSizeGripEnabled(False)  # the grip asks the platform for size hints (offscreen warns)
        self.backend_label = ElidedLabel("", self)
        self.backend_label.setObjectName("statusBackend")
        self._badges = QWidget(self)
        self._badge_layout = QHBoxLayout(self._badges)
        self._badge_layout.setContentsMargins(0, 0, 0, 0)
        self._badge_layout.setSpacing(3)
        self.memory_label = QLabel("", self)
        self.memory_label.setObjectName("statusMemory")
        self.store_label = ElidedLabel("", self)  # where the project's settings live (issue 18)
        self.store_label.setObjectName("statusSettingsStore")
        self.size_label = SizeLabel(self)
        self.notifications = NotificationButton(self)
        self.budget_meter = BudgetMeter(self)  # load budget (helper "budget")
        for widget in (self.notifications, self.backend_label, self._badges, self.memory_label, self.store_label,
                       self.budget_meter, self.size_label):
            self.addPermanentWidget(widget)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        """At narrow widths the capability badges step aside (the backend's tooltip names them)."""
        super().resizeEvent(event)
        wide = event.size().width() >= NARROW_STATUS_PX
        self._badges.setVisible(wide)
        self._narrow = not wide
        self._show_store()

    def set_backend(self, name: str, backend_id: str, capabilities: Iterable[str],
                    fallback_reason: str | None = None) -> None:
        """Show the backend, one badge per capability, and a warning mark when it is a fallback."""
        mark = "⚠ " if fallback_reason else ""
        self.backend_label.setText(f"{mark}{name} ({backend_id})")
        caps_text = ", ".join(c for c in _CAPABILITIES if c in set(capabilities))
        self.backend_label.setToolTip(fallback_reason or f"Memory backend: {name} ({backend_id}); can {caps_text}")
        caps = set(capabilities)
        while self._badge_layout.count():
            item = self._badge_layout.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        for cap in _CAPABILITIES:
            if cap in caps:
                badge = QLabel(cap, self._badges)
                badge.setObjectName("capabilityBadge")
                badge.setToolTip(f"The backend can {cap}")
                self._badge_layout.addWidget(badge)

    def badges(self) -> list[str]:
        """The capability badges shown."""
        out = []
        for i in range(self._badge_layout.count()):
            widget = self._badge_layout.itemAt(i).widget()
            if isinstance(widget, QLabel):
                out.append(widget.text())
        return out

    def set_memory_enabled(self, enabled: bool) -> None:
        """Show whether agents get memory instructions."""
        self.memory_label.setText("Memory on" if enabled else "Memory off")
        self.memory_label.setProperty("state", "on" if enabled else "off")
        self._repolish(self.memory_label)

    def set_settings_store(self, store: object) -> None:
        """Name where the project's settings live ("Settings: Fusion's database .fusion/fusion.db"), marked when
        they cannot be changed now; the tooltip says why."""
        self._store = store
        if store is None:
            self.store_label.setToolTip("")
        else:
            name = getattr(store, "plain_name", str(store))
            read_only = getattr(store, "read_only", None)
            self.store_label.setToolTip(f"Fusion's settings of this project live in {name}"
                                        + (f".\nRead-only: {read_only}" if read_only else ""))
        self._show_store()

    def _show_store(self) -> None:
        """The store's whole name, or at narrow widths its kind alone (the tooltip keeps the name)."""
        store = getattr(self, "_store", None)
        if store is None:
            self.store_label.setText("")
            return
        mark = "🔒 " if getattr(store, "read_only", None) else ""
        narrow = getattr(self, "_narrow", False)
        # At narrow widths the label shows the store's kind alone ("Settings: config"), whole: given what was
        # left (40 px) it showed "S" and a sliver. The backend's name beside it is the one that elides; the
        # window still fits 800 px.
        shown = getattr(store, "kind", "?") if narrow else getattr(store, "plain_name", "?")
        self.store_label.setText(f"{mark}Settings: {shown}")
        self.store_label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        whole = self.store_label.sizeHint().width()
        self.store_label.setMinimumWidth(min(whole, 160) if narrow else 0)
        self.store_label.setMaximumWidth(max(whole, 160) if narrow else 16_777_215)
        # ... and the backend's long name is the one that elides: the load-budget meter keeps its whole label.
        self.budget_meter.setSizePolicy(QSizePolicy.Policy.Minimum if narrow else QSizePolicy.Policy.Preferred,
                                        self.budget_meter.sizePolicy().verticalPolicy())

    def set_size(self, size: int) -> None:
        """Show the editor's size against the 1 MiB limit, marked when over it."""
        self.size_label.set_size(size)

    def show_message(self, text: str) -> None:
        """Show a transient message."""
        self.showMessage(text, MESSAGE_MS)

    @staticmethod
    def _repolish(widget: QWidget) -> None:
        widget.style().unpolish(widget)
        widget.style().polish(widget)
