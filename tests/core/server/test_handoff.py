"""The appends' threads (core.server.handoff.Handoff): what the executor's hop gave the fast append, with less
on either side: results and errors back on the event loop, named threads reused, calls beyond the last
thread queued, a cancelled caller's call still run to its end, and a process that ends with them."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from core.server.handoff import Handoff

REPO = Path(__file__).resolve().parents[3]


def test_results_and_errors_come_back_on_the_loop_from_named_reused_threads() -> None:
    hand = Handoff("memdesk-test-append")

    async def main() -> None:
        loop_thread = threading.current_thread()
        names = [await hand.run(lambda: threading.current_thread().name) for _ in range(20)]
        assert set(names) == {"memdesk-test-append_0"}  # one call at a time: the idle thread is reused
        assert threading.current_thread() is loop_thread
        assert await hand.run(pow, 2, 10) == 1024
        with pytest.raises(ValueError, match="invalid literal"):
            await hand.run(int, "not a number")
        assert await hand.run(lambda: "after an error") == "after an error"

    asyncio.run(main())
    hand.stop()


def test_calls_beyond_the_last_thread_wait_and_all_finish() -> None:
    hand = Handoff("memdesk-test-busy", max_threads=2)
    gate = threading.Event()
    ran: list[int] = []
    lock = threading.Lock()

    def call(i: int) -> str:
        if i < 2:
            gate.wait(10)  # both threads busy
        with lock:
            ran.append(i)
        return threading.current_thread().name

    async def main() -> list[str]:
        tasks = [asyncio.ensure_future(hand.run(call, i)) for i in range(6)]
        await asyncio.sleep(0.2)
        assert sorted(ran) == []  # the first two hold both threads; the rest wait in the queue
        gate.set()
        return await asyncio.gather(*tasks)

    names = asyncio.run(main())
    assert sorted(ran) == list(range(6))
    assert set(names) <= {"memdesk-test-busy_0", "memdesk-test-busy_1"}  # no third thread: the rest waited
    hand.stop()


def test_a_cancelled_caller_does_not_stop_its_call() -> None:
    # As AnyIO's hop: an append handed off is written even if the client went away; its answer is dropped.
    hand = Handoff("memdesk-test-cancel")
    gate, done = threading.Event(), threading.Event()

    def append() -> str:
        gate.wait(10)
        done.set()
        return "written"

    async def main() -> None:
        task = asyncio.ensure_future(hand.run(append))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        gate.set()
        assert await asyncio.get_running_loop().run_in_executor(None, done.wait, 10)
        assert await hand.run(lambda: "next") == "next"  # the thread is free again

    asyncio.run(main())
    hand.stop()


def test_a_process_ends_only_after_its_handed_off_call_is_done(tmp_path: Path) -> None:
    marker = tmp_path / "written"
    code = ("import asyncio, time\nfrom pathlib import Path\nfrom core.server.handoff import Handoff\n"
            "hand = Handoff('memdesk-append')\n"
            f"def slow(): time.sleep(0.3); Path({str(marker)!r}).write_text('yes')\n"
            "async def main():\n    asyncio.ensure_future(hand.run(slow))\n    await asyncio.sleep(0.05)\n"
            "asyncio.run(main())\n")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert marker.read_text() == "yes" and time.monotonic() - started < 60
