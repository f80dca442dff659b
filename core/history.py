"""Version history of replaced files, kept in SQLite under ``.fusion/memdesk/history.db``.

Every whole-file replacement (editor save, prune apply, insights merge, CLI write, restore) stores
the previous content here first, deduplicated by content hash per file.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from core.fileio import MEMDESK_DIR, content_hash

HISTORY_DB = f"{MEMDESK_DIR}/history.db"

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


def _connect(root: Path | str) -> sqlite3.Connection:
    db = Path(root) / HISTORY_DB
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db, timeout=30)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(_SCHEMA)
    return conn


def record_version(root: Path | str, relpath: str, content: str, source: str) -> int | None:
    """Store ``content`` as a version of ``relpath``; a content already stored is only re-dated."""
    now = datetime.now(UTC).isoformat(timespec="seconds")
    digest = content_hash(content)
    with closing(_connect(root)) as conn, conn:
        row = conn.execute(
            "SELECT id FROM versions WHERE path = ? AND hash = ?", (relpath, digest)
        ).fetchone()
        if row:
            conn.execute(
                "UPDATE versions SET created_at = ?, source = ? WHERE id = ?", (now, source, row[0])
            )
            return int(row[0])
        cur = conn.execute(
            "INSERT INTO versions(path, hash, size, created_at, source, content) VALUES (?,?,?,?,?,?)",
            (relpath, digest, len(content.encode("utf-8")), now, source, content),
        )
        return cur.lastrowid


def list_versions(root: Path | str, relpath: str | None = None) -> list[Version]:
    """Return stored versions, newest first (of one file when ``relpath`` is given)."""
    if not (Path(root) / HISTORY_DB).exists():
        return []
    sql = "SELECT id, path, hash, size, created_at, source FROM versions"
    args: tuple[str, ...] = ()
    if relpath is not None:
        sql += " WHERE path = ?"
        args = (relpath,)
    sql += " ORDER BY created_at DESC, id DESC"
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
