"""One line of facts about a prune candidate: valid or not (and why), the required sections it keeps,
and the memory's size before and after."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from core.insights import REQUIRED_MEMORY_SECTIONS, PruneValidationResult
from gui.widgets.colors import css


class PruneFacts(QWidget):
    """Validation, sections kept and sizes of a prune candidate; hidden until :meth:`show_facts`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.validation_label = QLabel(self)
        self.sections_label = QLabel(self)
        self.sizes_label = QLabel(self)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in (self.validation_label, self.sections_label, self.sizes_label):
            widget.setWordWrap(True)  # a narrow window wraps the facts instead of growing wider
            layout.addWidget(widget, 1)
            layout.addSpacing(16)

    def show_facts(self, validation: PruneValidationResult, memory_size: int, seconds: float) -> None:
        """Show the facts of a candidate validated as ``validation`` against a memory of ``memory_size``."""
        mark, colour = ("✓ Valid", "ok-fg") if validation.valid else ("✗ Invalid", "error-fg")
        self.validation_label.setText(f"<b style='color:{css(colour)}'>{mark}</b> — {validation.reason}")
        parts = []
        for name in REQUIRED_MEMORY_SECTIONS:
            kept = name in validation.found_sections
            parts.append(f"<span style='color:{css('ok-fg' if kept else 'error-fg')}'>"
                         f"{'✓' if kept else '✗'} {name}</span>")
        self.sections_label.setText("Sections kept: " + "  ".join(parts))
        before, after = memory_size, validation.size + 1 if validation.size else 0  # written with one newline
        delta = after - before
        percent = f", {delta / before:+.1%}" if before else ""
        self.sizes_label.setText(f"Size: {before:,} → {after:,} characters ({delta:+,}{percent})")
        self.sizes_label.setToolTip(f"Diff computed in {seconds * 1000:.0f} ms")
        self.show()
