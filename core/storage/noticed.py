"""Changes memdesk notices but did not make (issue 19, item 1): recorded so the version before is kept.

An agent's ``>>``, an editor's save or another program replacing a daily note change a memory file
without memdesk. Whenever memdesk holds the text from before such a change (the app's open document,
a server's served text), it records it here:

* a replacement (the new text does not start with the old): the old text becomes a version of the
  document with source ``external-change`` and author ``program`` (or ``program:<name>``), unless history
  already keeps that content (memdesk's own save kept it, with its own source);
* an append (the new text starts with the old): an append event with source ``external-append`` and
  the appended text, unless the newest recorded append of the document is that text (memdesk wrote it).

Changes made while no memdesk was running are found on the next open: after each of its writes the
pipeline keeps the text it wrote as the document's *seen* text (:func:`note_written`, a content object of
history, on history's thread); the first read of a document in a process compares the file with it
(:func:`check_seen`) and records the difference as above.

Both carry the time they were noticed, so the consolidation review can group one program's run
(``core.consolidation.programs``). Recording happens on history's worker thread: the caller (the GUI
thread) never waits for the disk. A backend that keeps its own history (``postgres``) records the
outside edits of its mirror itself (``mirror-import``), so nothing is recorded here for it.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from core.logs import get_logger
from core.storage.history.jobs import Job

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Protocol

    from core.documents.layout import Layout
    from core.storage.writers import Writer

    class Project(Protocol):
        """What this module asks of a project (:class:`core.project.model.Project`, above storage)."""

        @property
        def root(self) -> Path: ...

        @property
        def layout(self) -> Layout: ...

        @property
        def backend_history(self) -> bool: ...

log = get_logger(__name__)

EXTERNAL_CHANGE = "external-change"
EXTERNAL_APPEND = "external-append"
PROGRAM = "program"  # the writer kind (core.storage.writers.Writer) of a change memdesk did not make


def record_noticed(project: Project, relpath: str, before: str | None, after: str | None, *,
                   writer: Writer | None = None, as_version: bool = False) -> Job[Any] | None:
    """Record a change of ``relpath`` from ``before`` to ``after`` that memdesk did not make; the pending record.

    ``as_version``: keep ``before`` as a version even when the change only appended (one run of a program
    that also rewrote other documents: :mod:`core.project.noticed_watch`).

    Returns ``None`` when there is nothing to keep (no change, nothing before, not a memory document,
    a backend with its own history).
    """
    from core.storage.history import worker as history_worker

    if before is None or before == after or not before or project.backend_history:
        return None
    if not _is_document(project, relpath):
        return None
    label = writer.label if writer is not None else PROGRAM
    root = project.root
    if after is not None and after.startswith(before) and not as_version:
        added = after[len(before):]
        return history_worker.submit(_record_append, root, relpath, added, label)
    return history_worker.submit(_record_version, root, relpath, before, label)


def _is_document(project: Project, relpath: str) -> bool:
    return isinstance(relpath, str) and "\x00" not in relpath and project.layout.is_document(relpath)


def _record_version(root: Any, relpath: str, before: str, author: str) -> int | None:
    from core.storage.history import versions as history
    from core.storage.history.store import sha256_hex

    data = before.encode("utf-8")
    digest = sha256_hex(data)
    if _has_version(root, relpath, digest):
        return None  # memdesk's own write kept it already, under its own source
    return history.record_version(root, relpath, data, EXTERNAL_CHANGE, author=author, digest=digest)


def _has_version(root: Any, relpath: str, digest: str) -> bool:
    from core.storage.history.worker import using

    with using(root, create=False) as conn:
        if conn is None:
            return False
        return conn.execute("SELECT 1 FROM versions WHERE path = ? AND hash = ?", (relpath, digest)).fetchone() \
            is not None


def _record_append(root: Any, relpath: str, added: str, author: str) -> int | None:
    import zlib
    from datetime import UTC, datetime

    from core.storage.history.worker import using

    data = added.encode("utf-8")
    with using(root, create=True, write=True) as conn:
        assert conn is not None
        newest = conn.execute("SELECT data FROM events WHERE path = ? ORDER BY id DESC LIMIT 8", (relpath,)).fetchall()
        for (blob,) in newest:
            try:
                own = zlib.decompressobj().decompress(blob, len(data) + 1).strip()
            except zlib.error:
                continue
            if own and own in data:
                return None  # memdesk appended this itself (its entry, with its date marker) and recorded who
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        cur = conn.execute("INSERT INTO events(path, created_at, source, author, size, data) VALUES (?,?,?,?,?,?)",
                           (relpath, stamp, EXTERNAL_APPEND, author, len(data), zlib.compress(data, 6)))
        return int(cur.lastrowid or 0)


_pending: dict[tuple[str, str], str] = {}
_pending_lock = threading.Lock()
#: The text this process last wrote to each document (a reference to the string the write already holds).
_written: dict[tuple[str, str], str] = {}


def remember_written(root: Path, relpath: str, text: str) -> None:
    """Stage "record", in memory: ``text`` is what this process's pipeline just wrote to ``relpath``."""
    _written[(str(root), relpath)] = text


def take_written(root: Path, relpath: str) -> str | None:
    """The text this process's pipeline last wrote to ``relpath``, if any, forgotten as it is taken: what a watch
    that saw the document change must not take for another program's change (memdesk's appends, then a
    rotation or a save, between two of its scans). Taken once, so a program that later writes that same
    text back over its own change still has its change kept."""
    return _written.pop((str(root), relpath), None)


def note_written(project: Project, relpath: str, text: str) -> Job[Any] | None:
    """After a write of memdesk: keep ``text`` as what ``relpath`` holds (for :func:`check_seen` on a later open).

    Coalesced: while a note of the same document waits for history's thread, a newer text replaces it,
    so a burst of appends costs one note, not one each.
    """
    from core.storage.history import worker as history_worker

    remember_written(project.root, relpath, text)
    if project.backend_history or not text:
        return None
    key = (str(project.root), relpath)
    with _pending_lock:
        queued = key in _pending
        _pending[key] = text
    if queued:
        return None
    return history_worker.submit(_note_pending, project.root, relpath, key)


def record_appended(project: Project, relpath: str, entry: str, *, author: str | None, source: str,
                    text: str | None) -> Job[Any]:
    """Stage "record" of an append: who appended ``entry`` and, when ``text`` is given, what ``relpath`` now holds.

    One job on history's thread and one transaction (:func:`core.storage.history.worker.record_append`): the
    event row first, then the note (:func:`note_written`'s, coalesced the same way), so a reader of the
    database never sees the note without the event that explains it, and an append costs one hand-off and
    one commit, not two of each. A note that cannot be made is logged; the event is kept.
    """
    from core.storage.history import worker as history_worker

    then = None
    if text is not None:
        remember_written(project.root, relpath, text)
        if not project.backend_history and text:
            key = (str(project.root), relpath)
            with _pending_lock:
                _pending[key] = text

            def then(conn: Any) -> None:
                _note_pending_in(conn, relpath, key)
    return history_worker.record_append(project.root, relpath, entry, author=author, source=source, then=then)


def _note_pending_in(conn: Any, relpath: str, key: tuple[str, str]) -> None:
    """The pending note of ``key``, if still pending, in the caller's transaction (rolled back alone on failure)."""
    import sqlite3

    from core.storage.history import store as history_store

    with _pending_lock:
        text = _pending.pop(key, None)
    if text is None:
        return  # a job queued before took it
    data = text.encode("utf-8")
    conn.execute("SAVEPOINT note")
    try:
        history_store.record_seen(conn, relpath, data, history_store.sha256_hex(data))
    except (sqlite3.Error, history_store.CorruptObject) as exc:
        conn.execute("ROLLBACK TO note")
        log.warning("what memdesk wrote to %s was not noted: %s", relpath, exc)
    conn.execute("RELEASE note")


def _note_pending(root: Any, relpath: str, key: tuple[str, str]) -> None:
    with _pending_lock:
        text = _pending.pop(key, None)
    if text is not None:
        _note(root, relpath, text)


def _note(root: Any, relpath: str, text: str) -> None:
    from core.storage.history import store as history_store
    from core.storage.history.worker import using

    data = text.encode("utf-8")
    # synchronous=NORMAL: the note is a hint for the next open (what memdesk wrote), never text of its own.
    with using(root, create=True, write=True, durable=False) as conn:
        assert conn is not None
        history_store.record_seen(conn, relpath, data, history_store.sha256_hex(data))


def check_seen(project: Project, relpath: str, text: str | None) -> Job[Any] | None:
    """On a process's first read of ``relpath``: record a change made while memdesk was not looking.

    When the file no longer holds the text memdesk last wrote (and history keeps that text), the change
    is recorded by :func:`record_noticed`'s rules; the seen text then becomes the current one.
    """
    from core.storage.history import worker as history_worker

    if text is None or project.backend_history or not _is_document(project, relpath):
        return None
    if not (project.root / ".fusion" / "memdesk" / "history.db").exists():
        return None
    return history_worker.submit(_check, project, relpath, text)


def _check(project: Project, relpath: str, text: str) -> int | None:
    from core.storage.history import store as history_store
    from core.storage.history.worker import using

    data = text.encode("utf-8")
    digest = history_store.sha256_hex(data)
    with using(project.root, create=False) as conn:
        if conn is None or not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'seen'"
                                            ).fetchone():
            return None
        row = conn.execute("SELECT hash FROM seen WHERE path = ?", (relpath,)).fetchone()
        if row is None or row[0] == digest:
            return None
        try:
            before = history_store.load(conn, row[0]).decode("utf-8")
        except (history_store.CorruptObject, UnicodeDecodeError) as exc:
            log.warning("the last text memdesk wrote to %s cannot be rebuilt: %s", relpath, exc)
            return None
    who = PROGRAM
    if text.startswith(before):
        found = _record_append(project.root, relpath, text[len(before):], who)
    else:
        found = _record_version(project.root, relpath, before, who)
    _note(project.root, relpath, text)
    return found
