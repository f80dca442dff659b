"""The database side of ``memdesk backend move`` (:mod:`core.project.backend_move` runs the move and writes every
document through the write pipeline): the hashes a project key holds, history copied each way, and the
check that every document reads back from the database with its file's hash. Writes no file.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from core.backends.pg import documents as docs
from core.errors import MemoryBackendError
from core.storage import fileio
from core.storage.history import versions as history

if TYPE_CHECKING:
    from core.backends.postgres import PostgresMemoryBackend


def db_hashes(backend: PostgresMemoryBackend) -> dict[str, str]:
    with backend.db.connection("list documents") as conn:
        return {r[0]: r[1] for r in conn.execute(
            "SELECT path, hash FROM memdesk_documents WHERE project_key = %s", (backend.project_key,))}


def copy_local_history(backend: PostgresMemoryBackend, root: Path, path: str) -> int:
    """Copy the local versions of ``path`` into the database (their dates kept; already-kept ones skipped)."""
    copied = 0
    with backend.db.transaction("copy history") as conn:
        for v in reversed(history.list_versions(root, path)):
            found = history.get_version(root, v.id)
            if found is not None and docs.record_history(conn, backend.project_key, path, found[1], v.source,
                                                         "memdesk backend move",
                                                         created_at=datetime.fromisoformat(v.created_at)):
                copied += 1
    return copied


def copy_db_history(backend: PostgresMemoryBackend, root: Path, path: str) -> int:
    """Copy the database versions of ``path`` into the local history, oldest first (ones it has are skipped)."""
    local = {v.hash for v in history.list_versions(root, path)}
    copied = 0
    for v in reversed(backend.list_versions(path)):
        if v.hash in local:
            continue
        found = backend.get_version(v.id)
        if found is not None:
            history.record_version(root, path, found[1], v.source)
            copied += 1
    return copied


def verify(backend: PostgresMemoryBackend, files: dict[str, str]) -> dict[str, str]:
    """Every document reads back from the database with its file's hash (returned by path), or the move stops."""
    verified: dict[str, str] = {}
    with backend.db.connection("verify") as conn:
        for path, text in files.items():
            row = docs.fetch(conn, backend.project_key, path)
            want = fileio.content_hash(text)
            if row is None or row.hash != want or fileio.content_hash(row.content) != want:
                raise MemoryBackendError(f"{path} does not read back from the database with its file's hash; "
                                         "the settings were not changed", "WRITE_FAILED", "postgres")
            verified[path] = want
    return verified
