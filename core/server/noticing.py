"""What a server notices between two reads of a document, recorded without slowing the reads down.

A served document that changed since it was last served changed without memdesk or through it (memdesk's
own writes are recognised by :func:`core.storage.noticed.record_noticed` and not recorded twice). Each such
change used to be one job on history's thread right away, so an agent appending before every read cost
each read a history transaction running beside it. Here:

* a **rewrite** (the new text does not start with the one served before) is recorded at once, as
  before: the text a client was served is kept as a version, whatever comes next;
* **appends** wait :data:`APPEND_LINGER_S` and a run of them on one document is one record: from the text
  before the first to the text after the last. Nothing a client read is lost by joining them: a text
  read in between is the first bytes of the one after (``core.storage.readlog.version_read`` opens it so).
  A rewrite that follows waiting appends records them first, so the order holds.

One daemon thread waits out the linger, woken by the first append of a spell (not by each).
:func:`flush` records what waits now (tests, shutdown).
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

from core.storage.noticed import record_noticed

if TYPE_CHECKING:
    from core.project.model import Project
    from core.server.memo import TextFacts

__all__ = ["APPEND_LINGER_S", "flush", "notice"]

log = logging.getLogger(__name__)

#: How long appends wait to be joined with the ones after them (seconds).
APPEND_LINGER_S = 1.0


#: A text as a read handed it over: the text, or the facts of a read answered from bytes, whose text is joined
#: only when the change is recorded (on this module's thread, not the read's).
Text = Union[str, "TextFacts"]


def _text(text: Text) -> str:
    return text if isinstance(text, str) else text.text


def _same(a: Text, b: Text) -> bool:
    """Whether ``a`` and ``b`` are one text, found without joining a text (this runs on the read's thread, the event
    loop's too). A run of appends goes on across reads from bytes (facts) and from text (strings): the text a
    read hands over as before is the very object the facts of the read before hold, once joined. When it cannot
    be told cheaply the run is recorded and a new one starts (nothing is lost; the run is split in two)."""
    if a is b:
        return True
    ta = a if isinstance(a, str) else a.joined_text
    tb = b if isinstance(b, str) else b.joined_text
    if ta is not None and tb is not None:
        return ta is tb or ta == tb
    if not isinstance(a, str) and not isinstance(b, str):
        return a.hash == b.hash  # facts hash their text as they are made
    return False


@dataclass
class _Run:
    project: Project
    before: Text
    after: Text


class _Noticer:
    def __init__(self) -> None:
        self.lock = threading.Lock()  # held while a record is handed to history's thread, so they keep their order
        self.runs: dict[tuple[str, str], _Run] = {}
        self.wake = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="memdesk-noticing", daemon=True)
        self.thread.start()

    def notice(self, project: Project, rel: str, before: Text, after: Text, grown: bool | None = None) -> None:
        key = (str(project.root), rel)
        if grown is None:
            grown = _text(after).startswith(_text(before))
        with self.lock:
            run = self.runs.pop(key, None)
            if grown and run is not None and _same(run.after, before):
                run.after = after  # one more append of the same run
                self.runs[key] = run
                return
            if run is not None:  # not its continuation: what waits goes first
                _record(run.project, rel, run.before, run.after)
            if not grown:
                _record(project, rel, before, after)
                return
            self.runs[key] = _Run(project, before, after)
            first = len(self.runs) == 1
        if first:  # only the first append of a spell wakes the thread
            self.wake.set()

    def _loop(self) -> None:
        while True:
            self.wake.wait()
            self.wake.clear()
            time.sleep(APPEND_LINGER_S)
            self.flush()

    def flush(self) -> None:
        with self.lock:
            runs, self.runs = self.runs, {}
            for (_root, rel), run in runs.items():
                _record(run.project, rel, run.before, run.after)


def _record(project: Project, rel: str, before: Text, after: Text) -> None:
    try:
        record_noticed(project, rel, _text(before), _text(after))
    except Exception as exc:  # a safety net: the read was served either way
        log.warning("an outside change of %s was not recorded: %s", rel, exc)


_noticer: _Noticer | None = None
_noticer_lock = threading.Lock()


def notice(project: Project, rel: str, before: Text, after: Text, *, grown: bool | None = None) -> None:
    """``rel`` was served as ``before`` and is now ``after``: record the change (appends joined, soon). ``grown``:
    whether ``after`` is known to be ``before`` with more after it (``None``: compared here)."""
    global _noticer
    if _noticer is None:
        with _noticer_lock:
            if _noticer is None:
                _noticer = _Noticer()
                _at_exit(flush)
    _noticer.notice(project, rel, before, after, grown)


def _at_exit(fn: Callable[[], None]) -> None:
    """Run ``fn`` as the interpreter exits, before history's thread stops taking work (its executor's exit
    hook, registered when :mod:`core.storage.history.worker` was imported, runs after the hooks registered later)."""
    from core.storage.history import worker as history_worker  # noqa: F401 - imported first: its executor's hook is registered before ours

    register = getattr(threading, "_register_atexit", None)  # what concurrent.futures itself uses
    try:
        (register or atexit.register)(fn)
    except RuntimeError:  # already shutting down
        pass


def flush() -> None:
    """Hand what waits to history's thread now (:func:`core.storage.history.worker.settled` then waits for it)."""
    if _noticer is not None:
        _noticer.flush()
