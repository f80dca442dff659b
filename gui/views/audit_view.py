"""The memory audit: overall health, every check with its details, the files' sizes, the last run.

The report comes from ``core.insights.generate_memory_audit`` (which also reads the last recorded
extraction and prune from the audit state file); the view refreshes when the session says the
audit, the insights or the memory changed.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QBoxLayout,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.errors import MemoryBackendError
from core.insights import (
    CATEGORY_SECTIONS,
    MemoryAuditReport,
    generate_memory_audit,
    render_memory_audit_markdown,
    write_memory_audit,
)
from gui.session import ProjectSession
from gui.widgets.colors import css
from gui.widgets.parts import clear_scroll_area, scaled_font

NO_PRUNE_RECORDED = "No pruning run recorded"  # the reason generate_memory_audit gives when none is
#: The view's width from which the checks and the facts stand side by side.
SIDE_BY_SIDE_FROM = 820
HEALTH_STYLE = {"healthy": ("✓ Healthy", "ok"), "warning": ("⚠ Warning", "warning"), "issues": ("✗ Issues", "error")}


def _mark(ok: bool) -> str:
    return f"<b style='color:{css('ok-fg' if ok else 'error-fg')}'>{'✓' if ok else '✗'}</b>"


def _wrapping(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class _FactsBox(QGroupBox):
    """A titled list of "name: value" rows, replaced as a whole."""

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(title, parent)
        self.form = QFormLayout(self)
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)

    def set_rows(self, rows: list[tuple[str, str]]) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        for name, value in rows:
            self.form.addRow(f"{name}:", _wrapping(value))

    def text(self) -> str:
        """Everything the box shows, for tests and accessibility."""
        parts = []
        for row in range(self.form.rowCount()):
            for role in (QFormLayout.ItemRole.LabelRole, QFormLayout.ItemRole.FieldRole):
                item = self.form.itemAt(row, role)
                if item is not None and isinstance(item.widget(), QLabel):
                    parts.append(item.widget().text())
        return " ".join(parts)


class AuditView(QWidget):
    """Health and checks of the project's memory."""

    reportSaved = Signal(str)  # path written

    def __init__(self, session: ProjectSession, parent: QWidget | None = None, *,
                 clock: Callable[[], datetime] | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.clock = clock or (lambda: datetime.now(UTC))
        self.report: MemoryAuditReport | None = None
        self.health = QLabel(self)
        self.health.setFont(scaled_font(self.health.font(), 1.3, bold=True))
        self.generated = QLabel(self)
        self.generated.setWordWrap(True)  # its timestamp must not force the window past 800 px
        self.save_button = QPushButton("Save report", self)  # short: the top row fits at 800 px
        self.save_button.setToolTip(f"Write this report to {session.project.audit_path}")
        self.refresh_button = QPushButton("Refresh", self)
        self.status = _wrapping()
        self.checks_box = QGroupBox("Checks", self)
        self.checks_grid = QGridLayout(self.checks_box)
        self.checks_grid.setColumnStretch(2, 1)
        # The layout's own paths (a layered project keeps them under .fusion/memory/), never the seed's.
        self.working_box = _FactsBox("Working memory", self)
        self.insights_box = _FactsBox("Insights", self)
        self.extraction_box = _FactsBox("Last extraction", self)
        self.pruning_box = _FactsBox("Last pruning", self)

        top = QHBoxLayout()
        top.addWidget(self.health)
        top.addSpacing(16)
        top.addWidget(self.generated, 1)
        top.addWidget(self.save_button)
        top.addWidget(self.refresh_button)
        left = QVBoxLayout()
        left.addWidget(self.checks_box)
        left.addWidget(self.extraction_box)
        left.addStretch(1)
        right = QVBoxLayout()
        right.addWidget(self.working_box)
        right.addWidget(self.insights_box)
        right.addWidget(self.pruning_box)
        right.addStretch(1)
        body = QWidget()
        self.columns = QBoxLayout(QBoxLayout.Direction.LeftToRight, body)  # stacked when narrow (resizeEvent)
        self.columns.addLayout(left, 3)
        self.columns.addLayout(right, 2)
        scroll = clear_scroll_area(body, self)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(scroll, 1)
        layout.addWidget(self.status)

        self.refresh_button.clicked.connect(self.refresh)
        self.save_button.clicked.connect(self.save_report)
        session.auditChanged.connect(self.refresh)
        session.insightsChanged.connect(self.refresh)
        session.memoryReplaced.connect(lambda _source: self.refresh())
        self.refresh()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        """Narrower than :data:`SIDE_BY_SIDE_FROM`: the facts go under the checks (800x600 shows all)."""
        super().resizeEvent(event)
        wide = event.size().width() >= SIDE_BY_SIDE_FROM
        self.columns.setDirection(QBoxLayout.Direction.LeftToRight if wide else QBoxLayout.Direction.TopToBottom)

    def refresh(self) -> None:
        """Generate the audit again and show it."""
        root, now = self.session.root, self.clock()  # the audit reads the memory and insights: on the worker
        report = self.session.worker.call(lambda: generate_memory_audit(root, now=now), "")
        self.report = report
        text, kind = HEALTH_STYLE.get(report.health, (report.health, "info"))
        self.health.setText(f"<span style='color:{css(kind + '-fg')}'>{text}</span>")
        self.health.setToolTip(f"{sum(not c.passed for c in report.checks)} of {len(report.checks)} checks failed")
        self.generated.setText(f"Audit generated {report.generated_at}")
        self._show_checks(report)
        wm, im = report.working_memory, report.insights_memory
        self.working_box.set_rows([
            ("File", self.session.project.memory_path), ("Exists", _mark(wm.exists)), ("Size", f"{wm.size:,} characters"), ("Sections", str(wm.section_count))])
        categories = " · ".join(f"{CATEGORY_SECTIONS[c][3:]} {n}" for c, n in im.categories.items())
        self.insights_box.set_rows([
            ("File", self.session.project.insights_path), ("Exists", _mark(im.exists)), ("Size", f"{im.size:,} characters"),
            ("Insights", f"{im.insight_count} ({categories})"), ("Last updated", im.last_updated or "—")])
        self._show_extraction(report)
        self._show_pruning(report)

    def _show_checks(self, report: MemoryAuditReport) -> None:
        while self.checks_grid.count():
            item = self.checks_grid.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        for row, check in enumerate(report.checks):
            mark = _wrapping(_mark(check.passed))
            name = QLabel(f"<b>{check.name}</b>")
            name.setObjectName(check.id)
            self.checks_grid.addWidget(mark, row, 0, Qt.AlignmentFlag.AlignTop)
            self.checks_grid.addWidget(name, row, 1, Qt.AlignmentFlag.AlignTop)
            self.checks_grid.addWidget(_wrapping(check.details), row, 2, Qt.AlignmentFlag.AlignTop)

    def _show_extraction(self, report: MemoryAuditReport) -> None:
        ex = report.extraction
        if not ex.run_at:
            self.extraction_box.set_rows([("Runs", "No extraction runs recorded")])
            return
        rows = [("Run at", f"{ex.run_at}{self._ago(ex.run_at)}"), ("Success", _mark(ex.success)),
                ("Counts", f"{ex.insight_count} insights · {ex.duplicate_count} duplicates skipped · "
                           f"{ex.skipped_count} skipped"),
                ("Summary", ex.summary or "—")]
        if ex.error:
            rows.append(("Error", f"<span style='color:{css('error-fg')}'>{ex.error}</span>"))
        self.extraction_box.set_rows(rows)

    def _ago(self, timestamp: str) -> str:
        try:
            then = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
        except ValueError:
            return ""
        hours = (self.clock() - then).total_seconds() / 3600
        if hours < 0:
            return ""
        return f" ({round(hours)} hours ago)" if hours < 48 else f" ({round(hours / 24)} days ago)"

    def _show_pruning(self, report: MemoryAuditReport) -> None:
        pr = report.pruning
        if not pr.applied and pr.reason == NO_PRUNE_RECORDED:
            self.pruning_box.set_rows([("Runs", "No prune recorded")])
            return
        rows = [("Applied", f"{_mark(pr.applied)} {'yes' if pr.applied else 'no'}"), ("Reason", pr.reason)]
        if pr.applied:
            rows.append(("Size", f"{pr.original_size:,} → {pr.new_size:,} characters ({pr.size_delta:+,})"))
        self.pruning_box.set_rows(rows)

    def check_rows(self) -> list[tuple[bool, str, str]]:
        """``(passed, name, details)`` of every check shown."""
        if self.report is None:
            return []
        return [(c.passed, c.name, c.details) for c in self.report.checks]

    def save_report(self) -> bool:
        """Write the audit shown as markdown to ``.fusion/memory-audit.md``."""
        if self.report is None:
            return False
        try:
            markdown, root = render_memory_audit_markdown(self.report), self.session.root
            self.session.worker.call(lambda: write_memory_audit(root, markdown), "Saving the audit report…",
                                     disable=(self.save_button,))
        except MemoryBackendError as exc:
            self.status.setText(f"Not saved: {exc}")
            return False
        self.status.setText(f"Saved {self.session.project.audit_path}.")
        self.reportSaved.emit(self.session.project.audit_path)
        return True
