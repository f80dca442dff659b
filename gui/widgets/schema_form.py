"""A form generated from a pydantic model's JSON schema: one labelled editor per property.

The title is the label, the description the tooltip and grey help text. ``values()`` gives the
alias-keyed dict; ``validate()`` runs ``model_validate`` and marks every invalid field where it is
(red outline and the reason under it). The form keeps the values it was given as its *saved* state:
``changed_values()`` is what differs from it and ``revert()`` restores it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError
from PySide6.QtCore import Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFormLayout, QLabel, QVBoxLayout, QWidget

from gui.widgets.colors import css, help_colour
from gui.widgets.field_editors import FieldEditor, editor_for, resolve_property
from gui.widgets.parts import scaled_font


def error_reason(message: str) -> str:
    """Strip pydantic's ``Value error, `` prefix from a validation message."""
    return message.removeprefix("Value error, ").removeprefix("Assertion failed, ")


class _FieldRow(QWidget):
    """An editor with, under it, its extra widgets, its error message and its help text."""

    def __init__(self, editor: FieldEditor, help_text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = editor
        self._box = QVBoxLayout(self)
        self._box.setContentsMargins(0, 0, 0, 0)
        self._box.setSpacing(2)
        self._box.addWidget(editor)
        self.error = QLabel(self)
        self.error.setWordWrap(True)
        self.error.setStyleSheet(f"color: {css('error-fg')};")
        self.error.hide()
        self._box.addWidget(self.error)
        self.help = QLabel(help_text, self)
        self.help.setWordWrap(True)
        pal = self.help.palette()
        pal.setColor(QPalette.ColorRole.WindowText, help_colour())
        self.help.setPalette(pal)
        self.help.setFont(scaled_font(self.help.font(), 0.9))
        self.help.setVisible(bool(help_text))
        self._box.addWidget(self.help)

    def add_extra(self, widget: QWidget) -> None:
        self._box.insertWidget(self._box.indexOf(self.error), widget)

    def set_error(self, message: str | None) -> None:
        self.error.setText(message or "")
        self.error.setVisible(bool(message))
        self.editor.set_invalid(bool(message))


class SchemaForm(QWidget):
    """The form of ``model``; ``exclude`` names properties (aliases) left out of it."""

    changed = Signal()

    def __init__(self, model: type[BaseModel], values: Mapping[str, Any] | None = None,
                 exclude: Iterable[str] = (), parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.schema = model.model_json_schema(by_alias=True)
        defs = self.schema.get("$defs", {})
        skipped = set(exclude)
        self.rows: dict[str, _FieldRow] = {}
        self.labels: dict[str, QLabel] = {}
        self.defaults: dict[str, Any] = {}
        layout = QFormLayout(self)
        layout.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        layout.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)  # labels go above fields when narrow
        layout.setVerticalSpacing(14)
        #: Property keys under each group heading (a property's ``group``), in order.
        self.groups: dict[str, list[str]] = {}
        for key, raw in self.schema.get("properties", {}).items():
            if key in skipped:
                continue
            prop, nullable = resolve_property(raw, defs)
            group = raw.get("group") or prop.get("group")
            if group and group not in self.groups:
                heading = QLabel(f"<b>{group}</b>", self)
                heading.setObjectName("formGroup")
                layout.addRow(heading)
                self.groups[group] = []
            if group:
                self.groups[group].append(key)
            editor = editor_for(prop, nullable, self)
            editor.setObjectName(key)
            description = prop.get("description", "")
            row = _FieldRow(editor, description, self)
            label = QLabel(prop.get("title", key), self)
            label.setToolTip(description)
            editor.setToolTip(description)
            label.setBuddy(editor.focus_widget())
            layout.addRow(label, row)
            self.rows[key], self.labels[key] = row, label
            self.defaults[key] = prop.get("default")
            editor.changed.connect(self._on_edit)
        self._saved: dict[str, Any] = {}
        self.set_values(values or {})

    # -- values ------------------------------------------------------------------------------------
    def keys(self) -> list[str]:
        """The properties in the form, in schema order."""
        return list(self.rows)

    def editor(self, key: str) -> FieldEditor:
        """The editor of property ``key``."""
        return self.rows[key].editor

    def values(self) -> dict[str, Any]:
        """The edited values, keyed by alias."""
        return {key: row.editor.value() for key, row in self.rows.items()}

    def saved_values(self) -> dict[str, Any]:
        """The values the form was last given (what :meth:`revert` restores)."""
        return dict(self._saved)

    def set_values(self, values: Mapping[str, Any]) -> None:
        """Show ``values`` (missing keys take the schema default) and make them the saved state."""
        self._saved = {key: values.get(key, self.defaults.get(key)) for key in self.rows}
        for key, row in self.rows.items():
            row.editor.set_value(self._saved[key])
        self.clear_errors()
        self.changed.emit()

    def revert(self) -> None:
        """Restore the saved values and clear every error."""
        self.set_values(self._saved)

    def changed_values(self) -> dict[str, Any]:
        """The properties whose edited value differs from the saved one."""
        return {k: v for k, v in self.values().items() if v != self._saved.get(k)}

    def is_dirty(self) -> bool:
        """True when some value differs from the saved state."""
        return bool(self.changed_values())

    # -- validation --------------------------------------------------------------------------------
    def validate(self) -> dict[str, str]:
        """Validate with ``model_validate``; mark invalid fields and return ``{alias: reason}``."""
        errors: dict[str, str] = {}
        for key, row in self.rows.items():
            problem = row.editor.input_error()
            if problem:
                errors[key] = problem
        data = {k: v for k, v in self.values().items() if k not in errors}
        try:
            self.model.model_validate(data)
        except ValidationError as exc:
            for err in exc.errors():
                key = self._key_of(err.get("loc") or ())
                errors.setdefault(key, error_reason(str(err.get("msg", "invalid value"))))
        for key, row in self.rows.items():
            row.set_error(errors.get(key))
        return errors

    def _key_of(self, loc: tuple[Any, ...]) -> str:
        if not loc:
            return ""
        head = str(loc[0])
        field = self.model.model_fields.get(head)
        return (field.alias or head) if field is not None else head

    def set_field_error(self, key: str, message: str | None) -> None:
        """Show ``message`` at field ``key`` (``None`` clears it)."""
        self.rows[key].set_error(message)

    def field_error(self, key: str) -> str:
        """The error shown at ``key`` (``""`` when none)."""
        row = self.rows[key]
        return row.error.text() if not row.error.isHidden() else ""

    def clear_errors(self) -> None:
        """Remove every field error."""
        for row in self.rows.values():
            row.set_error(None)

    def add_extra(self, key: str, widget: QWidget) -> None:
        """Place ``widget`` under the editor of ``key`` (a live preview, a hint)."""
        self.rows[key].add_extra(widget)

    def _on_edit(self) -> None:
        self.changed.emit()
