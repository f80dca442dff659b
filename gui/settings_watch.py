"""Settings changed elsewhere reach the open window within about a second (issue 18, "live both ways").

A timer asks, off the GUI thread, whether the project's settings store moved (:func:`core.settings.poll.
poll_settings`: Fusion's ``__meta.lastModified``, the files' size and time, Fusion's API answer) and reads
them when it did; the session then takes them on the GUI thread and every view that depends on them
refreshes through ``settingsChanged`` (the editor's read-only state, the status bar, the schedule's next
runs). One look runs at a time; a slow store (Fusion's API) only delays the next look.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal

from gui.tasks import run_in_background

if TYPE_CHECKING:
    from gui.session import ProjectSession

log = logging.getLogger(__name__)

POLL_MS = 600


class SettingsWatcher(QObject):
    """Polls one session's settings store and hands what changed to the session."""

    polled = Signal()  # after each look (tests wait on it)

    def __init__(self, session: ProjectSession, interval_ms: int = POLL_MS) -> None:
        super().__init__(session)
        self.session = session
        self._stamp: str | None = None
        self._generation = 0  # bumped by invalidate(): a look begun before a change made here is stale
        self._busy = False
        self._stopped = False
        self._op: Any = None
        self.timer = QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self.look)

    def start(self) -> None:
        """Take the current state as seen (first look), then keep looking."""
        self._stopped = False
        self.look()
        self.timer.start()

    def stop(self) -> None:
        self._stopped = True
        self.timer.stop()
        if self._op is not None:
            self._op.cancel()

    def invalidate(self) -> None:
        """This process just changed the settings: the next look reads them whatever the token says, so a
        change made elsewhere that brings back the token last seen (A → mine B → theirs A) is not missed."""
        self._generation += 1
        if self._stamp is not None:
            self._stamp = "changed here"

    def look(self) -> None:
        """One look, on a worker thread (skipped while the previous one runs)."""
        if self._busy or self._stopped:
            return
        from core.settings.poll import poll_settings

        self._busy = True
        root, previous, generation = self.session.root, self._stamp, self._generation
        self._op = run_in_background(lambda _token: poll_settings(root, previous),
                                     on_done=lambda poll: self._seen(poll, generation),
                                     on_error=self._failed, parent=self)

    def _seen(self, poll: Any, generation: int | None = None) -> None:
        self._busy = False
        if generation is not None and generation != self._generation:
            # Read before a change made here: neither its values nor its token are current.
            self._stamp = "changed here"
            self.polled.emit()
            return
        first = self._stamp is None
        self._stamp = poll.stamp
        if not self._stopped and not first and (poll.read is not None or poll.error is not None):
            self.session.adopt_settings(poll)
        self.polled.emit()

    def _failed(self, exc: BaseException) -> None:
        self._busy = False
        log.warning("settings watch: %s", exc)
        self.polled.emit()
