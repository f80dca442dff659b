"""The settings of one model provider: kind, and the fields that kind needs.

Labels and tooltips come from :class:`core.settings.user_config.ProviderConfig` (declared once). The form
does no I/O: :meth:`values` gives the name and the camelCase dict to save; the offline provider is
built in and shown read-only. An API key is never asked for, only the NAME of the environment
variable that holds it.
"""

from __future__ import annotations

import shlex
from typing import Any

from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QFormLayout, QLabel, QLineEdit, QSpinBox, QWidget

from core.settings.user_config import OFFLINE_PROVIDER, ProviderConfig
from gui.widgets.colors import css

KINDS = ("openai", "command")
KIND_NAMES = {"openai": "OpenAI-compatible", "command": "local command", "offline": "rule-based"}
_FIELDS = ProviderConfig.model_fields


def _title(field: str) -> str:
    return f"{_FIELDS[field].title}:"


class ProviderForm(QWidget):
    """Edit one provider; the rows shown follow its kind."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.is_new = True
        self.offline = False
        self.name_edit = QLineEdit(self)
        self.name_edit.setPlaceholderText("e.g. openai, local-llm")
        self.name_edit.setToolTip("Letters, digits, '.', '_' or '-'")
        self.kind_combo = QComboBox(self)
        for kind in KINDS:
            self.kind_combo.addItem(f"{kind} — {KIND_NAMES[kind]}", kind)
        self.kind_combo.setToolTip(_FIELDS["kind"].description)
        self.offline_label = QLabel("offline — built in, rule-based: no model, nothing leaves this computer", self)
        self.base_url_edit = QLineEdit(self)
        self.base_url_edit.setPlaceholderText("https://api.openai.com/v1")
        self.model_edit = QLineEdit(self)
        self.model_edit.setPlaceholderText("gpt-4o-mini")
        self.key_env_edit = QLineEdit(self)
        self.key_env_edit.setPlaceholderText("OPENAI_API_KEY")
        self.command_edit = QLineEdit(self)
        self.command_edit.setPlaceholderText("llm -m mistral --no-stream")
        self.timeout_spin = QDoubleSpinBox(self)
        self.timeout_spin.setRange(0.1, 3600)
        self.timeout_spin.setDecimals(1)
        self.timeout_spin.setSuffix(" s")
        self.timeout_spin.setMaximumWidth(160)
        self.prune_days_spin = QSpinBox(self)
        self.prune_days_spin.setRange(1, 3650)
        self.prune_days_spin.setSuffix(" days")
        self.prune_days_spin.setMaximumWidth(160)
        self.prune_days_spin.setEnabled(False)
        self.error = QLabel(self)
        self.error.setWordWrap(True)
        self.error.setStyleSheet(f"color: {css('error-fg')};")
        self.error.hide()
        for field, widget in (("base_url", self.base_url_edit), ("model", self.model_edit),
                              ("api_key_env", self.key_env_edit), ("command", self.command_edit),
                              ("timeout_s", self.timeout_spin), ("prune_after_days", self.prune_days_spin)):
            widget.setToolTip(_FIELDS[field].description)

        self.layout_ = QFormLayout(self)
        self.layout_.setContentsMargins(0, 0, 0, 0)
        self.layout_.addRow("Name:", self.name_edit)
        self.layout_.addRow(_title("kind"), self.kind_combo)
        self.layout_.addRow("", self.offline_label)
        self.layout_.addRow(_title("base_url"), self.base_url_edit)
        self.layout_.addRow(_title("model"), self.model_edit)
        self.layout_.addRow(_title("api_key_env"), self.key_env_edit)
        self.layout_.addRow(_title("command"), self.command_edit)
        self.layout_.addRow(_title("timeout_s"), self.timeout_spin)
        self.layout_.addRow(_title("prune_after_days"), self.prune_days_spin)
        self.layout_.addRow("", self.error)
        self.kind_combo.currentIndexChanged.connect(lambda _i: self._show_rows())
        self.set_new()

    @property
    def kind(self) -> str:
        """The kind shown: ``openai``, ``command`` or ``offline``."""
        return "offline" if self.offline else str(self.kind_combo.currentData())

    def set_new(self) -> None:
        """An empty form for a new provider (kind openai)."""
        self.set_provider("", ProviderConfig.model_construct(kind="openai", timeout_s=120.0, prune_after_days=30))
        self.is_new = True
        self.name_edit.setReadOnly(False)

    def set_provider(self, name: str, config: ProviderConfig) -> None:
        """Show the provider ``name``; its name cannot change (remove it and add another instead)."""
        self.is_new = False
        self.name_edit.setText(name)
        self.name_edit.setReadOnly(True)
        self.offline = config.kind == "offline" or name == OFFLINE_PROVIDER
        self.kind_combo.setCurrentIndex(max(0, self.kind_combo.findData(config.kind)))
        self.base_url_edit.setText(config.base_url or "")
        self.model_edit.setText(config.model or "")
        self.key_env_edit.setText(config.api_key_env or "")
        self.command_edit.setText(shlex.join(config.command) if config.command else "")
        self.timeout_spin.setValue(config.timeout_s)
        self.prune_days_spin.setValue(config.prune_after_days)
        self.set_error(None)
        self._show_rows()

    def values(self) -> tuple[str, dict[str, Any]]:
        """The name and the provider's settings (camelCase), as typed; raises ``ValueError`` for a bad command line."""
        kind = self.kind
        data: dict[str, Any] = {"kind": kind, "timeoutS": self.timeout_spin.value()}
        if kind == "openai":
            data |= {"baseUrl": self.base_url_edit.text().strip() or None,
                     "model": self.model_edit.text().strip() or None,
                     "apiKeyEnv": self.key_env_edit.text().strip() or None}
        elif kind == "command":
            data["command"] = shlex.split(self.command_edit.text()) or None
        return self.name_edit.text().strip(), {k: v for k, v in data.items() if v is not None}

    def set_error(self, message: str | None) -> None:
        """Show why the provider was not saved (``None`` hides it)."""
        self.error.setText(message or "")
        self.error.setVisible(bool(message))

    def _show_rows(self) -> None:
        kind = self.kind
        rows = {self.kind_combo: kind != "offline", self.offline_label: kind == "offline",
                self.base_url_edit: kind == "openai", self.model_edit: kind == "openai",
                self.key_env_edit: kind == "openai", self.command_edit: kind == "command",
                self.timeout_spin: kind != "offline", self.prune_days_spin: kind == "offline"}
        for widget, visible in rows.items():
            self.layout_.setRowVisible(widget, visible)
        self.name_edit.setEnabled(kind != "offline")
