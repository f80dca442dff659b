"""Version history of memory files, kept in SQLite under ``.fusion/memdesk/history.db``.

Every whole-file replacement (editor save, prune apply, insights merge, CLI write, restore) stores
the previous content here first, with who made the change (``author``) when known. A content is
stored once per file (stored again, it is re-dated) and as changes, not copies: a delta against the
file's newest version, or a compressed snapshot (:mod:`core.storage.history.store`). Appends are recorded
as cheap events holding only the appended text (:func:`record_append`). Old versions are pruned by
a retention policy: versions older than ``days`` go, but the newest ``min_versions`` of each file
always stay. A restore writes through the same path as every other write, so the content it
replaced is itself kept (source ``restore``), and only to a memory document of the project.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import stat
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from core.storage.history import store as history_store
from core.storage.history.db import HISTORY_DB, HistoryUnavailable, db_path
from core.storage.history.jobs import Job
from core.storage.history.worker import forget_connections, record_append, settled, submit, using

log = logging.getLogger(__name__)

__all__ = ["HISTORY_DB", "AppendEvent", "HistoryUnavailable", "RestoreResult", "RetentionPolicy", "Version",
           "forget_connections", "get_version", "is_memory_document", "list_events", "list_versions", "prune_history",
           "record_append", "record_version", "retention_policy", "source_label", "unified_diff"]

DEFAULT_RETENTION_DAYS = 90
DEFAULT_MIN_VERSIONS = 20
#: ``config.json`` keys (camelCase, as the other project settings) read by :func:`retention_policy`.
RETENTION_DAYS_KEY = "historyRetentionDays"
MIN_VERSIONS_KEY = "historyMinVersions"
_MAX_ID = 2**63 - 1
_SELECT_VERSIONS = "SELECT id, path, hash, size, created_at, source, author FROM versions"

#: What the operator reads for a version's source: the version holds the content from *before* that change.
_LABELS = {
    "editor": "before save", "write": "before a write", "cli-write": "before a CLI write",
    "prune": "before prune", "restore": "before restore", "rotate": "before entries were archived",
    "insights-merge": "before an insights merge", "insights-edit": "before an insights edit",
    "proposal": "proposal update", "mirror-import": "before a mirror import", "import": "before an import",
    "settings": "before a settings change", "automation": "before a schedule change",
    "migrate": "before migration", "http": "before an HTTP write", "mcp": "before an MCP write",
    "append": "agent append", "agent-append": "agent append", "cli-append": "CLI append",
    "external-change": "before another program's change", "external-append": "another program's append",
    "firewall-import": "imported text the memory firewall flagged",
}


def source_label(source: str) -> str:
    """The label shown for a version's or an event's ``source`` ("before prune", "agent append", ...)."""
    label = _LABELS.get(source)
    if label is not None:
        return label
    if not source.strip():
        return "earlier content"
    return source if source.startswith("before ") else f"before {source}"


@dataclass(frozen=True)
class Version:
    """One stored version of a file (content loaded on demand by :func:`get_version`)."""

    id: int
    path: str
    hash: str
    size: int
    created_at: str
    source: str
    author: str | None = None

    @property
    def label(self) -> str:
        """The operator's name for where this version came from (see :func:`source_label`)."""
        return source_label(self.source)


@dataclass(frozen=True)
class AppendEvent:
    """One recorded append: the appended text, who wrote it and when."""

    id: int
    path: str
    created_at: str
    source: str
    author: str | None
    size: int
    text: str

    @property
    def label(self) -> str:
        """The operator's name for the append's source."""
        return source_label(self.source)


@dataclass(frozen=True)
class RetentionPolicy:
    """How long versions are kept: ``days`` (0 = no age limit), and at least ``min_versions`` per file."""

    days: int = DEFAULT_RETENTION_DAYS
    min_versions: int = DEFAULT_MIN_VERSIONS


def _now() -> datetime:
    return datetime.now(UTC)


def record_version(root: Path | str, relpath: str, content: str | bytes, source: str, *,
                   author: str | None = None, digest: str | None = None, seen: str | bytes | None = None
                   ) -> int | None:
    """Store ``content`` (text, or its UTF-8 bytes) as a version of ``relpath``; a content stored already is re-dated.

    ``digest`` is the content's SHA-256 when the caller has it. ``seen``: the text about to replace it, kept
    in the same transaction as what memdesk last wrote (:mod:`core.storage.noticed`; one commit a save, not two).
    Afterwards the versions of
    ``relpath`` are pruned by the project's retention policy. Raises :class:`HistoryUnavailable`
    when the database cannot be written (the caller must then not replace the file).
    """
    data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
    digest = digest or history_store.sha256_hex(data)
    now = _now()
    stamp = now.isoformat(timespec="seconds")
    policy = project_retention_policy(root)
    with using(root, create=True, write=True) as conn:
        assert conn is not None
        row = conn.execute("SELECT id FROM versions WHERE path = ? AND hash = ?", (relpath, digest)).fetchone()
        if row:
            conn.execute("UPDATE versions SET created_at = ?, source = ?, author = ? WHERE id = ?",
                         (stamp, source, author, row[0]))
            version_id = int(row[0])
        else:
            newest = conn.execute("SELECT hash FROM versions WHERE path = ? ORDER BY created_at DESC, id DESC "
                                  "LIMIT 1", (relpath,)).fetchone()
            history_store.store(conn, data, digest, newest[0] if newest else None)
            cur = conn.execute("INSERT INTO versions(path, hash, size, created_at, source, author) "
                               "VALUES (?,?,?,?,?,?)", (relpath, digest, len(data), stamp, source, author))
            version_id = int(cur.lastrowid or 0)
        _prune(conn, policy, now, relpath)
        if seen:
            after = seen.encode("utf-8") if isinstance(seen, str) else seen
            history_store.record_seen(conn, relpath, after, history_store.sha256_hex(after))
    return version_id


def record_version_soon(root: Path | str, relpath: str, content: str | bytes, source: str, *,
                        author: str | None = None, digest: str | None = None,
                        seen: str | bytes | None = None) -> Job[int | None]:
    """:func:`record_version` on history's worker thread; the caller waits on the future before replacing the file.

    A save writes and syncs its new bytes meanwhile, so the two ``fsync`` calls overlap instead of
    adding up. Versions are recorded one at a time, in the order asked.
    """
    # Started now, also inside an append's held wake-up (a rotation): the overlap is the point of asking early.
    return submit(record_version, root, relpath, content, source, author=author, digest=digest, seen=seen).start_now()


def _newest_first(root: Path | str, select: str, relpath: str | None, limit: int | None) -> list[tuple[Any, ...]]:
    """The rows of ``select`` (of one file when ``relpath`` is given), newest first, once pending writes are done."""
    settled()
    sql, args = select, list[object]()
    if relpath is not None:
        sql, args = sql + " WHERE path = ?", [relpath]
    sql += " ORDER BY created_at DESC, id DESC"
    if limit is not None:
        sql, args = sql + " LIMIT ?", [*args, limit]
    with using(root, create=False) as conn:
        return conn.execute(sql, args).fetchall() if conn is not None else []


def list_events(root: Path | str, relpath: str | None = None, limit: int | None = None) -> list[AppendEvent]:
    """Recorded appends, newest first (of one file when ``relpath`` is given)."""
    rows = _newest_first(root, "SELECT id, path, created_at, source, author, size, data FROM events", relpath, limit)
    out = []
    for eid, path, created, source, author, size, blob in rows:
        try:
            text = history_store.inflate(blob, history_store.MAX_OBJECT, f"event {eid}").decode("utf-8")
        except (zlib.error, UnicodeDecodeError, TypeError):
            text = "(this event's text is damaged)"
        out.append(AppendEvent(eid, path, created, source, author, size, text))
    return out


def list_versions(root: Path | str, relpath: str | None = None, limit: int | None = None) -> list[Version]:
    """Return stored versions, newest first (of one file when ``relpath`` is given)."""
    return [Version(*row) for row in _newest_first(root, _SELECT_VERSIONS, relpath, limit)]


def _is_version_id(version_id: object) -> bool:
    """Whether ``version_id`` can name a stored version (an int SQLite can hold, above 0; not a bool)."""
    return not isinstance(version_id, bool) and isinstance(version_id, int) and 0 < version_id <= _MAX_ID


def _version_row(conn: sqlite3.Connection, version_id: int) -> tuple[Any, ...] | None:
    row: tuple[Any, ...] | None = conn.execute(f"{_SELECT_VERSIONS} WHERE id = ?", (version_id,)).fetchone()
    return row


def get_version(root: Path | str, version_id: int) -> tuple[Version, str] | None:
    """Return a version and its content, or ``None`` when there is no such version.

    The content is rebuilt and checked against its SHA-256; a damaged one raises :class:`HistoryUnavailable`.
    """
    if not _is_version_id(version_id):
        return None
    settled()
    with using(root, create=False) as conn:
        if conn is None:
            return None
        row = _version_row(conn, version_id)
        if row is None:
            return None
        version = Version(*row)
        try:
            data = history_store.load(conn, version.hash)
        except history_store.CorruptObject as exc:
            raise HistoryUnavailable(db_path(root), f"holds version {version_id} of {version.path} damaged ({exc})",
                                     f"drop the damaged version with `memdesk history drop {version_id}`",
                                     exc) from exc
    try:
        return version, data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HistoryUnavailable(db_path(root), f"holds version {version_id} that is not UTF-8", cause=exc) from exc


def drop_version(root: Path | str, version_id: int) -> Version | None:
    """Delete one stored version (a damaged one, say) and the content only it used; the dropped version or ``None``.

    Its content is not rebuilt first, so a version whose object is damaged, bombed or loops can
    always be dropped: the way out named when one is refused.
    """
    if not _is_version_id(version_id):
        return None
    settled()
    with using(root, create=False, write=True) as conn:
        if conn is None:
            return None
        row = _version_row(conn, version_id)
        if row is None:
            return None
        conn.execute("DELETE FROM versions WHERE id = ?", (version_id,))
        history_store.recent.forget(row[2])
        history_store.collect(conn)
    return Version(*row)


# -- retention -----------------------------------------------------------------------------------
def retention_policy(settings: Mapping[str, Any] | object | None = None, *, days: int | None = None,
                     min_versions: int | None = None) -> RetentionPolicy:
    """Build the policy from explicit values, else from ``settings`` (a config mapping or model), else defaults.

    Reads ``historyRetentionDays``/``historyMinVersions`` (or ``history_retention_days``/
    ``history_min_versions``); a missing or invalid value falls back to its default.
    """
    def pick(explicit: int | None, camel: str, snake: str, default: int, least: int) -> int:
        value: Any = explicit
        if value is None and isinstance(settings, Mapping):
            value = settings.get(camel, settings.get(snake))
        elif value is None and settings is not None:
            value = getattr(settings, snake, None)
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            return default
        return value

    return RetentionPolicy(
        pick(days, RETENTION_DAYS_KEY, "history_retention_days", DEFAULT_RETENTION_DAYS, 0),
        pick(min_versions, MIN_VERSIONS_KEY, "history_min_versions", DEFAULT_MIN_VERSIONS, 1),
    )


_policy_cache: dict[str, tuple[tuple[int, int], RetentionPolicy]] = {}


def project_retention_policy(root: Path | str) -> RetentionPolicy:
    """The policy in the project's ``.fusion/config.json`` (defaults when absent or unreadable).

    Read as plain JSON (flat, or Fusion's ``{"settings": {...}}``) and kept while the file's size
    and time stay the same: it is asked on every save.
    """
    path = os.path.join(root, ".fusion", "config.json")
    try:
        st = os.stat(path)
    except OSError:
        return RetentionPolicy()
    if not stat.S_ISREG(st.st_mode):  # a FIFO or device in a project would block every save: the defaults
        return RetentionPolicy()
    key = (st.st_mtime_ns, st.st_size)
    cached = _policy_cache.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    try:
        with open(path, "rb") as fh:
            doc = json.loads(fh.read(1_048_577).decode("utf-8"))
        settings = doc.get("settings") if isinstance(doc, dict) and isinstance(doc.get("settings"), dict) else doc
        policy = retention_policy(settings if isinstance(settings, dict) else None)
    except (OSError, ValueError) as exc:  # an unreadable config must never block a write
        log.debug("history retention: using defaults (%s)", exc)
        policy = RetentionPolicy()
    _policy_cache[path] = (key, policy)
    return policy


def _prune(conn: sqlite3.Connection, policy: RetentionPolicy, now: datetime, relpath: str | None) -> int:
    if policy.days <= 0:
        return 0
    try:
        cutoff = (now - timedelta(days=policy.days)).isoformat(timespec="seconds")
    except (OverflowError, ValueError):  # a retention longer than the calendar: nothing is old enough
        return 0
    keep = min(max(1, policy.min_versions), 2**62)  # SQLite integers are 64-bit
    removed = 0
    for table in ("versions", "events"):
        paths = [relpath] if relpath is not None else [r[0] for r in conn.execute(f"SELECT DISTINCT path FROM {table}")]
        for path in paths:
            # Most saves find nothing old enough: asking is a fifth of the delete's sort (on a save's path).
            if not conn.execute(f"SELECT EXISTS(SELECT 1 FROM {table} WHERE path = ? AND created_at < ?)",
                                (path, cutoff)).fetchone()[0]:
                continue
            cur = conn.execute(
                f"DELETE FROM {table} WHERE path = ? AND created_at < ? AND id NOT IN ("
                f"SELECT id FROM {table} WHERE path = ? ORDER BY created_at DESC, id DESC LIMIT ?)",
                (path, cutoff, path, keep))
            if table == "versions":
                removed += cur.rowcount
    if removed:
        history_store.collect(conn)
    return removed


def prune_history(root: Path | str, *, days: int = DEFAULT_RETENTION_DAYS, min_versions: int = DEFAULT_MIN_VERSIONS,
                  relpath: str | None = None, now: datetime | None = None) -> int:
    """Delete versions older than ``days`` beyond the newest ``min_versions`` of each file; return how many.

    The stored content only those versions used goes too (a kept version built on it is rewritten
    as a snapshot first).
    """
    if days <= 0 or not db_path(root).exists():
        return 0
    with using(root, create=False, write=True) as conn:
        if conn is None:
            return 0
        return _prune(conn, RetentionPolicy(days, min_versions), now or _now(), relpath)


# -- which files a version may be restored to ------------------------------------------------------
def is_memory_document(root: Path | str, relpath: str) -> bool:
    """Whether ``relpath`` is a memory document of the project at ``root`` (design 2/2a): the only files restored."""
    from core.documents.layout import Layout  # late: the layout lists folders, history is asked on every save

    return isinstance(relpath, str) and Layout(root).is_document(relpath)


# -- diff and restore ----------------------------------------------------------------------------
def unified_diff(old: str, new: str, path: str, old_label: str = "version", new_label: str = "now") -> str:
    """Return a unified diff from ``old`` to ``new`` (``""`` when they are the same)."""
    import difflib  # here: history is imported by every save and append, a diff is asked for rarely

    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 fromfile=f"{path} ({old_label})", tofile=f"{path} ({new_label})")
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


@dataclass(frozen=True)
class RestoreResult:
    """What a restore did: the version restored, the file it went to and whether any byte changed."""

    version: Version
    path: str
    changed: bool


