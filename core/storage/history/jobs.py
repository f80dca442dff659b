"""One worker thread that runs jobs in the order given, each with a future: history's writes (issue 19 item 7).

What ``ThreadPoolExecutor(max_workers=1)`` gave history's worker, without :mod:`concurrent.futures`, which a
``memdesk append`` process paid for at start (~2 ms with the ``logging``, ``queue`` and ``heapq`` it imports)
to run one job. :class:`Job` has the part of :class:`concurrent.futures.Future` history's callers use:
:meth:`~Job.result`, :meth:`~Job.exception`, :meth:`~Job.done`, :meth:`~Job.add_done_callback`.

As the executor's threads, the worker is not a daemon: the interpreter's shutdown (and ``core.cli.finish``)
lets it finish every job asked before it ends. It ends when told to (:meth:`Worker.shutdown`, registered with
``threading``'s exit hooks as the executor registers its own) once its queue is empty.

A :class:`Hold` delays the worker's wake-up, never a job: jobs asked while it is held go into the queue in
their order at once, but the worker is only woken when the hold is released (a served append: once its answer
is sent, so history's thread does not take the GIL and a CPU from the request it records). Whoever waits on a
job (:meth:`Job.result`, :meth:`Job.exception`) wakes the worker first, so a wait on a held job (a rotation
waits for its own version, asked under the same hold) never hangs; a job asked without a hold, or by another
thread, wakes the worker too, which then runs the held jobs before it in their order.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

from core.logs import get_logger

log = get_logger(__name__)

T = TypeVar("T")


class Job(Generic[T]):
    """The outcome of one job: its result or its exception, once the worker has run it."""

    __slots__ = ("_done", "_result", "_error", "_callbacks", "_lock", "_wake")

    def __init__(self, wake: Callable[[], object] | None = None) -> None:
        self._wake = wake  # the worker's wake-up: a wait on this job first makes sure the worker runs
        self._done = threading.Event()
        self._result: Any = None
        self._error: BaseException | None = None
        self._callbacks: list[Callable[[Job[T]], object]] = []
        self._lock = threading.Lock()

    def done(self) -> bool:
        return self._done.is_set()

    def start_now(self) -> Job[T]:
        """Wake the worker for this job now, even under a :class:`Hold` (and so for the held jobs before it): for a
        job its caller waits on soon, whose work should overlap what the caller does meanwhile."""
        if self._wake is not None and not self._done.is_set():
            self._wake()
        return self

    def result(self, timeout: float | None = None) -> T:
        """The job's return value (waiting for it); raises what the job raised, ``TimeoutError`` after ``timeout``."""
        if not self._done.is_set() and self._wake is not None:
            self._wake()  # the job may be held (Hold): never wait for a worker nobody woke
        if not self._done.wait(timeout):
            raise TimeoutError("history's worker did not finish the job in time")
        if self._error is not None:
            raise self._error
        return self._result  # type: ignore[no-any-return]

    def exception(self, timeout: float | None = None) -> BaseException | None:
        """What the job raised (``None`` when it returned), waiting for it."""
        if not self._done.is_set() and self._wake is not None:
            self._wake()
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


class Hold:
    """Jobs asked on a thread inside :meth:`holding` are queued without waking the worker until :meth:`release`.

    Made where the work starts (a request on the event loop), held on the thread that asks for the jobs (the
    append's), released from any thread, once (later calls do nothing). Released before a job is asked, the
    job wakes the worker as usual. Holds do not nest: inside one, :func:`hold_here` and a second
    :meth:`holding` keep the outer one (its release wakes the worker for all)."""

    __slots__ = ("_lock", "_released", "_workers")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._released = False
        self._workers: list[Worker] = []

    @contextmanager
    def holding(self) -> Iterator[Hold]:
        """While inside, jobs this thread asks are held by this hold (or by one already held on the thread)."""
        outer = getattr(_here, "hold", None)
        if outer is not None:
            yield outer
            return
        _here.hold = self
        try:
            yield self
        finally:
            _here.hold = None

    def release(self) -> None:
        """Wake every worker that has jobs held by this hold (once; any thread)."""
        with self._lock:
            if self._released:
                return
            self._released = True
            workers, self._workers = self._workers, []
        for worker in workers:
            worker.wake()

    def _defer(self, worker: Worker) -> bool:
        """Whether ``worker``'s wake-up for a job just queued waits for :meth:`release` (called under its lock)."""
        with self._lock:
            if self._released:
                return False
            if worker not in self._workers:
                self._workers.append(worker)
            return True


#: The hold of the thread asking for jobs, if any (:meth:`Hold.holding`).
_here = threading.local()


@contextmanager
def hold_here() -> Iterator[Hold]:
    """Hold the wake-ups of the jobs this thread asks inside, released when the block ends (also on an error);
    inside a hold already held on this thread, that one is kept (its owner releases it, later)."""
    outer = getattr(_here, "hold", None)
    if outer is not None:
        yield outer
        return
    hold = Hold()
    try:
        with hold.holding():
            yield hold
    finally:
        hold.release()


class Worker:
    """One non-daemon thread named ``name`` that runs :meth:`submit`\\ ted jobs in order."""

    def __init__(self, name: str, *, daemon: bool = False) -> None:
        self.name, self.daemon = name, daemon
        self._jobs: deque[tuple[Job[Any], Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = deque()
        self._ready = threading.Condition(threading.Lock())
        self._stopping = False
        self._thread: threading.Thread | None = None

    def submit(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> Job[T]:
        """Run ``fn(*args, **kwargs)`` on the thread after every job asked before it (woken now, or when
        the thread's :class:`Hold` is released)."""
        job: Job[T] = Job(self.wake)
        hold: Hold | None = getattr(_here, "hold", None)
        with self._ready:
            if self._stopping:
                raise RuntimeError("cannot schedule a history write after the interpreter began to shut down")
            self._jobs.append((job, fn, args, kwargs))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=self.daemon)
                self._thread.start()
            if hold is None or not hold._defer(self):
                self._ready.notify()
        return job

    def wake(self) -> None:
        """Let the thread run what is queued (a held job's wake-up, or a wait on one)."""
        with self._ready:
            self._ready.notify()

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
