"""The backend picker: every registered backend, its capabilities and its settings form.

Selecting a backend shows its description and a form generated from its ``settings_model`` (so a
new backend needs no GUI code). "Use this backend" validates the form and persists the choice and
its config through the session. A banner says when the configured backend fell back to ``file``.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QItemSelectionModel, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListView,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from core.backends import BackendInfo
from core.errors import SettingsError
from gui.models import BackendListModel
from gui.session import ProjectSession
from gui.widgets.backend_delegate import BackendDelegate
from gui.widgets.badges import CapabilityBadges
from gui.widgets.banner import Banner
from gui.widgets.colors import css
from gui.widgets.parts import clear_scroll_area, scaled_font, view_action
from gui.widgets.schema_form import SchemaForm


class BackendsView(QWidget):
    """Pick the project's memory backend and fill in its settings."""

    backendChosen = Signal(str)  # the id persisted

    def __init__(self, session: ProjectSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.form: SchemaForm | None = None
        self.banner = Banner(self)
        self.model = BackendListModel(self)
        self.list = QListView(self)
        self.list.setModel(self.model)
        self.list.setItemDelegate(BackendDelegate(self.list))
        self.list.setUniformItemSizes(False)
        self.list.setMinimumWidth(200)  # its rows elide; the details beside keep room at 800 px
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # the details show it all
        self.list.setSpacing(2)

        self.title = QLabel(self)
        self.title.setFont(scaled_font(self.title.font(), 1.35, bold=True))
        self.subtitle = QLabel(self)
        self.state = QLabel(self)
        self.badges = CapabilityBadges(parent=self)
        self.note = QLabel(self)
        self.note.setStyleSheet("font-style: italic;")
        self.description = QLabel(self)
        self.description.setWordWrap(True)
        self.settings_box = QGroupBox("Settings", self)
        self.settings_layout = QVBoxLayout(self.settings_box)
        self.no_settings = QLabel("This backend has no settings.", self.settings_box)
        self.settings_layout.addWidget(self.no_settings)
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.revert_button = QPushButton("Revert", self)
        self.use_button = QPushButton("Use this backend", self)
        self.use_button.setDefault(True)

        detail = QWidget()
        col = QVBoxLayout(detail)
        for widget in (self.title, self.subtitle, self.state, self.badges, self.note, self.description):
            col.addWidget(widget)
        for label in (self.title, self.subtitle, self.state, self.note):
            label.setWordWrap(True)  # at 800 px the details column is narrow: wrapped, never cut or scrolled
        col.addSpacing(8)
        col.addWidget(self.settings_box)
        col.addStretch(1)
        # As wide as the column, never wider: its labels wrap instead of scrolling sideways at 800 px.
        detail.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        scroll = clear_scroll_area(detail, self)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        right = QWidget(self)
        right_col = QVBoxLayout(right)
        right_col.setContentsMargins(0, 0, 0, 0)
        right_col.addWidget(scroll, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.status, 1)
        buttons.addWidget(self.revert_button)
        buttons.addWidget(self.use_button)
        right_col.addLayout(buttons)

        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter = splitter
        self._divider_moved = False
        splitter.splitterMoved.connect(lambda *_args: setattr(self, "_divider_moved", True))
        splitter.addWidget(self.list)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([340, 900])
        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        layout.addWidget(splitter, 1)

        self.list.selectionModel().currentChanged.connect(lambda current, _prev: self._show(current.row()))
        self.use_button.clicked.connect(self.use_selected)
        # Ctrl+Enter anywhere in the view (listed in Help ▸ Keyboard shortcuts).
        self.use_action = view_action(self, "Use this backend", ["Ctrl+Return", "Ctrl+Enter"],
                                      lambda: self.use_button.isEnabled() and self.use_button.click())
        self.use_action.setProperty("shortcutScope", "Backends")
        self.revert_button.clicked.connect(self._revert)
        session.backendChanged.connect(lambda _backend: self.refresh())
        self.refresh()

    # -- state ---------------------------------------------------------------------------------------
    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        """Until the operator drags the divider, the list takes what the details leave (200-340 px): at
        800 px the details keep room for every capability badge; the name and the texts wrap."""
        super().resizeEvent(event)
        if self._divider_moved:
            return
        total = sum(self.splitter.sizes()) or self.splitter.width()
        details = max(self.badges.sizeHint().width(), 260) + 40
        first = min(340, max(200, total - details))
        self.splitter.setSizes([first, max(total - first, 1)])

    def refresh(self) -> None:
        """Reload the registered backends and select the configured one (or the one in use)."""
        backend = self.session.backend
        # Running as configured (an untouched layered project runs "qmd", Fusion's default there, while
        # the stored key still reads "file"): the one in use is the configured one, never "unavailable".
        configured = self.session.settings.memory_backend if backend.fallback_reason else backend.id
        self.model.set_backends(self.session.registry.infos(), backend.id, configured)
        if backend.fallback_reason:
            self.banner.show_message(
                f'{backend.fallback_reason}. Memory is using the "{backend.name}" backend ({backend.id}) '
                "instead; pick an available backend below to fix this.", "warning")
        else:
            self.banner.clear()
        row = self.model.row_of(configured)
        self.select(row if row >= 0 else self.model.row_of(backend.id))

    def select(self, row: int) -> None:
        """Select the backend in row ``row`` and show its details."""
        if not 0 <= row < self.model.rowCount():
            return
        index = self.model.index(row)
        self.list.selectionModel().setCurrentIndex(index, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        self._show(row)

    def selected(self) -> BackendInfo | None:
        """The backend whose details are shown."""
        row = self.list.currentIndex().row()
        return self.model.infos[row] if 0 <= row < len(self.model.infos) else None

    def _current_config(self, info: BackendInfo) -> dict[str, Any]:
        if info.id == self.session.settings.memory_backend:
            return dict(self.session.settings.memory_backend_config)
        return {}

    def _show(self, row: int) -> None:
        if not 0 <= row < len(self.model.infos):
            return
        info = self.model.infos[row]
        self.title.setText(info.name)
        self.subtitle.setText(f"id <code>{info.id}</code> · version {info.version}")
        in_use = info.id == self.session.backend.id
        configured = info.id == self.session.settings.memory_backend
        if in_use:
            self.state.setText(f"<span style='color:{css('ok-fg')}'>● In use by this project</span>")
        elif configured:
            self.state.setText(f"<span style='color:{css('warning-fg')}'>Configured, but unavailable</span>")
        self.state.setVisible(in_use or configured)
        self.badges.set_capabilities(info.capabilities)
        self.note.setText(info.note or "")
        self.note.setVisible(bool(info.note))
        self.description.setText(info.description)
        self._build_form(info)
        self.use_button.setText("Save settings" if in_use and configured else "Use this backend")
        self.status.clear()
        self._on_form_changed()

    def _build_form(self, info: BackendInfo) -> None:
        if self.form is not None:
            self.settings_layout.removeWidget(self.form)
            self.form.hide()
            self.form.deleteLater()
            self.form = None
        has_fields = bool(info.settings_model.model_json_schema().get("properties"))
        self.no_settings.setVisible(not has_fields)
        if has_fields:
            self.form = SchemaForm(info.settings_model, self._current_config(info), parent=self.settings_box)
            self.settings_layout.addWidget(self.form)
            self.form.changed.connect(self._on_form_changed)
        self._on_form_changed()

    def _on_form_changed(self) -> None:
        dirty = self.form is not None and self.form.is_dirty()
        if dirty and self.form is not None:
            self.form.validate()
        self.revert_button.setEnabled(dirty)
        info = self.selected()
        nothing_to_save = (info is not None and self.form is None and info.id == self.session.backend.id
                           and info.id == self.session.settings.memory_backend)
        self.use_button.setEnabled(self.session.settings_error is None and not nothing_to_save)
        if self.session.settings_error is not None:
            self.use_button.setToolTip(f"config.json cannot be read: {self.session.settings_error}")
        elif nothing_to_save:
            self.use_button.setToolTip("This backend is in use and has no settings.")
        else:
            self.use_button.setToolTip("Save this backend and its settings for the project (Ctrl+Enter)")

    def _revert(self) -> None:
        if self.form is not None:
            self.form.revert()
        self.status.setText("Reverted.")

    # -- actions -------------------------------------------------------------------------------------
    def use_selected(self) -> bool:
        """Validate the form and persist the selected backend with its config; True when saved."""
        info = self.selected()
        if info is None:
            return False
        config: dict[str, Any] = {}
        if self.form is not None:
            if self.form.validate():
                self.status.setText("Not saved: fix the highlighted fields.")
                return False
            config = self.form.values()
        try:
            self.session.switch_backend(info.id, config)
        except SettingsError as exc:
            self.status.setText(f"Not saved: {exc}")
            return False
        backend = self.session.backend
        if backend.fallback_reason:
            message = f'Saved, but "{info.id}" could not start; using "{backend.id}" for now.'
        else:
            message = f'Saved: this project now uses the "{info.name}" backend.'
        self.session.statusMessage.emit(message)
        self.backendChosen.emit(info.id)
        self.status.setText(message)
        return True
