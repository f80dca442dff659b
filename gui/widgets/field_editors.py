"""One editor per JSON-schema property kind, behind a common interface (``value``, ``set_value``, ``changed``).

:func:`editor_for` picks the editor from a property of ``model_json_schema()``: bool → check box,
integer → spin box (a duration editor when the property has ``"unit": "ms"``), number → double
spin box, enum/Literal → combo box, string → line edit, object/array/anything else → JSON text.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QRect, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFontDatabase, QPainter, QPaintEvent, QPen, QResizeEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QWidget,
)

from gui.widgets.colors import css

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
OUTLINE = 2  # the width of the red outline of an invalid value


class _Outline(QWidget):
    """A red frame laid over an editor's inputs while their value is invalid.

    Painted on top, outside the layout, so marking a value invalid moves and resizes nothing: the
    style-sheet border it replaces dropped the native frame, and the schedule field shrank from 22 to
    20 px, its text squashed, when Apply found it invalid.
    """

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("invalidOutline")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt's name)
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(QColor(css("error-fg")), OUTLINE))
        painter.drawRoundedRect(QRectF(self.rect()).adjusted(1, 1, -1, -1), 3, 3)
        painter.end()


class FieldEditor(QWidget):
    """Base of the field editors: a value in, a value out, ``changed`` on every user edit."""

    changed = Signal()

    def __init__(self, prop: dict[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.prop = prop
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._invalid = False
        self._outline: _Outline | None = None

    def value(self) -> Any:
        """The edited value, as it goes into the model's JSON."""
        raise NotImplementedError

    def set_value(self, value: Any) -> None:
        """Show ``value`` without emitting ``changed``."""
        raise NotImplementedError

    def input_error(self) -> str | None:
        """A reason the text cannot even be read as a value (bad JSON), else ``None``."""
        return None

    def set_invalid(self, invalid: bool) -> None:
        """Outline the editor's inputs in red while its value is invalid (a frame laid over them: they keep
        their native look, size and place)."""
        self._invalid = invalid
        self.setProperty("invalid", invalid)
        if invalid and self._outline is None:
            self._outline = _Outline(self)
        if self._outline is not None:
            self._outline.setVisible(invalid)
            if invalid:
                self._place_outline()

    def outline_rect(self) -> QRect:
        """Where the red outline goes: around the inputs (not the help labels)."""
        rect = QRect()
        for child in self.findChildren(QWidget):
            if child.parent() is self and child is not self._outline and not isinstance(child, QLabel) \
                    and not child.isHidden():
                rect = rect.united(child.geometry())
        return rect

    def _place_outline(self) -> None:
        if self._outline is not None:
            self._outline.setGeometry(self.outline_rect())
            self._outline.raise_()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        if self._invalid:
            self._place_outline()

    def focus_widget(self) -> QWidget:
        """The widget that takes focus and keystrokes (for tests and labels' buddies)."""
        return self.focusProxy() or self


class BoolEditor(FieldEditor):
    """A check box."""

    def __init__(self, prop: dict[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(prop, parent)
        self.box = QCheckBox(self)
        self.box.toggled.connect(self.changed)
        self._layout.addWidget(self.box)
        self._layout.addStretch(1)  # the box as wide as itself, so an outline hugs it
        self.setFocusProxy(self.box)

    def value(self) -> bool:
        return self.box.isChecked()

    def set_value(self, value: Any) -> None:
        self.box.blockSignals(True)
        self.box.setChecked(bool(value))
        self.box.blockSignals(False)


def int_bounds(prop: dict[str, Any]) -> tuple[int, int]:
    """The spin-box range of an integer property (its schema bounds, clamped to 32 bits)."""
    low = prop.get("minimum", prop["exclusiveMinimum"] + 1 if "exclusiveMinimum" in prop else INT_MIN)
    high = prop.get("maximum", prop["exclusiveMaximum"] - 1 if "exclusiveMaximum" in prop else INT_MAX)
    return max(INT_MIN, int(low)), min(INT_MAX, int(high))


class IntEditor(FieldEditor):
    """A spin box bounded by the property's ``minimum``/``maximum``."""

    def __init__(self, prop: dict[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(prop, parent)
        self.spin = QSpinBox(self)
        self.spin.setRange(*int_bounds(prop))
        self.spin.setGroupSeparatorShown(True)
        self.spin.valueChanged.connect(self.changed)
        self._layout.addWidget(self.spin)
        self._layout.addStretch(1)
        self.setFocusProxy(self.spin)

    def value(self) -> int:
        return self.spin.value()

    def set_value(self, value: Any) -> None:
        self.spin.blockSignals(True)
        self.spin.setValue(int(value) if isinstance(value, int | float) else self.spin.minimum())
        self.spin.blockSignals(False)


class FloatEditor(FieldEditor):
    """A double spin box bounded by the property's ``minimum``/``maximum``."""

    def __init__(self, prop: dict[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(prop, parent)
        self.spin = QDoubleSpinBox(self)
        self.spin.setDecimals(3)
        self.spin.setRange(float(prop.get("minimum", -1e12)), float(prop.get("maximum", 1e12)))
        self.spin.valueChanged.connect(self.changed)
        self._layout.addWidget(self.spin)
        self._layout.addStretch(1)
        self.setFocusProxy(self.spin)

    def value(self) -> float:
        return self.spin.value()

    def set_value(self, value: Any) -> None:
        self.spin.blockSignals(True)
        self.spin.setValue(float(value) if isinstance(value, int | float) else 0.0)
        self.spin.blockSignals(False)


class StrEditor(FieldEditor):
    """A line edit; an empty text is ``None`` when the property is optional."""

    def __init__(self, prop: dict[str, Any], parent: QWidget | None = None, nullable: bool = False) -> None:
        super().__init__(prop, parent)
        self.nullable = nullable
        self.line = QLineEdit(self)
        self.line.setClearButtonEnabled(True)
        if isinstance(prop.get("examples"), list) and prop["examples"]:
            self.line.setPlaceholderText(f"e.g. {prop['examples'][0]}")
        self.line.textEdited.connect(self.changed)
        self._layout.addWidget(self.line)
        self.setFocusProxy(self.line)

    def value(self) -> str | None:
        text = self.line.text()
        return None if self.nullable and not text else text

    def set_value(self, value: Any) -> None:
        self.line.setText("" if value is None else str(value))
        # setText leaves the cursor at the end, which scrolls a value wider than the field so that
        # its first characters are hidden (".fusion/…" showed as "fusion/…" at 800x600): show the start.
        self.line.setCursorPosition(0)
        # Wide enough for a typical value (a path) and the clear button, so none of it is cut off.
        text_width = self.line.fontMetrics().horizontalAdvance(self.line.text() or self.line.placeholderText())
        self.line.setMinimumWidth(min(max(text_width + 34, 120), 360))


class EnumEditor(FieldEditor):
    """A combo box over the property's ``enum`` values."""

    def __init__(self, prop: dict[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(prop, parent)
        self.combo = QComboBox(self)
        for option in prop.get("enum", []):
            self.combo.addItem(str(option), option)
        self.combo.activated.connect(lambda _i: self.changed.emit())
        self._layout.addWidget(self.combo)
        self._layout.addStretch(1)
        self.setFocusProxy(self.combo)

    def value(self) -> Any:
        return self.combo.currentData()

    def set_value(self, value: Any) -> None:
        index = self.combo.findData(value)
        self.combo.setCurrentIndex(max(index, 0))


class JsonEditor(FieldEditor):
    """A small JSON text box for objects, arrays and anything without a dedicated editor."""

    def __init__(self, prop: dict[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(prop, parent)
        self.text = QPlainTextEdit(self)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setTabChangesFocus(True)
        self.text.setFixedHeight(self.text.fontMetrics().lineSpacing() * 4 + 12)
        self.text.textChanged.connect(self.changed)
        self._layout.addWidget(self.text)
        self.setFocusProxy(self.text)

    def _parse(self) -> tuple[Any, str | None]:
        raw = self.text.toPlainText().strip()
        if not raw:
            return ({} if self.prop.get("type") == "object" else None), None
        try:
            return json.loads(raw), None
        except json.JSONDecodeError as exc:
            return None, f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"

    def value(self) -> Any:
        return self._parse()[0]

    def input_error(self) -> str | None:
        return self._parse()[1]

    def set_value(self, value: Any) -> None:
        self.text.blockSignals(True)
        self.text.setPlainText("" if value is None else json.dumps(value, indent=2, ensure_ascii=False))
        self.text.blockSignals(False)


def resolve_property(prop: dict[str, Any], defs: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Inline ``$ref``/``allOf`` and unwrap ``Optional`` (``anyOf`` with null); return ``(prop, nullable)``."""
    nullable = False
    merged = dict(prop)
    options = merged.pop("anyOf", None)
    if isinstance(options, list):
        non_null = [o for o in options if o.get("type") != "null"]
        nullable = len(non_null) < len(options)
        if len(non_null) == 1:
            merged = {**non_null[0], **merged}
    for key in ("allOf",):
        if isinstance(merged.get(key), list) and len(merged[key]) == 1:
            merged = {**merged.pop(key)[0], **merged}
    ref = merged.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = defs.get(ref.rsplit("/", 1)[-1], {})
        merged = {**target, **{k: v for k, v in merged.items() if k != "$ref"}}
    return merged, nullable


def editor_for(prop: dict[str, Any], nullable: bool = False, parent: QWidget | None = None) -> FieldEditor:
    """Return the editor for a resolved JSON-schema property."""
    kind = prop.get("type")
    if "enum" in prop:
        return EnumEditor(prop, parent)
    if kind == "boolean":
        return BoolEditor(prop, parent)
    if kind == "integer":
        if prop.get("unit") == "ms":
            from gui.widgets.duration_edit import DurationEditor

            return DurationEditor(prop, parent)
        return IntEditor(prop, parent)
    if kind == "number":
        return FloatEditor(prop, parent)
    if kind == "string":
        return StrEditor(prop, parent, nullable)
    return JsonEditor(prop, parent)
