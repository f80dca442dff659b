"""Project settings: every memory setting of current Fusion, grouped as Fusion groups them, and memdesk's own.

The form is generated from ``ProjectSettings`` (the backend fields live in the backend picker, the
budget's readers beside the meter). The heading names where the settings live (Fusion's API, its
database, ``config.json``; memdesk's own file), and a banner says why when Fusion's cannot be changed now
(Fusion stopped, a damaged database): its fields are then read-only. Apply (Ctrl+Return) saves only the
changed keys, against the values the form was loaded with: a key changed elsewhere since is shown as a
conflict at its field, keys that did not move are applied to the fresh values. A refusal (the model's or
the store's own message) is shown at its field and nothing is saved. Each schedule shows its next runs.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from core.errors import SettingsError
from core.settings import OWN_KEYS, ProjectSettings
from core.settings.schema import CRON_KEYS
from core.settings.store.own import OWN_PATH
from gui.session import ProjectSession
from gui.widgets.banner import Banner
from gui.widgets.cron_preview import CronPreview
from gui.widgets.parts import clear_scroll_area
from gui.widgets.schema_form import SchemaForm

BACKEND_KEYS = ("memoryBackend", "memoryBackendConfig")
SCHEDULE_KEY = "insightExtractionSchedule"


class SettingsView(QWidget):
    """The project's settings form with Apply and Revert, naming where the settings live."""

    settingsApplied = Signal(object)  # the ProjectSettings saved

    def __init__(self, session: ProjectSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.banner = Banner(self)
        self.heading = QLabel(self)
        self.heading.setObjectName("settingsStore")
        self.heading.setWordWrap(True)
        self.heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # The readers of each document are chosen beside the load-budget meter, not here.
        self.form = SchemaForm(ProjectSettings, self._saved_values(),
                               exclude=(*BACKEND_KEYS, "memdeskBudgetConsumers"))
        self.cron_previews: dict[str, CronPreview] = {}
        for key in CRON_KEYS:
            if key in self.form.rows:
                self.cron_previews[key] = CronPreview(parent=self.form)
                self.form.add_extra(key, self.cron_previews[key])
        self.cron_preview = self.cron_previews[SCHEDULE_KEY]
        self.form.setMaximumWidth(900)

        holder = QWidget()
        inner = QVBoxLayout(holder)
        inner.addWidget(self.form)
        inner.addStretch(1)
        scroll = clear_scroll_area(holder, self)

        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.revert_button = QPushButton("Revert", self)
        self.revert_button.setToolTip("Restore the saved settings")
        self.apply_button = QPushButton("Apply", self)
        self.apply_button.setDefault(True)
        self.apply_button.setToolTip("Save the changed settings (Ctrl+Return)")
        buttons = QHBoxLayout()
        buttons.addWidget(self.status, 1)
        buttons.addWidget(self.revert_button)
        buttons.addWidget(self.apply_button)

        self.connect_button = QPushButton("Connect to Fusion…", self)
        self.connect_button.setToolTip("Give a running Fusion's URL and token (kept in your user config)")
        self.connect_button.clicked.connect(self.open_connect)
        top = QHBoxLayout()
        top.addWidget(self.heading, 1)
        top.addWidget(self.connect_button)

        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        layout.addLayout(top)
        layout.addWidget(scroll, 1)
        layout.addLayout(buttons)

        shortcut = QShortcut(QKeySequence("Ctrl+Return"), self)
        shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        shortcut.activated.connect(self.apply)
        self.apply_button.clicked.connect(self.apply)
        self.revert_button.clicked.connect(self.revert)
        self.form.changed.connect(self._on_form_changed)
        session.settingsChanged.connect(self._on_settings_changed)
        self.refresh()

    # -- where the settings live -------------------------------------------------------------------
    @property
    def store(self) -> Any:
        """The session's :class:`core.settings.store.StoreInfo` (``None`` before any could be read)."""
        return self.session.settings_store

    def store_name(self) -> str:
        store = self.store
        return store.plain_name if store is not None else "(unknown)"

    def _read_only_reason(self) -> str | None:
        return getattr(self.store, "read_only", None)

    def _show_store(self) -> None:
        self.heading.setText(f"<b>Project settings</b> — Fusion's settings live in <b>{_html(self.store_name())}</b>; "
                             f"memdesk's own in <code>{OWN_PATH}</code>.")

    def open_connect(self) -> QWidget:
        """Settings ▸ Connect to Fusion…: the dialog (modeless); a connection kept is used at once."""
        from gui.widgets.fusion_connect import FusionConnectDialog

        dialog = FusionConnectDialog(self.session.root, self)
        dialog.connected.connect(lambda _url: self.session.refresh_settings_soon())
        dialog.show()
        return dialog

    def _saved_values(self) -> dict[str, Any]:
        return self.session.settings.model_dump(by_alias=True)

    def refresh(self) -> None:
        """Show the session's saved settings (dropping unsaved edits), where they live and any problem."""
        error = self.session.settings_error
        reason = self._read_only_reason()
        self._show_store()
        if error is not None:
            self.banner.show_message(
                f"{error} — showing defaults; settings cannot be saved until it is fixed.", "error")
        elif reason:
            self.banner.show_message(f"Fusion's settings are read-only here: {reason}.", "warning")
        else:
            self.banner.clear()
        self.form.set_values(self._saved_values())
        for key in self.form.rows:
            self.form.editor(key).setEnabled(key in OWN_KEYS or not reason)
        self._on_form_changed()

    def revert(self) -> None:
        """Restore the saved values."""
        self.form.revert()
        self.status.setText("Reverted to the saved settings.")

    def apply(self) -> None:
        """Validate, then save the changed keys; errors are shown at their field and nothing is saved."""
        if self.session.settings_error is not None or not self.apply_button.isEnabled():
            return
        errors = self.form.validate()
        if errors:
            self.status.setText("Not saved: fix the highlighted field" + ("s." if len(errors) > 1 else "."))
            return
        patch = self.form.changed_values()
        base = self.form.saved_values()
        if getattr(self.store, "kind", None) == "fusion-api":  # the network: never on the GUI thread
            self.apply_button.setEnabled(False)
            self.status.setText(f"Saving to {self.store_name()}…")
            self._saving = self.session.update_settings_in_background(
                patch, base=base, on_done=lambda saved: self._saved(patch, saved), on_error=self._refused)
            return
        try:
            saved = self.session.update_settings(patch, base=base)
        except SettingsError as exc:
            self._refused(exc)
            return
        self._saved(patch, saved)

    def _refused(self, exc: BaseException) -> None:
        """The model or the store refused: its message at the field (the store's own words), nothing saved."""
        field = getattr(exc, "field", None)
        if field in self.form.rows:
            self.form.set_field_error(field, getattr(exc, "reason", str(exc)))
        self.status.setText(f"Not saved: {' '.join(str(exc).split())}")
        self.apply_button.setEnabled(self.form.is_dirty() and self.session.settings_error is None)

    def _saved(self, patch: dict[str, Any], saved: ProjectSettings) -> None:
        self.form.set_values(saved.model_dump(by_alias=True))
        fusion = sorted(k for k in patch if k not in OWN_KEYS)
        own = sorted(k for k in patch if k in OWN_KEYS)
        parts = [f"{', '.join(fusion)} to {self.store_name()}"] if fusion else []
        parts += [f"{', '.join(own)} to {OWN_PATH}"] if own else []
        self.status.setText(f"Saved {' and '.join(parts)}.")
        self.session.statusMessage.emit("Settings saved")
        self.settingsApplied.emit(saved)

    def _on_form_changed(self) -> None:
        values = self.form.values()
        for key, preview in self.cron_previews.items():
            preview.set_expression(str(values.get(key) or ""))
        dirty = self.form.is_dirty()
        if dirty:
            self.form.validate()
            self.status.setText("Unsaved changes.")
        else:
            self.form.clear_errors()
        can_save = self.session.settings_error is None
        self.apply_button.setEnabled(dirty and can_save)
        self.revert_button.setEnabled(dirty)

    def _on_settings_changed(self, _settings: ProjectSettings) -> None:
        """A change saved here or made elsewhere: show it, unless the operator is editing (then Apply
        checks the edited keys against the fresh values)."""
        self._show_store()
        if not self.form.is_dirty():
            self.refresh()


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
