"""What a server process spends per request, read from Linux's ``/proc``: CPU time (all its threads) and
context switches (how often its threads went to sleep or were put aside). Unlike a latency these hardly
move with the machine's load, so a change in the server's own work shows even on a busy machine.

``None`` where there is no ``/proc`` (macOS, Windows): the bench then prints latencies only.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any


def sample(pid: int) -> tuple[float, int] | None:
    """(CPU seconds, context switches) of process ``pid`` so far, all threads; ``None`` without ``/proc``."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        switches = 0
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/status") as fh:
                    switches += sum(int(line.split()[1]) for line in fh if "ctxt_switches" in line)
            except OSError:  # a thread that ended meanwhile
                continue
        return cpu, switches
    except (OSError, IndexError, ValueError):
        return None


class PhaseCost:
    """The server's CPU and context switches over one phase, and the in-process floor's CPU per call."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.before = sample(pid)
        self.floor_cpu = 0.0
        self.floor_calls = 0

    def floor(self, fn: Callable[[int], Any]) -> Callable[[int], Any]:
        """``fn`` with the CPU time of each call counted as the floor's."""
        def run(i: int) -> Any:
            t0 = time.process_time()
            try:
                return fn(i)
            finally:
                self.floor_cpu += time.process_time() - t0
                self.floor_calls += 1
        return run

    def floor_extra(self, fn: Callable[[], Any]) -> Callable[[], Any]:
        """``fn`` (the floor's background work, waited for untimed) with its CPU time counted as the floor's,
        not as a call of its own."""
        def run() -> Any:
            t0 = time.process_time()
            try:
                return fn()
            finally:
                self.floor_cpu += time.process_time() - t0
        return run

    def line(self, requests: int) -> str:
        """``server: 1.88 ms CPU, 8.1 context switches per request | in-process: 0.20 ms CPU per call``."""
        after = sample(self.pid)
        if self.before is None or after is None or requests <= 0:
            return "  (no /proc here: CPU per request not measured)"
        cpu = (after[0] - self.before[0]) / requests * 1000
        switches = (after[1] - self.before[1]) / requests
        floor = (f"  |  in-process: {self.floor_cpu / self.floor_calls * 1000:.2f} ms CPU per call"
                 if self.floor_calls else "")
        return f"  server process: {cpu:.2f} ms CPU, {switches:.1f} context switches per request{floor}"


def quiet(pid: int, window: float = 0.003, timeout: float = 2.0) -> bool:
    """Wait, untimed, until process ``pid`` has nothing left running: every thread asleep (``S``: no thread
    running or in a disk sync) and no thread switching context for ``window`` seconds. A server's work after
    its answer (history's job, its syncs) then ends before the next measured call, as the in-process floor's
    own history job is waited for before the next served call. ``False`` without ``/proc`` or after ``timeout``."""
    deadline = time.perf_counter() + timeout
    last: int | None = None
    since = time.perf_counter()
    while time.perf_counter() < deadline:
        state = _threads_state(pid)
        if state is None:
            return False
        asleep, switches = state
        now = time.perf_counter()
        if not asleep or switches != last:
            last, since = (switches if asleep else None), now
        elif now - since >= window:
            return True
        time.sleep(0.001)  # a poll reads two files a thread (~0.1 ms): the waiting costs a tenth of a CPU
    return False


def _threads_state(pid: int) -> tuple[bool, int] | None:
    """(every thread of ``pid`` asleep, their context switches so far); ``None`` without ``/proc``."""
    asleep, switches = True, 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as fh:
                asleep = asleep and fh.read().rsplit(")", 1)[1].split()[0] == "S"
            with open(f"/proc/{pid}/task/{tid}/status") as fh:
                switches += sum(int(line.split()[1]) for line in fh if "ctxt_switches" in line)
        except (OSError, IndexError, ValueError):  # a thread that ended meanwhile
            continue
    return asleep, switches
