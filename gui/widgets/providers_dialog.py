"""Model providers: the user's own list of providers, the default one, and the unattended-prune opt-in.

Everything here is saved through :mod:`core.settings.user_config` to the user's config folder
(platformdirs, or ``$MEMDESK_CONFIG_DIR``), never into a project: a project cannot choose what runs
or where its memory is sent. Each change is saved when it is made; ``providersChanged`` says so.
"""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.errors import SettingsError
from core.settings.user_config import (
    OFFLINE_PROVIDER,
    UserConfig,
    load_user_config,
    remove_provider,
    set_auto_apply_prune,
    set_default_provider,
    set_provider,
    user_config_path,
)
from gui.serial_worker import SerialWorker
from gui.widgets.banner import Banner
from gui.widgets.colors import help_colour
from gui.widgets.provider_form import KIND_NAMES, ProviderForm

AUTO_PRUNE_HELP = ("When on, <code>memdesk run-scheduled</code> applies a valid prune made from the current "
                   "memory without asking (the old memory stays in history). Off: every prune waits for "
                   "your review.")


class ProvidersDialog(QDialog):
    """List, add, edit and remove the user's model providers; choose the default; opt in to unattended prunes."""

    providersChanged = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._worker = SerialWorker(self)  # the user config is written here, one change at a time
        self.setWindowTitle("Model providers")
        self.config: UserConfig | None = None
        #: Asks before a provider is removed (tests replace it).
        self.confirm: Callable[[str], bool] = self._ask
        note = QLabel(
            f"These are <b>your own settings</b>, stored in <code>{html.escape(str(user_config_path()))}</code> "
            "— never in a project, so opening a project can never run its code or send its memory anywhere. "
            "API keys are not stored either: give the <i>name</i> of the environment variable that holds "
            "the key.", self)
        note.setWordWrap(True)
        note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.banner = Banner(self)
        self.list = QListWidget(self)
        self.list.setMinimumWidth(200)
        self.add_button = QPushButton("Add", self)
        self.remove_button = QPushButton("Remove", self)
        self.default_button = QPushButton("Make default", self)
        self.form = ProviderForm(self)
        self.save_button = QPushButton("Save provider", self)
        self.auto_prune = QCheckBox("Apply prunes unattended in scheduled runs", self)
        auto_help = QLabel(AUTO_PRUNE_HELP, self)
        auto_help.setWordWrap(True)
        pal = auto_help.palette()
        pal.setColor(auto_help.foregroundRole(), help_colour())
        auto_help.setPalette(pal)
        self.status = QLabel(self)
        self.close_button = QPushButton("Close", self)

        list_buttons = QHBoxLayout()
        for button in (self.add_button, self.remove_button, self.default_button):
            list_buttons.addWidget(button)
        left = QVBoxLayout()
        left.addWidget(self.list, 1)
        left.addLayout(list_buttons)
        save_row = QHBoxLayout()
        save_row.addStretch(1)
        save_row.addWidget(self.save_button)
        right = QVBoxLayout()
        right.addWidget(self.form)
        right.addLayout(save_row)
        right.addStretch(1)
        middle = QHBoxLayout()
        middle.addLayout(left)
        middle.addLayout(right, 1)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.addWidget(note)
        layout.addWidget(self.banner)
        layout.addLayout(middle, 1)
        layout.addWidget(self.auto_prune)
        layout.addWidget(auto_help)
        layout.addLayout(bottom)
        self.resize(760, 480)

        self.list.currentItemChanged.connect(lambda *_: self._show_selected())
        self.add_button.clicked.connect(self.add)
        self.remove_button.clicked.connect(self.remove)
        self.default_button.clicked.connect(self.make_default)
        self.save_button.clicked.connect(self.save)
        self.auto_prune.toggled.connect(self._set_auto_prune)
        self.close_button.clicked.connect(self.accept)
        self.reload()

    # -- reading -------------------------------------------------------------------------------------
    def reload(self, select: str | None = None) -> None:
        """Read the user's config again and list its providers (selecting ``select``)."""
        current = select or self.selected()
        try:  # the user config file: read on the worker
            self.config = self._worker.call(load_user_config, "")
        except SettingsError as exc:
            self.config = None
            self.banner.show_message(f"Your settings cannot be read: {exc}", "error")
        editable = self.config is not None
        for widget in (self.add_button, self.remove_button, self.default_button, self.save_button, self.auto_prune):
            widget.setEnabled(editable)
        self.list.blockSignals(True)
        self.list.clear()
        if self.config is not None:
            for name, provider in sorted(self.config.providers.items(), key=lambda kv: kv[0].lower()):
                default = " (default)" if name == self.config.default_provider else ""
                item = QListWidgetItem(f"{name} — {KIND_NAMES[provider.kind]}{default}", self.list)
                item.setData(Qt.ItemDataRole.UserRole, name)
            self.auto_prune.blockSignals(True)
            self.auto_prune.setChecked(self.config.auto_apply_prune)
            self.auto_prune.blockSignals(False)
        self.list.blockSignals(False)
        names = [self.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.list.count())]
        if names:
            self.list.setCurrentRow(names.index(current) if current in names else 0)
        self._show_selected()

    def selected(self) -> str | None:
        """The name of the provider selected in the list."""
        item = self.list.currentItem()
        return item.data(Qt.ItemDataRole.UserRole) if item is not None else None

    def select(self, name: str) -> None:
        """Select the provider ``name`` (as a click would)."""
        for row in range(self.list.count()):
            if self.list.item(row).data(Qt.ItemDataRole.UserRole) == name:
                self.list.setCurrentRow(row)

    def _show_selected(self) -> None:
        name = self.selected()
        if self.config is None or name is None or name not in self.config.providers:
            return
        self.form.set_provider(name, self.config.providers[name])
        builtin = name == OFFLINE_PROVIDER
        self.remove_button.setEnabled(not builtin)
        self.save_button.setEnabled(not builtin)
        self.default_button.setEnabled(name != self.config.default_provider)

    # -- changes -------------------------------------------------------------------------------------
    def add(self) -> None:
        """Start a new provider in the form."""
        self.list.clearSelection()
        self.form.set_new()
        self.save_button.setEnabled(True)
        self.remove_button.setEnabled(False)
        self.form.name_edit.setFocus()

    def save(self) -> bool:
        """Save the provider in the form; an invalid one says why and nothing is saved."""
        try:
            name, data = self.form.values()
        except ValueError as exc:  # an unbalanced quote in the command line
            self.form.set_error(f"The command line cannot be read: {exc}")
            return False
        if not name:
            self.form.set_error("Give the provider a name.")
            return False
        if self.form.is_new and self.config is not None and name in self.config.providers:
            self.form.set_error(f"There is a provider named {name!r} already; pick it in the list to edit it.")
            return False
        return self._change(lambda: set_provider(name, data), f"Saved provider {name}.", select=name)

    def remove(self) -> bool:
        """Remove the selected provider (not offline), after asking."""
        name = self.selected()
        if not name or name == OFFLINE_PROVIDER or not self.confirm(f"Remove the provider {name}?"):
            return False
        return self._change(lambda: remove_provider(name), f"Removed provider {name}.")

    def make_default(self) -> bool:
        """Make the selected provider the default one."""
        name = self.selected()
        return bool(name) and self._change(lambda: set_default_provider(name), f"{name} is the default provider.",
                                           select=name)

    def _set_auto_prune(self, enabled: bool) -> None:
        state = "on: valid, current prunes are applied" if enabled else "off: every prune waits for review"
        self._change(lambda: set_auto_apply_prune(enabled), f"Unattended prunes {state}.")

    def _change(self, action: Callable[[], UserConfig], message: str, select: str | None = None) -> bool:
        try:
            self._worker.call(action, "")  # the user config file is written off the GUI thread
        except SettingsError as exc:  # nothing was saved; what was typed stays in the form
            self.form.set_error(f"Not saved: {exc}")
            return False
        self.form.set_error(None)
        self.banner.clear()
        self.reload(select=select)
        self.status.setText(message)
        self.providersChanged.emit()
        return True

    def _ask(self, question: str) -> bool:
        buttons = QMessageBox.StandardButton
        return QMessageBox.question(self, "Model providers", question, buttons.Yes | buttons.No) == buttons.Yes
