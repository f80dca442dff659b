"""Where the GUI thread was while it stalled: a sampling thread for the stall benchmarks.

:class:`StallProbe` watches a heartbeat the GUI thread updates (``beat()``); whenever the beat is late
by more than ``late_ms``, it samples the GUI thread's Python stack (``sys._current_frames``) every
``period_ms``. :meth:`StallProbe.top` names the innermost memdesk frames seen most often, so a stall is
traced to the call that held the thread (or to none: waiting for a CPU or the GIL).
"""

from __future__ import annotations

import sys
import threading
import time
import traceback
from collections import Counter


class StallProbe:
    """Sample the GUI thread's stack while its heartbeat is late."""

    def __init__(self, late_ms: float = 15.0, period_ms: float = 2.0) -> None:
        self._main = threading.main_thread().ident
        self._late, self._period = late_ms / 1000, period_ms / 1000
        self._last = time.perf_counter()
        self._stop = threading.Event()
        self.samples: Counter[str] = Counter()
        self.depth = 4
        self._thread = threading.Thread(target=self._run, name="stall-probe", daemon=True)

    def beat(self) -> None:
        """Called by the GUI thread's heartbeat."""
        self._last = time.perf_counter()

    def start(self) -> StallProbe:
        self._last = time.perf_counter()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2)

    def _run(self) -> None:
        while not self._stop.wait(self._period):
            if time.perf_counter() - self._last < self._late:
                continue
            frame = sys._current_frames().get(self._main)  # noqa: SLF001 (a diagnostic)
            if frame is None:
                continue
            stack = traceback.extract_stack(frame)
            ours = [f for f in stack if "/gui/" in f.filename or "/core/" in f.filename]
            key = " < ".join(f"{f.filename.rsplit('/', 2)[-2]}/{f.filename.rsplit('/', 1)[-1]}:{f.lineno} {f.name}"
                             for f in reversed(ours[-self.depth:])) or "(outside memdesk)"
            inner = stack[-1]
            self.samples[f"{inner.filename.rsplit('/', 1)[-1]}:{inner.lineno} {inner.name} <- {key}"] += 1

    def top(self, n: int = 6) -> list[tuple[str, float]]:
        """The ``n`` stacks seen most often while late, with the milliseconds they account for."""
        return [(k, c * self._period * 1000) for k, c in self.samples.most_common(n)]
