"""``memdesk backend move``: a project's memory into the shared database and back out to files, through the
write pipeline, verified by content hashes.

Every document the move writes, in either direction, goes through :mod:`core.storage.pipeline` as one
write of source ``backend-move``: stage "what" by this project's layout (a database row whose path is not
one of its memory documents, such as ``.fusion/config.json``, or the other layout's file, is refused and
named in the report, never written), "where" (inside the project, no link out), the document's lock, one
read, the firewall's screen (a held or refused document stops the move before the settings change), the
write, and history with the source and author.

``move_to_postgres`` copies every memory document and its local history into the database under a
project key, checks that each document reads back with the file's hash, makes the files the mirror
(each holding the moved text), and only then switches the project's settings to ``postgres`` (mirror
on). ``move_to_files`` first takes in any agent edit of the mirror files, writes every document of the
key to its file (the replaced file text kept in local history), copies the database history into the
local history, verifies the hashes, and only then switches the settings back. Neither deletes anything:
the database rows stay after a move out, the files stay after a move in, so each move can be undone by
the other.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from core.backends import postgres_move as db
from core.documents.layout import Layout
from core.errors import MemoryBackendError, PathOutsideRootError
from core.project.model import Project
from core.settings.model import ProjectSettings, load_settings, update_settings
from core.storage import fileio, pipeline

if TYPE_CHECKING:
    from core.backends.base import MemoryBackend

_KEY_CHARS = re.compile(r"[^A-Za-z0-9._-]+")
SOURCE = "backend-move"
AUTHOR = "memdesk backend move"
WRITER = pipeline.Writer("memdesk", "backend-move")


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


def _project(root: Path, backend: MemoryBackend | None = None) -> Project:
    """The project ``root`` writing through ``backend`` (the file backend when ``None``), with its firewall's
    screen: the pipeline's project for the move's writes, whatever the settings name until the move ends."""
    project = Project(root, settings=ProjectSettings())  # no backend key: the file backend
    if backend is not None:
        project._replace_backend(backend)
    return project


def _checked(project: Project, paths: list[str], report: MoveReport | None) -> list[str]:
    """Stages "what" and "where" for every path before any is written: a path that is not a memory document
    of this project is skipped into ``report`` (or, without one, stops the move); one that cannot be
    written (a link out, a FIFO…) stops the move, naming it."""
    kept = []
    for path in paths:
        try:
            pipeline.check_what(project, path)
        except MemoryBackendError as exc:
            if report is None:
                raise
            report.skipped[str(path)] = str(exc)
            continue
        try:
            pipeline.check_where(project, path)
        except MemoryBackendError as exc:
            raise MemoryBackendError(f"{str(exc).rstrip('. ')}; nothing was moved", exc.code, exc.backend_id,
                                     exc) from exc
        kept.append(path)
    return kept


def _on_disk(root: Path, paths: Iterable[str]) -> dict[str, str | None]:
    """The SHA-256 of each file's bytes now (right after the move read it): a file that changes after this (an
    agent's ``>>`` takes no lock) is never written over by the move, which stops with ``CONFLICT`` instead.
    ``None`` for a file that cannot be read here (stages "what" and "where" name it before anything is written)."""
    found: dict[str, str | None] = {}
    for path in paths:
        try:
            found[path] = fileio.sha256_hex(fileio.read_bytes(fileio.resolve_in_root(root, path), "file") or b"")
        except (OSError, MemoryBackendError, PathOutsideRootError):
            found[path] = None
    return found


def _write(project: Project, path: str, text: str, expected_hash: str | None = None) -> bool:
    """One document through the pipeline (source ``backend-move``); whether it changed. A held or refused write
    stops the move (the settings are not changed), and so does a file changed since ``expected_hash``."""
    done = pipeline.replace(project, path, text, writer=WRITER, source=SOURCE, author=AUTHOR,
                            expected_hash=expected_hash)
    if done.status != "written":
        raise MemoryBackendError(f"{path} was {done.status} by the write screen ({done.reason or 'no reason given'})"
                                 "; the move stopped and the settings were not changed", "CONFLICT",
                                 project.backend.id)
    return done.changed


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
            text = current.read_document(rel)
            if text is not None:
                found[rel] = text
        return found
    finally:
        current.shutdown()


def move_to_postgres(root: Path, connection: str, project_key: str | None = None, *,
                     replace: bool = False) -> MoveReport:
    """Copy the project's documents and history into the database, verify, then switch the settings."""
    from core.backends.pg.mirror import MirrorFiles
    from core.backends.postgres import PostgresMemoryBackend
    from core.settings.bindings import confirm

    settings = load_settings(root)
    if settings.memory_backend == "postgres":
        raise MemoryBackendError("the project already uses the postgres backend", "INVALID_CONFIG", "postgres")
    key = project_key or default_project_key(root)
    files = project_documents(root)
    disk = _on_disk(root, files)
    backend = PostgresMemoryBackend()
    backend.initialize({"connection": connection, "projectKey": key, "mirror": False}, root)
    report = MoveReport("to-postgres", key)
    into_db = _project(root, backend)
    try:
        _checked(into_db, list(files), None)
        held = db.db_hashes(backend)
        clash = sorted(p for p, text in files.items() if p in held and held[p] != fileio.content_hash(text))
        if clash and not replace:
            raise MemoryBackendError(
                f'project key "{key}" already holds different text for {", ".join(clash)}; choose another '
                "--project-key, or pass --replace (the database's text is then kept in its history). "
                "Nothing was changed.", "CONFLICT", "postgres")
        for path, text in files.items():
            report.versions_copied += db.copy_local_history(backend, root, path)
            if held.get(path) == fileio.content_hash(text):
                report.unchanged.append(path)
            _write(into_db, path, text)
        report.documents.update(db.verify(backend, files))
    finally:
        into_db.close()
    mirror = MirrorFiles(root, key)
    to_files = _project(root)
    try:
        for path, text in files.items():
            # The files become the mirror: each holds the moved text (a database-backed backend's file may be
            # behind; its text is kept in local history), then noted as mirrored.
            _write(to_files, path, text, disk[path])
            mirror.remember(path, text)
    finally:
        to_files.close()
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
    project = _project(root)
    try:
        rows = [str(path) for path, *_ in backend.list_documents()]
        texts: dict[str, str] = {}
        for path in _checked(project, rows, report):  # rows are the team's data: this layout's documents only
            text = backend.read_document(path)  # with the mirror on, an agent's edit of the file is taken in first
            if text is not None:
                texts[path] = text
        disk = _on_disk(root, texts)
        for path, text in texts.items():
            report.versions_copied += db.copy_db_history(backend, root, path)
            if not _write(project, path, text, disk[path]):
                report.unchanged.append(path)
        for path, text in texts.items():
            on_disk = fileio.read_text(fileio.resolve_in_root(root, path), "postgres") or ""
            if fileio.content_hash(on_disk) != fileio.content_hash(text):
                raise MemoryBackendError(f"{path} does not read back with the database's hash; the settings "
                                         "were not changed", "WRITE_FAILED", "postgres")
            report.documents[path] = fileio.content_hash(text)
    finally:
        project.close()
        backend.shutdown()
    update_settings(root, {"memoryBackend": None, "memoryBackendConfig": None})
    return report
