"""History's worker thread without concurrent.futures (core.storage.history.jobs): order, results, errors,
callbacks, and a process that ends only once its history writes are done (issue 19 item 7)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from core.storage.history.jobs import Job, start_worker

REPO = Path(__file__).resolve().parents[4]


def test_jobs_run_in_order_on_one_named_thread_with_results_and_errors() -> None:
    worker = start_worker("memdesk-test_0")
    seen: list[tuple[int, str]] = []
    jobs = [worker.submit(lambda i=i: seen.append((i, threading.current_thread().name)) or i * i) for i in range(50)]
    assert [j.result(timeout=10) for j in jobs] == [i * i for i in range(50)]
    assert seen == [(i, "memdesk-test_0") for i in range(50)]
    failing = worker.submit(int, "not a number")
    with pytest.raises(ValueError, match="invalid literal"):
        failing.result(timeout=10)
    assert isinstance(failing.exception(), ValueError) and failing.done()
    assert worker.submit(lambda: None).exception(timeout=10) is None
    worker.shutdown()
    with pytest.raises(RuntimeError, match="shut down"):
        worker.submit(lambda: None)


def test_callbacks_run_once_done_and_a_failing_callback_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    worker = start_worker("memdesk-test_1")
    gate = threading.Event()
    job: Job[str] = worker.submit(lambda: gate.wait(10) and "done")
    called: list[str] = []
    job.add_done_callback(lambda j: called.append(j.result()))
    job.add_done_callback(lambda j: 1 / 0)
    assert called == [] and not job.done()
    gate.set()
    assert job.result(timeout=10) == "done"
    worker.shutdown()
    job.add_done_callback(lambda j: called.append("late"))  # already done: called at once
    assert called == ["done", "late"]
    assert "a callback of a history job failed" in caplog.text and "ZeroDivisionError" in caplog.text


def test_result_waits_at_most_the_timeout() -> None:
    worker = start_worker("memdesk-test_2")
    gate = threading.Event()
    job = worker.submit(gate.wait, 10)
    t0 = time.monotonic()
    with pytest.raises(TimeoutError):
        job.result(timeout=0.05)
    gate.set()
    assert job.result(timeout=10) is True and time.monotonic() - t0 < 10
    worker.shutdown()


@pytest.mark.parametrize("ending", ["return", "finish"])
def test_a_process_ends_only_after_its_history_jobs_are_done(tmp_path: Path, ending: str) -> None:
    # A slow last job: the process must neither hang (the worker waits for jobs) nor end before it wrote.
    marker = tmp_path / "written"
    end = "from core.cli.finish import finish; finish(0)" if ending == "finish" else "pass"
    code = ("import time; from pathlib import Path; from core.storage.history import worker\n"
            f"def slow(): time.sleep(0.3); Path({str(marker)!r}).write_text('yes')\n"
            f"worker.submit(lambda: None).result(); worker.submit(slow)\n{end}\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert marker.read_text() == "yes" and done.stderr == ""
