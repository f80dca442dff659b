"""Project settings: memory and insight-extraction switches, the schedule with its next runs, the interval.

The form is generated from ``ProjectSettings`` (the backend fields live in the backend picker).
Apply (Ctrl+Return) saves only the changed keys through the session; a ``SettingsError`` is shown at
its field and nothing is saved. A malformed ``config.json`` is reported in a banner and never saved over.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from core.errors import SettingsError
from core.settings import CONFIG_PATH, ProjectSettings
from gui.session import ProjectSession
from gui.widgets.banner import Banner
from gui.widgets.cron_preview import CronPreview
from gui.widgets.parts import clear_scroll_area
from gui.widgets.schema_form import SchemaForm

BACKEND_KEYS = ("memoryBackend", "memoryBackendConfig")
SCHEDULE_KEY = "insightExtractionSchedule"


class SettingsView(QWidget):
    """The project's settings form with Apply and Revert."""

    settingsApplied = Signal(object)  # the ProjectSettings saved

    def __init__(self, session: ProjectSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.banner = Banner(self)
        heading = QLabel(f"<b>Project settings</b> — stored in <code>{CONFIG_PATH}</code>", self)
        # The readers of each document are chosen beside the load-budget meter, not here.
        self.form = SchemaForm(ProjectSettings, self._saved_values(),
                               exclude=(*BACKEND_KEYS, "memdeskBudgetConsumers"))
        self.cron_preview = CronPreview(parent=self.form)
        self.form.add_extra(SCHEDULE_KEY, self.cron_preview)
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

        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        layout.addWidget(heading)
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

    def _saved_values(self) -> dict[str, Any]:
        return self.session.settings.model_dump(by_alias=True)

    def refresh(self) -> None:
        """Show the session's saved settings (dropping unsaved edits) and its settings error, if any."""
        error = self.session.settings_error
        if error is not None:
            self.banner.show_message(
                f"{error} — showing defaults; settings cannot be saved until the file is fixed.", "error")
        else:
            self.banner.clear()
        self.form.set_values(self._saved_values())
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
        try:
            saved = self.session.update_settings(patch)
        except SettingsError as exc:
            if exc.field in self.form.rows:
                self.form.set_field_error(exc.field, exc.reason)
                self.status.setText("Not saved: fix the highlighted field.")
            else:
                self.status.setText(f"Not saved: {exc}")
            return
        self.form.set_values(saved.model_dump(by_alias=True))
        self.status.setText(f"Saved {', '.join(sorted(patch))} to {CONFIG_PATH}.")
        self.session.statusMessage.emit("Settings saved")
        self.settingsApplied.emit(saved)

    def _on_form_changed(self) -> None:
        values = self.form.values()
        self.cron_preview.set_expression(str(values.get(SCHEDULE_KEY) or ""))
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
        if not self.form.is_dirty():
            self.refresh()
