"""Changes memdesk notices but did not make (issue 19, item 1): recorded so the version before is kept.

An agent's ``>>``, an editor's save or another program replacing a daily note change a memory file
without memdesk. Whenever memdesk holds the text from before such a change (the app's open document,
a server's served text), it records it here:

* a replacement (the new text does not start with the old): the old text becomes a version of the
  document with source ``external-change`` and author ``program`` (or ``program:<name>``), unless history
  already keeps that content (memdesk's own save kept it, with its own source);
* an append (the new text starts with the old): an append event with source ``external-append`` and
  the appended text, unless the newest recorded append of the document is that text (memdesk wrote it).

Both carry the time they were noticed, so the consolidation review can group one program's run
(``core.consolidation.programs``). Recording happens on history's worker thread: the caller (the GUI
thread) never waits for the disk. A backend that keeps its own history (``postgres``) records the
outside edits of its mirror itself (``mirror-import``), so nothing is recorded here for it.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from core.pipeline import Writer

if TYPE_CHECKING:
    from core.project import Project

log = logging.getLogger(__name__)

EXTERNAL_CHANGE = "external-change"
EXTERNAL_APPEND = "external-append"


def record_noticed(project: Project, relpath: str, before: str | None, after: str | None, *,
                   writer: Writer | None = None, as_version: bool = False) -> Future[Any] | None:
    """Record a change of ``relpath`` from ``before`` to ``after`` that memdesk did not make; the pending record.

    ``as_version``: keep ``before`` as a version even when the change only appended (one run of a program
    that also rewrote other documents: :mod:`core.noticed_watch`).

    Returns ``None`` when there is nothing to keep (no change, nothing before, not a memory document,
    a backend with its own history).
    """
    from core import history_worker
    from core.pipeline import is_document

    if before is None or before == after or not before or project.backend_history:
        return None
    if not is_document(project.layout, relpath):
        return None
    who = writer or Writer("program")
    root = project.root
    if after is not None and after.startswith(before) and not as_version:
        added = after[len(before):]
        return history_worker.submit(_record_append, root, relpath, added, who.label)
    return history_worker.submit(_record_version, root, relpath, before, who.label)


def _record_version(root: Any, relpath: str, before: str, author: str) -> int | None:
    from core import history
    from core.history_store import sha256_hex

    data = before.encode("utf-8")
    digest = sha256_hex(data)
    if _has_version(root, relpath, digest):
        return None  # memdesk's own write kept it already, under its own source
    return history.record_version(root, relpath, data, EXTERNAL_CHANGE, author=author, digest=digest)


def _has_version(root: Any, relpath: str, digest: str) -> bool:
    from core.history_worker import using

    with using(root, create=False) as conn:
        if conn is None:
            return False
        return conn.execute("SELECT 1 FROM versions WHERE path = ? AND hash = ?", (relpath, digest)).fetchone() \
            is not None


def _record_append(root: Any, relpath: str, added: str, author: str) -> int | None:
    import zlib
    from datetime import UTC, datetime

    from core.history_worker import using

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
