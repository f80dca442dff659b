"""History's held wake-up (core.storage.history.jobs.Hold): a job asked under a hold is queued in its order at
once and runs when the hold is released; a wait on it never hangs (it wakes the worker), whoever waits.

A served append holds history's wake-up until its answer is sent; an earlier attempt that held the jobs
themselves hung a served append whose rotation waited for its own version (docs/servers.md)."""

from __future__ import annotations

import threading
import time

import pytest

from core.storage.history.jobs import Hold, hold_here, start_worker

#: How long a woken worker is given to run a trivial job before "not run" is believed (a held job must not run).
GRACE = 0.2


def test_a_held_job_waits_for_the_release_then_runs_in_its_order() -> None:
    worker = start_worker("memdesk-test-hold_0")
    ran: list[str] = []
    worker.submit(ran.append, "before").result(timeout=10)  # the thread exists and is idle
    hold = Hold()
    with hold.holding():
        first = worker.submit(ran.append, "held 1")
        second = worker.submit(ran.append, "held 2")
    time.sleep(GRACE)
    assert ran == ["before"] and not first.done() and not second.done()
    hold.release()
    second.result(timeout=10)
    assert ran == ["before", "held 1", "held 2"]
    hold.release()  # a second release does nothing
    worker.shutdown()


def test_waiting_on_a_held_job_inside_the_hold_does_not_hang() -> None:
    # A rotation asks for its version's job and waits on it before replacing the file, all under the hold.
    worker = start_worker("memdesk-test-hold_1")
    worker.submit(lambda: None).result(timeout=10)
    with hold_here():
        event = worker.submit(lambda: "event")
        version = worker.submit(lambda: "version")
        assert version.result(timeout=10) == "version"  # wakes the worker: the event before it ran too
        assert event.done() and event.result() == "event"
        assert event.exception(timeout=10) is None
    worker.shutdown()


def test_another_thread_waiting_or_asking_runs_the_held_jobs_first() -> None:
    worker = start_worker("memdesk-test-hold_2")
    worker.submit(lambda: None).result(timeout=10)
    ran: list[str] = []
    hold = Hold()
    with hold.holding():
        held = worker.submit(ran.append, "held")
    # Another thread waits on the held job (history's reads call settled(), which waits on a job of its own).
    seen: list[object] = []
    t = threading.Thread(target=lambda: seen.append(held.exception(timeout=10)))
    t.start()
    t.join(15)
    assert seen == [None] and ran == ["held"]

    with hold.holding():  # released: a job asked now wakes the worker as usual
        pass
    hold2 = Hold()
    with hold2.holding():
        late = worker.submit(ran.append, "held 2")
    other = threading.Thread(target=lambda: worker.submit(ran.append, "unheld").result(timeout=10))
    other.start()
    other.join(15)
    assert late.done() and ran == ["held", "held 2", "unheld"]  # in the order asked
    hold2.release()
    worker.shutdown()


def test_a_hold_released_before_the_job_is_asked_holds_nothing() -> None:
    # The request's task may end (the client gone) before the appends' thread asks for its job.
    worker = start_worker("memdesk-test-hold_3")
    worker.submit(lambda: None).result(timeout=10)
    hold = Hold()
    hold.release()
    with hold.holding():
        job = worker.submit(lambda: "ran")
    deadline = time.monotonic() + 10
    while not job.done() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert job.done() and job.result() == "ran"  # nobody waited on it: the worker was woken at once
    worker.shutdown()


def test_holds_do_not_nest_and_an_error_still_releases() -> None:
    worker = start_worker("memdesk-test-hold_4")
    worker.submit(lambda: None).result(timeout=10)
    outer = Hold()
    with outer.holding():
        with hold_here() as inner:  # Project.append's own hold inside the server's: the server's is kept
            assert inner is outer
            job = worker.submit(lambda: "held by the outer hold")
        time.sleep(GRACE)
        assert not job.done()
    outer.release()
    assert job.result(timeout=10) == "held by the outer hold"

    with pytest.raises(ValueError):
        with hold_here():
            failed_after = worker.submit(lambda: "asked before the error")
            raise ValueError("the append failed after asking for its event")
    deadline = time.monotonic() + 10
    while not failed_after.done() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert failed_after.done()  # released by the error: not left waiting for the next job
    worker.shutdown()


@pytest.mark.parametrize("ending", ["return", "finish"])
def test_a_process_exits_with_its_held_jobs_done(tmp_path, ending: str) -> None:
    # A hold never released (a crash in the caller): the interpreter's exit (or the CLI's finish) still runs the job.
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[4]
    marker = tmp_path / "written"
    code = ("from pathlib import Path; from core.storage.history import worker\n"
            "worker.submit(lambda: None).result()\n"
            "h = worker.Hold()\n"
            f"with h.holding(): worker.submit(lambda: Path({str(marker)!r}).write_text('yes'))\n"
            + ("from core.cli.finish import finish; finish(0)\n" if ending == "finish" else ""))
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(repo)},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert marker.read_text() == "yes"


def test_a_job_started_now_runs_under_the_hold_with_the_held_jobs_before_it() -> None:
    # A rotation's version: asked early so its commit overlaps the new file's write and sync.
    worker = start_worker("memdesk-test-hold_5")
    worker.submit(lambda: None).result(timeout=10)
    ran: list[str] = []
    hold = Hold()
    with hold.holding():
        worker.submit(ran.append, "event")
        version = worker.submit(ran.append, "version").start_now()
        deadline = time.monotonic() + 10
        while not version.done() and time.monotonic() < deadline:  # nobody waits on it, and it runs
            time.sleep(0.01)
        assert version.done() and ran == ["event", "version"]
    hold.release()
    worker.shutdown()
