"""One worker thread that runs jobs in the order given, each with a future: history's writes (issue 19 item 7).

What ``ThreadPoolExecutor(max_workers=1)`` gave history's worker, without :mod:`concurrent.futures`, which a
``memdesk append`` process paid for at start (~2 ms with the ``logging``, ``queue`` and ``heapq`` it imports)
to run one job. :class:`Job` has the part of :class:`concurrent.futures.Future` history's callers use:
:meth:`~Job.result`, :meth:`~Job.exception`, :meth:`~Job.done`, :meth:`~Job.add_done_callback`.

As the executor's threads, the worker is not a daemon: the interpreter's shutdown (and ``core.cli.finish``)
lets it finish every job asked before it ends. It ends when told to (:meth:`Worker.shutdown`, registered with
``threading``'s exit hooks as the executor registers its own) once its queue is empty.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from core.logs import get_logger

log = get_logger(__name__)

T = TypeVar("T")


class Job(Generic[T]):
    """The outcome of one job: its result or its exception, once the worker has run it."""

    __slots__ = ("_done", "_result", "_error", "_callbacks", "_lock")

    def __init__(self) -> None:
        self._done = threading.Event()
        self._result: Any = None
        self._error: BaseException | None = None
        self._callbacks: list[Callable[[Job[T]], object]] = []
        self._lock = threading.Lock()

    def done(self) -> bool:
        return self._done.is_set()

    def result(self, timeout: float | None = None) -> T:
        """The job's return value (waiting for it); raises what the job raised, ``TimeoutError`` after ``timeout``."""
        if not self._done.wait(timeout):
            raise TimeoutError("history's worker did not finish the job in time")
        if self._error is not None:
            raise self._error
        return self._result  # type: ignore[no-any-return]

    def exception(self, timeout: float | None = None) -> BaseException | None:
        """What the job raised (``None`` when it returned), waiting for it."""
        if not self._done.wait(timeout):
            raise TimeoutError("history's worker did not finish the job in time")
        return self._error

    def add_done_callback(self, fn: Callable[[Job[T]], object]) -> None:
        """Call ``fn(job)`` once the job is done (now, when it already is)."""
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(fn)
                return
        _call(fn, self)

    def _finish(self, result: Any, error: BaseException | None) -> None:
        with self._lock:
            self._result, self._error = result, error
            self._done.set()
            callbacks, self._callbacks = self._callbacks, []
        for fn in callbacks:
            _call(fn, self)


def _call(fn: Callable[[Any], object], job: Job[Any]) -> None:
    try:
        fn(job)
    except Exception:  # as concurrent.futures: a failing callback is logged, the others still run
        log.exception("a callback of a history job failed")


class Worker:
    """One non-daemon thread named ``name`` that runs :meth:`submit`\\ ted jobs in order."""

    def __init__(self, name: str, *, daemon: bool = False) -> None:
        self.name, self.daemon = name, daemon
        self._jobs: deque[tuple[Job[Any], Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = deque()
        self._ready = threading.Condition(threading.Lock())
        self._stopping = False
        self._thread: threading.Thread | None = None

    def submit(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> Job[T]:
        """Run ``fn(*args, **kwargs)`` on the thread after every job asked before it."""
        job: Job[T] = Job()
        with self._ready:
            if self._stopping:
                raise RuntimeError("cannot schedule a history write after the interpreter began to shut down")
            self._jobs.append((job, fn, args, kwargs))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=self.daemon)
                self._thread.start()
            self._ready.notify()
        return job

    def shutdown(self) -> None:
        """Let the thread end once it has run every job asked so far (and wait for it)."""
        with self._ready:
            self._stopping = True
            thread = self._thread
            self._ready.notify()
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _run(self) -> None:
        while True:
            with self._ready:
                while not self._jobs and not self._stopping:
                    self._ready.wait()
                if not self._jobs:
                    return
                job, fn, args, kwargs = self._jobs.popleft()
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 (kept for the waiter, as a Future keeps it)
                job._finish(None, exc)
            else:
                job._finish(result, None)
            del job, fn, args, kwargs

    def _forget_after_fork(self) -> None:
        """In a forked child the thread does not exist: start afresh (jobs queued in the parent stay there)."""
        self._jobs = deque()
        self._ready = threading.Condition(threading.Lock())
        self._stopping = False
        self._thread = None


def start_worker(name: str) -> Worker:
    """A :class:`Worker` that the interpreter's shutdown lets finish its jobs, then ends (as the executor's)."""
    register = getattr(threading, "_register_atexit", None)  # what concurrent.futures uses (Python >= 3.9)
    worker = Worker(name, daemon=register is None)  # without the hook, a waiting thread must not hold up the exit
    if register is not None:
        register(worker.shutdown)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=worker._forget_after_fork)
    return worker
