"""Every memory document of a project, watched while memdesk is open or serving (issue 21, must-have 3).

:mod:`core.storage.noticed` records a change memdesk did not make when it holds the text from before. The app's
editor holds one document and a server holds what it last served; a program that rewrites several
documents at once (Fusion's dream run: the daily note reset to its processed marker, ``DREAMS.md`` and
``MEMORY.md`` grown) touches documents nobody had open. :class:`NoticeWatch` holds the last text it saw
of every memory document of the project and, on each scan, compares what is on disk:

* a document that changed since: the text it held is the version before, recorded through
  :func:`core.storage.noticed.record_noticed` (memdesk's own writes are recognised there and not recorded twice);
* an append-shaped change (the new text starts with the old) waits :data:`APPEND_DELAY_S` first, since
  memdesk records its own appends just after writing them; alone it is an append event (an agent's
  ``>>``). When a rewrite is seen while appends wait, or within the same scan, they belong to one run
  (Fusion appends to ``DREAMS.md`` and ``MEMORY.md`` as it resets the note) and each document's text
  before is kept as a version, so History holds every document the run touched and the consolidation
  review groups them as one event (:mod:`core.consolidation.programs`);
* a document that vanished: the text it held is kept as a version.

A scan looks only at files whose size, modification time or inode changed (one ``lstat`` each), reads
them confined to the project (:func:`core.storage.fileio.read_in_root`: no link out, regular files only, size
capped) and never writes a memory document. A backend with its own history (``postgres``) records the
outside edits of its mirror itself, so nothing is watched for it. :meth:`start` runs scans on a daemon
thread every ``interval_s`` seconds; :meth:`poke` asks for one now (the app's folder watcher does).
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.storage import fileio
from core.storage.noticed import record_noticed, take_written

if TYPE_CHECKING:
    from core.project.model import Project

__all__ = ["APPEND_DELAY_S", "NoticeWatch", "Noticed"]

log = logging.getLogger(__name__)

#: How long an append-shaped change waits before it is recorded (memdesk's own appends are recorded by then).
APPEND_DELAY_S = 1.5
#: At most this much text is held in memory (beyond it, later documents are not watched).
MAX_HELD_BYTES = 64 * 1024 * 1024
#: The documents are listed again at least this often (else only when one of their folders changed).
RELIST_S = 30.0
SCAN_SHARE = 20  # the watch waits at least this many times as long as its last scan took
_clock = time.monotonic  # the loop's clock (a test gives it a fake one)


@dataclass(frozen=True)
class Noticed:
    """What one scan recorded: the documents whose text before was kept, and how."""

    rewritten: tuple[str, ...] = ()  # versions kept (rewrites, removals, appends of a run)
    appended: tuple[str, ...] = ()  # append events (an agent's >>)

    def __bool__(self) -> bool:
        return bool(self.rewritten or self.appended)

    def describe(self) -> str:
        """``3 documents rewritten by another program; their versions before are in History``."""
        parts = []
        if self.rewritten:
            n = len(self.rewritten)
            parts.append(f"{n} document{'s' if n != 1 else ''} rewritten by another program; "
                         f"{'their versions' if n != 1 else 'the version'} before "
                         f"{'are' if n != 1 else 'is'} in History")
        if self.appended:
            n = len(self.appended)
            parts.append(f"{n} document{'s' if n != 1 else ''} appended to by another program")
        return "; ".join(parts)


@dataclass
class _Held:
    key: tuple[int, int, int]
    text: str


@dataclass
class _Pending:
    before: str
    after: str
    due: float


class NoticeWatch:
    """The last seen text of every memory document of one project; records what others change."""

    def __init__(self, project: Project | Callable[[], Project], *, interval_s: float = 1.0,
                 append_delay_s: float = APPEND_DELAY_S, on_noticed: Callable[[Noticed], None] | None = None,
                 max_held_bytes: int = MAX_HELD_BYTES) -> None:
        self._project = project if callable(project) else (lambda: project)
        self.interval_s = interval_s
        self.append_delay_s = append_delay_s
        self.on_noticed = on_noticed
        self.max_held_bytes = max_held_bytes
        self._held: dict[str, _Held] = {}
        self._held_chars = 0  # the texts held, in all (kept as they change: summing them per document was O(n²))
        self._pending: dict[str, _Pending] = {}
        self._folders: list[str] = []
        self._listing: tuple[tuple[int, ...], list[str]] | None = None
        self._listed_at = 0.0
        self._lock = threading.Lock()  # one scan at a time (the thread and a direct call)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- the thread ------------------------------------------------------------------------------
    def start(self, *, first_look: bool = False) -> NoticeWatch:
        """Scan every ``interval_s`` on a daemon thread until :meth:`stop`; ``first_look``: hold every
        document's text before returning (a server does, so a change right after it starts is kept)."""
        if first_look:
            self.scan()
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="memdesk-noticed-watch", daemon=True)
            self._thread.start()
        return self

    def poke(self) -> None:
        """Scan soon (something under the project changed)."""
        self._wake.set()

    def stop(self) -> None:
        """Stop scanning (waits for the scan under way)."""
        self._stop.set()
        self._wake.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=10)

    def _loop(self) -> None:
        while not self._stop.is_set():
            began = _clock()
            try:
                self.scan()
            except Exception as exc:  # a safety net: never let the watch die silently
                log.warning("watching the memory for outside changes failed: %s", exc)
            # A scan's share of a CPU is held to 1/SCAN_SHARE: on 20,000 agents' notes a scan (an lstat each) takes
            # ~0.25 s, and one a second kept an idle server at ~19 % of a CPU. A poke still scans at once.
            self._wake.wait(max(self.interval_s, (_clock() - began) * SCAN_SHARE))
            self._wake.clear()

    # -- one scan --------------------------------------------------------------------------------
    def scan(self, now: float | None = None) -> Noticed:
        """Compare every memory document with the text held; record what changed. Returns what was recorded."""
        with self._lock:
            return self._scan(time.monotonic() if now is None else now)

    def _scan(self, now: float) -> Noticed:
        project = self._project()
        if project.backend_history:
            self._held.clear()
            self._held_chars = 0
            self._pending.clear()
            return Noticed()
        root = project.root
        paths = self._documents(project, now)
        if paths is None:
            return Noticed()
        rewritten: list[str] = []
        appended: list[str] = []
        seen = set(paths)
        for rel in paths:
            key = _key(root, rel)
            held = self._held.get(rel)
            if key is None:  # not a regular file (a link, a FIFO) or gone between listing and stat
                seen.discard(rel)
                continue
            if held is not None and held.key == key:
                continue
            text = self._read(project, rel)
            if text is None:
                seen.discard(rel)
                continue
            if held is None:
                if self._room_for(text):
                    self._held[rel] = _Held(key, text)
                    self._held_chars += len(text)
                continue
            before, held.key, held.text = held.text, key, text
            self._held_chars += len(text) - len(before)
            if text == before:
                continue
            if text == take_written(root, rel):
                # memdesk wrote this text itself (appends, then a rotation or a save, between two scans): the
                # pipeline recorded each of its writes. An agent's append still waiting is recorded as before.
                continue
            pending = self._pending.get(rel)
            if pending is not None:  # the text before the first change still waiting is the one to keep
                before = pending.before
            if text.startswith(before):
                self._pending[rel] = _Pending(before, text, pending.due if pending else now + self.append_delay_s)
                continue
            self._pending.pop(rel, None)
            if self._record(project, rel, before, text, as_version=True):
                rewritten.append(rel)
        for rel in [r for r in self._held if r not in seen]:  # removed (or no longer a plain file)
            held = self._held.pop(rel)
            self._held_chars -= len(held.text)
            pending = self._pending.pop(rel, None)
            # Gone, a link or FIFO now, or unreadable (grown past the cap, not UTF-8): the text held is kept.
            if self._record(project, rel, pending.before if pending else held.text, None, as_version=True):
                rewritten.append(rel)
        run = bool(rewritten)
        for rel, pending in list(self._pending.items()):
            if not run and pending.due > now:
                continue
            del self._pending[rel]
            if self._record(project, rel, pending.before, pending.after, as_version=run):
                (rewritten if run else appended).append(rel)
        noticed = Noticed(tuple(rewritten), tuple(appended))
        if noticed and self.on_noticed is not None:
            try:
                self.on_noticed(noticed)
            except Exception as exc:
                log.warning("reporting an outside change failed: %s", exc)
        return noticed

    def _documents(self, project: Project, now: float) -> list[str] | None:
        """The project's documents, listed again only when one of their folders changed (a file added,
        removed or renamed changes its folder's time) or every :data:`RELIST_S` seconds."""
        key = _folders_key(project.root, self._folders)
        if self._listing is not None and key == self._listing[0] and now - self._listed_at < RELIST_S:
            return self._listing[1]
        try:
            paths = [d.path for d in project.documents()]
        except Exception as exc:
            log.warning("cannot list the documents of %s: %s", project.root, exc)
            return None
        self._folders = sorted({"", ".fusion", ".fusion/agent-memory",
                                *(os.path.dirname(p) for p in paths)})
        self._listing = (_folders_key(project.root, self._folders), paths)
        self._listed_at = now
        return paths

    def _read(self, project: Project, rel: str) -> str | None:
        try:
            return fileio.read_in_root(project.root, rel, project.backend.id, max_size=fileio.MAX_READ_SIZE)
        except Exception as exc:  # a link out, too large, not UTF-8: not held, never followed
            log.info("not watching %s: %s", rel, exc)
            return None

    def _room_for(self, text: str) -> bool:
        return self._held_chars + len(text) <= self.max_held_bytes

    @staticmethod
    def _record(project: Project, rel: str, before: str, after: str | None, *, as_version: bool) -> bool:
        try:
            pending = record_noticed(project, rel, before, after, as_version=as_version)
            if pending is None:
                return False
            return pending.result(timeout=30) is not None
        except Exception as exc:  # recording is a safety net; the watch goes on
            log.warning("an outside change of %s was not recorded: %s", rel, exc)
            return False

    def held(self, rel: str) -> str | None:
        """The text last seen of ``rel`` (for tests and the app)."""
        with self._lock:
            h = self._held.get(rel)
            return h.text if h is not None else None


def _folders_key(root: os.PathLike[str] | str, folders: list[str]) -> tuple[int, ...]:
    out = []
    for folder in folders:
        try:
            out.append(os.lstat(os.path.join(root, folder)).st_mtime_ns)
        except OSError:
            out.append(-1)
    return tuple(out)


def _key(root: os.PathLike[str] | str, rel: str) -> tuple[int, int, int] | None:
    try:
        st = os.lstat(os.path.join(root, rel))
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)
