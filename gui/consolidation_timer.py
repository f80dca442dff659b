"""Fusion's dream and auto-summarize schedules while the app is open: checked every minute, run off the GUI thread.

What is due runs with the user's default provider (:func:`core.consolidation.scheduled.run_due`);
its proposals apply themselves only where the unattended policy allows and otherwise wait in the
Consolidation view. The outcome goes to the status bar and the document list is refreshed.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer

from gui.session import ProjectSession
from gui.tasks import Operation, run_in_background


class ConsolidationTimer(QObject):
    """Ticks every ``interval_ms`` for one open project."""

    def __init__(self, session: ProjectSession, interval_ms: int = 60_000, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.operation: Operation | None = None
        self.timer = QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self.tick)
        self.timer.start()

    def tick(self) -> None:
        """Run what is due (once at a time)."""
        if self.operation is not None:
            return
        from core.consolidation.scheduled import ScheduledRuns

        runs = ScheduledRuns([self.session.root])
        self.operation = run_in_background(lambda _token: runs.tick(), self._done, self._failed, parent=self)

    def _done(self, outcomes: list) -> None:
        self.operation = None
        for outcome in outcomes:
            self.session.statusMessage.emit(f"Scheduled consolidation: {outcome.message}")
        if outcomes:
            self.session.documentsChanged.emit()

    def _failed(self, exc: BaseException) -> None:
        self.operation = None
        self.session.statusMessage.emit(f"Scheduled consolidation failed: {exc}")

    def stop(self) -> None:
        """Stop ticking (the project closes)."""
        self.timer.stop()
        if self.operation is not None:
            self.operation.cancel()
            self.operation = None
