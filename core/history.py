"""Version history of replaced files, kept in SQLite under ``.fusion/memdesk/history.db``.

Every whole-file replacement (editor save, prune apply, insights merge, CLI write, restore) stores
the previous content here first, deduplicated by content hash per file (a content stored again is
re-dated, keeping one row). Old versions are pruned by a retention policy: versions older than
``days`` go, but the newest ``min_versions`` of each file always stay. A restore writes through the
same path as every other write, so the content it replaced is itself kept (with source ``restore``).
"""

from __future__ import annotations

import difflib
import logging
import sqlite3
from collections.abc import Mapping
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from core.errors import MemoryBackendError
from core.fileio import MEMDESK_DIR, content_hash

log = logging.getLogger(__name__)

HISTORY_DB = f"{MEMDESK_DIR}/history.db"
DEFAULT_RETENTION_DAYS = 90
DEFAULT_MIN_VERSIONS = 20
#: ``config.json`` keys (camelCase, as the other project settings) read by :func:`retention_policy`.
RETENTION_DAYS_KEY = "historyRetentionDays"
MIN_VERSIONS_KEY = "historyMinVersions"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS versions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT NOT NULL,
    hash TEXT NOT NULL,
    size INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    source TEXT NOT NULL,
    content TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS versions_path ON versions(path, id);
CREATE UNIQUE INDEX IF NOT EXISTS versions_path_hash ON versions(path, hash);
"""


@dataclass(frozen=True)
class Version:
    """One stored version of a file (content loaded on demand by :func:`get_version`)."""

    id: int
    path: str
    hash: str
    size: int
    created_at: str
    source: str


@dataclass(frozen=True)
class RetentionPolicy:
    """How long versions are kept: ``days`` (0 = no age limit), and at least ``min_versions`` per file."""

    days: int = DEFAULT_RETENTION_DAYS
    min_versions: int = DEFAULT_MIN_VERSIONS


def _connect(root: Path | str) -> sqlite3.Connection:
    db = Path(root) / HISTORY_DB
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db, timeout=30)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(_SCHEMA)
    return conn


def _now() -> datetime:
    return datetime.now(UTC)


def record_version(root: Path | str, relpath: str, content: str, source: str) -> int | None:
    """Store ``content`` as a version of ``relpath``; a content already stored is only re-dated.

    Afterwards the versions of ``relpath`` are pruned by the project's retention policy.
    """
    now = _now().isoformat(timespec="seconds")
    digest = content_hash(content)
    with closing(_connect(root)) as conn, conn:
        row = conn.execute(
            "SELECT id FROM versions WHERE path = ? AND hash = ?", (relpath, digest)
        ).fetchone()
        if row:
            conn.execute(
                "UPDATE versions SET created_at = ?, source = ? WHERE id = ?", (now, source, row[0])
            )
            version_id: int | None = int(row[0])
        else:
            cur = conn.execute(
                "INSERT INTO versions(path, hash, size, created_at, source, content) VALUES (?,?,?,?,?,?)",
                (relpath, digest, len(content.encode("utf-8")), now, source, content),
            )
            version_id = cur.lastrowid
    policy = project_retention_policy(root)
    prune_history(root, days=policy.days, min_versions=policy.min_versions, relpath=relpath)
    return version_id


def list_versions(root: Path | str, relpath: str | None = None, limit: int | None = None) -> list[Version]:
    """Return stored versions, newest first (of one file when ``relpath`` is given)."""
    if not (Path(root) / HISTORY_DB).exists():
        return []
    sql = "SELECT id, path, hash, size, created_at, source FROM versions"
    args: list[Any] = []
    if relpath is not None:
        sql += " WHERE path = ?"
        args.append(relpath)
    sql += " ORDER BY created_at DESC, id DESC"
    if limit is not None:
        sql += " LIMIT ?"
        args.append(limit)
    with closing(_connect(root)) as conn:
        return [Version(*row) for row in conn.execute(sql, args)]


def get_version(root: Path | str, version_id: int) -> tuple[Version, str] | None:
    """Return a version and its content, or ``None`` when there is no such version."""
    if not (Path(root) / HISTORY_DB).exists():
        return None
    with closing(_connect(root)) as conn:
        row = conn.execute(
            "SELECT id, path, hash, size, created_at, source, content FROM versions WHERE id = ?",
            (version_id,),
        ).fetchone()
    if row is None:
        return None
    return Version(*row[:6]), row[6]


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


def project_retention_policy(root: Path | str) -> RetentionPolicy:
    """The policy in the project's ``.fusion/config.json`` (defaults when absent or unreadable)."""
    from core.settings import ConfigFile  # late import: settings writes through fileio, which calls us

    try:
        return retention_policy(ConfigFile(root).settings)
    except Exception as exc:  # an unreadable config must never block a write
        log.debug("history retention: using defaults (%s)", exc)
        return RetentionPolicy()


def prune_history(root: Path | str, *, days: int = DEFAULT_RETENTION_DAYS, min_versions: int = DEFAULT_MIN_VERSIONS,
                  relpath: str | None = None, now: datetime | None = None) -> int:
    """Delete versions older than ``days`` beyond the newest ``min_versions`` of each file; return how many."""
    if days <= 0 or not (Path(root) / HISTORY_DB).exists():
        return 0
    try:
        cutoff = ((now or _now()) - timedelta(days=days)).isoformat(timespec="seconds")
    except (OverflowError, ValueError):  # a retention longer than the calendar: nothing is old enough
        return 0
    keep = min(max(1, min_versions), 2**62)  # SQLite integers are 64-bit
    removed = 0
    with closing(_connect(root)) as conn, conn:
        paths = [relpath] if relpath is not None else [r[0] for r in conn.execute("SELECT DISTINCT path FROM versions")]
        for path in paths:
            cur = conn.execute(
                "DELETE FROM versions WHERE path = ? AND created_at < ? AND id NOT IN ("
                "SELECT id FROM versions WHERE path = ? ORDER BY created_at DESC, id DESC LIMIT ?)",
                (path, cutoff, path, keep),
            )
            removed += cur.rowcount
    return removed


# -- diff and restore ----------------------------------------------------------------------------
def unified_diff(old: str, new: str, path: str, old_label: str = "version", new_label: str = "now") -> str:
    """Return a unified diff from ``old`` to ``new`` (``""`` when they are the same)."""
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 fromfile=f"{path} ({old_label})", tofile=f"{path} ({new_label})")
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


@dataclass(frozen=True)
class RestoreResult:
    """What a restore did: the version restored, the file it went to and whether any byte changed."""

    version: Version
    path: str
    changed: bool


def restore_version(root: Path | str, version_id: int, *, backend: Any = None,
                    expected_hash: str | None = None) -> RestoreResult:
    """Write version ``version_id`` back to its file with source ``restore`` (the replaced content is kept).

    A version of the working memory is written through ``backend`` when one is given (so a
    database-backed memory is restored where it lives); any other file through ``fileio.replace_text``.
    Raises ``NOT_FOUND`` for an unknown id and whatever the write raises (``CONFLICT``...).
    """
    from core import fileio
    from core.project_memory import MEMORY_FILE_PATH

    found = get_version(root, version_id)
    if found is None:
        raise MemoryBackendError(f"no version {version_id} in the history", "NOT_FOUND", "history")
    version, content = found
    if backend is not None and version.path == MEMORY_FILE_PATH:
        before = backend.read()
        backend.write(content, expected_hash=expected_hash, source="restore")
        return RestoreResult(version, version.path, before != content)
    result = fileio.replace_text(root, version.path, content, expected_hash=expected_hash, source="restore")
    return RestoreResult(version, version.path, result.changed)
