"""Moving a project's memory into the shared database and back out to files, verified by content hashes.

``move_to_postgres`` copies every memory document and its local history into the database under a
project key, checks that each document reads back with the file's hash, and only then switches the
project's settings to ``postgres`` (mirror on). ``move_to_files`` first takes in any agent edit of the
mirror files, writes every document of the key to its file (the replaced file text kept in local
history), copies the database history into the local history, verifies the hashes, and only then
switches the settings back. Neither deletes anything: the database rows stay after a move out, the
files stay after a move in, so each move can be undone by the other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from core.backends.pg import documents as docs
from core.backends.pg.documents import check_document_path
from core.backends.pg.mirror import MirrorFiles
from core.documents.layout import Layout
from core.errors import MemoryBackendError, PathOutsideRootError
from core.settings.model import load_settings, update_settings
from core.storage import fileio, pipeline, saving
from core.storage.history import versions as history

if TYPE_CHECKING:
    from core.backends.postgres import PostgresMemoryBackend

_KEY_CHARS = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass
class MoveReport:
    """What a move did: each document with its verified hash, and how many history versions were copied."""

    direction: str
    project_key: str
    documents: dict[str, str] = field(default_factory=dict)
    versions_copied: int = 0
    unchanged: list[str] = field(default_factory=list)
    #: Rows that are not memory documents of this project (``.fusion/config.json``…), with why: never written.
    skipped: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        """camelCase JSON for ``--json``."""
        return {"direction": self.direction, "projectKey": self.project_key, "documents": self.documents,
                "versionsCopied": self.versions_copied, "unchanged": self.unchanged, "skipped": self.skipped}


def default_project_key(root: Path) -> str:
    """A project key from the folder name (``My Project`` → ``My-Project``)."""
    key = _KEY_CHARS.sub("-", root.name).strip("-.") or "project"
    return key[:128]


def project_documents(root: Path) -> dict[str, str]:
    """Every memory document of the project and its text, read through the project's current backend (a
    database-backed one may hold text its files lack); a non-UTF-8 or escaping file stops the move."""
    from core.backends.registry import resolve_memory_backend

    current = resolve_memory_backend(load_settings(root), root)
    try:
        if current.fallback_reason:
            raise MemoryBackendError(f"{current.fallback_reason}; make it available before moving (nothing was "
                                     "moved)", "BACKEND_UNAVAILABLE", "postgres")
        paths = [info.path for info in Layout(root).documents()]
        primary = getattr(current, "primary_path", None)
        if primary and primary not in paths:
            paths.insert(0, primary)
        found: dict[str, str] = {}
        for rel in paths:
            try:
                fileio.resolve_in_root(root, rel)
            except PathOutsideRootError as exc:
                raise MemoryBackendError(f"{rel}: {exc}; nothing was moved", "INVALID_CONFIG", "postgres") from exc
            text = current.read_document(rel)
            if text is not None:
                found[check_document_path(rel)] = text
        return found
    finally:
        current.shutdown()


def move_to_postgres(root: Path, connection: str, project_key: str | None = None, *,
                     replace: bool = False) -> MoveReport:
    """Copy the project's documents and history into the database, verify, then switch the settings."""
    from core.backends.postgres import PostgresMemoryBackend

    settings = load_settings(root)
    if settings.memory_backend == "postgres":
        raise MemoryBackendError("the project already uses the postgres backend", "INVALID_CONFIG", "postgres")
    key = project_key or default_project_key(root)
    files = project_documents(root)
    backend = PostgresMemoryBackend()
    backend.initialize({"connection": connection, "projectKey": key, "mirror": False}, root)
    report = MoveReport("to-postgres", key)
    try:
        held = _db_hashes(backend)
        clash = sorted(p for p, text in files.items() if p in held and held[p] != fileio.content_hash(text))
        if clash and not replace:
            raise MemoryBackendError(
                f'project key "{key}" already holds different text for {", ".join(clash)}; choose another '
                "--project-key, or pass --replace (the database's text is then kept in its history). "
                "Nothing was changed.", "CONFLICT", "postgres")
        for path, text in files.items():
            report.versions_copied += _copy_local_history(backend, root, path)
            if held.get(path) == fileio.content_hash(text):
                report.unchanged.append(path)
            backend.write_document(path, text, source="move", author="memdesk backend move")
        _verify(backend, files, report)
    finally:
        backend.shutdown()
    mirror = MirrorFiles(root, key)
    for path, text in files.items():
        # The files become the mirror: make each hold the moved text (a database-backed backend's file may
        # be behind; its text is kept in local history), then note it as mirrored.
        saving.replace_text(root, path, text, source="move", backend_id="postgres")
        mirror.remember(path, text)
    from core.settings.bindings import confirm

    confirm(root, connection, key)  # the operator moved this folder's memory there: the binding is theirs
    update_settings(root, {"memoryBackend": "postgres",
                           "memoryBackendConfig": {"connection": connection, "projectKey": key, "mirror": True}})
    return report


def move_to_files(root: Path) -> MoveReport:
    """Write every document of the project key to its file, copy the history, verify, then switch to files."""
    from core.backends.postgres import PostgresMemoryBackend, PostgresSettings

    settings = load_settings(root)
    if settings.memory_backend != "postgres":
        raise MemoryBackendError(f'the project uses the "{settings.memory_backend}" backend, not postgres; '
                                 "nothing to move", "INVALID_CONFIG", "postgres")
    cfg = PostgresSettings.model_validate(settings.memory_backend_config)
    backend = PostgresMemoryBackend()
    backend.initialize(settings.memory_backend_config, root)
    report = MoveReport("to-files", cfg.project_key)
    try:
        texts: dict[str, str] = {}
        for path, *_ in backend.list_documents():
            try:  # rows are the team's data: only memory documents of this project's layout are written
                pipeline.check_memory_path(path, "postgres")
            except MemoryBackendError as exc:
                report.skipped[str(path)] = str(exc)
                continue
            text = backend.read_document(path)  # with the mirror on, an agent's edit of the file is taken in first
            if text is not None:
                texts[path] = text
        for path in texts:  # stage "where" for every file before any is written
            try:
                fileio.check_writable(root, path, "postgres")
            except (RuntimeError, OSError) as exc:
                raise MemoryBackendError(f"{path} cannot be written ({exc}); nothing was moved", "INVALID_CONFIG",
                                         "postgres", exc) from exc
        for path, text in texts.items():
            report.versions_copied += _copy_db_history(backend, root, path)
            result = saving.replace_text(root, path, text, source="move", backend_id="postgres")
            if not result.changed:
                report.unchanged.append(path)
        for path, text in texts.items():
            on_disk = fileio.read_text(fileio.resolve_in_root(root, path), "postgres") or ""
            if fileio.content_hash(on_disk) != fileio.content_hash(text):
                raise MemoryBackendError(f"{path} does not read back with the database's hash; the settings "
                                         "were not changed", "WRITE_FAILED", "postgres")
            report.documents[path] = fileio.content_hash(text)
    finally:
        backend.shutdown()
    update_settings(root, {"memoryBackend": None, "memoryBackendConfig": None})
    return report


def _db_hashes(backend: PostgresMemoryBackend) -> dict[str, str]:
    with backend.db.connection("list documents") as conn:
        return {r[0]: r[1] for r in conn.execute(
            "SELECT path, hash FROM memdesk_documents WHERE project_key = %s", (backend.project_key,))}


def _copy_local_history(backend: PostgresMemoryBackend, root: Path, path: str) -> int:
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


def _copy_db_history(backend: PostgresMemoryBackend, root: Path, path: str) -> int:
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


def _verify(backend: PostgresMemoryBackend, files: dict[str, str], report: MoveReport) -> None:
    """Every document reads back from the database with its file's hash, or the move stops."""
    with backend.db.connection("verify") as conn:
        for path, text in files.items():
            row = docs.fetch(conn, backend.project_key, path)
            want = fileio.content_hash(text)
            if row is None or row.hash != want or fileio.content_hash(row.content) != want:
                raise MemoryBackendError(f"{path} does not read back from the database with its file's hash; "
                                         "the settings were not changed", "WRITE_FAILED", "postgres")
            report.documents[path] = want
