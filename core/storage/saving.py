"""Whole-file replacements that keep the previous version in history first: the one versioned write path.

:func:`core.storage.fileio.replace_text` does the safe write (confined, locked, atomic, size-checked,
``CONFLICT`` on a stale base); this module gives it the history, which sits above the file layer:
the previous bytes are recorded on history's worker thread while the new ones go to disk, and
the rename waits for them, so a file is never replaced before its old version is kept. When the
old version cannot be kept (a damaged or read-only history database) nothing is written.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from core.documents.layout import SEED_MEMORY
from core.errors import MemoryBackendError
from core.storage import fileio
from core.storage.history import versions as history
from core.storage.statefiles import keep_previous

__all__ = ["keep_previous", "replace_text", "restore_version"]


def replace_text(root: Path | str, relpath: str, content: str, *, note_seen: bool = False,
                 **options: Any) -> fileio.ReplaceResult:
    """:func:`core.storage.fileio.replace_text`, keeping the previous version in history (unless ``keep_history=False``).

    ``note_seen``: also note ``content`` as what memdesk last wrote (:mod:`core.storage.noticed`) in the commit that
    keeps the previous version (the write pipeline's saves: one history commit a save instead of two).
    """
    seen = options.get("data") or content  # the bytes when the caller has them: not encoded again on history's thread
    options.setdefault("keep_previous", partial(keep_previous, seen=seen) if note_seen else keep_previous)
    return fileio.replace_text(root, relpath, content, **options)


def restore_version(root: Path | str, version_id: int, *, backend: Any = None,
                    expected_hash: str | None = None) -> history.RestoreResult:
    """Write version ``version_id`` back to its file with source ``restore`` (the replaced content is kept).

    Only a memory document of the project is restored (a row naming any other path, planted or
    damaged, is refused with ``INVALID_CONFIG``). A version of the working memory is written
    through ``backend`` when one is given (so a database-backed memory is restored where it
    lives); any other document through :func:`replace_text`. Raises ``NOT_FOUND`` for an unknown
    id and whatever the write raises (``CONFLICT``...). :meth:`core.project.Project.restore` is the
    path the surfaces use.
    """
    found = history.get_version(root, version_id)
    if found is None:
        raise MemoryBackendError(f"no version {version_id} in the history", "NOT_FOUND", "history")
    version, content = found
    if not history.is_memory_document(root, version.path):
        raise MemoryBackendError(f"version {version.id} is of {version.path!r}, which is not a memory document of "
                                 "this project; nothing was restored", "INVALID_CONFIG", "history")
    if backend is not None and version.path == SEED_MEMORY:
        before = backend.read()
        backend.write(content, expected_hash=expected_hash, source="restore")
        return history.RestoreResult(version, version.path, before != content)
    result = replace_text(root, version.path, content, expected_hash=expected_hash, source="restore")
    return history.RestoreResult(version, version.path, result.changed)
