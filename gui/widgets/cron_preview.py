"""The next run times of a cron schedule, recomputed as the operator types.

The schedule is evaluated in UTC (as ``memdesk run-scheduled`` does), and the preview says so.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from PySide6.QtWidgets import QLabel, QWidget

from core.insights import next_run_times
from gui.widgets.colors import help_colour

RUNS_SHOWN = 3


def format_run(moment: datetime, now: datetime) -> str:
    """``Sun 1 Dec 2024, 02:00 UTC (in 5 h)``."""
    wait = moment - now
    hours = wait.total_seconds() / 3600
    if hours < 1:
        ahead = f"in {max(1, round(wait.total_seconds() / 60))} min"
    elif hours < 48:
        ahead = f"in {round(hours)} h"
    else:
        ahead = f"in {round(hours / 24)} days"
    return f"{moment:%a} {moment.day} {moment:%b %Y, %H:%M} UTC ({ahead})"


class CronPreview(QLabel):
    """Shows the next :data:`RUNS_SHOWN` runs of a cron expression; ``clock`` gives "now" (UTC)."""

    def __init__(self, clock: Callable[[], datetime] | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.clock = clock or (lambda: datetime.now(UTC))
        self.runs: list[datetime] = []
        self.setWordWrap(True)
        pal = self.palette()
        pal.setColor(self.foregroundRole(), help_colour())
        self.setPalette(pal)

    def set_expression(self, expression: str) -> str | None:
        """Show the next runs of ``expression``; return why it is invalid (nothing shown), else ``None``."""
        now = self.clock()
        try:
            self.runs = next_run_times(expression.strip(), RUNS_SHOWN, start=now)
        except (ValueError, KeyError, TypeError) as exc:
            self.runs = []
            self.clear()
            self.hide()
            return str(exc) or "not a valid cron schedule"
        self.setText("Next runs (the schedule is evaluated in UTC): "
                     + " · ".join(format_run(run, now) for run in self.runs))
        self.show()
        return None
