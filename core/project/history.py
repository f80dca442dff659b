"""The project's history (:class:`ProjectHistory`): stored versions from where the backend keeps them, and restoring one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.errors import MemoryBackendError
from core.project.results import WriteResult
from core.project.writes import ProjectWrites
from core.storage.pipeline import Writer

if TYPE_CHECKING:
    from core.storage.history.versions import Version

_MAX_VERSION_ID = 2**63 - 1  # history ids are 64-bit in SQLite and PostgreSQL


class ProjectHistory(ProjectWrites):
    """Listing, reading and restoring stored versions."""

    def list_versions(self, path: str | None = None, limit: int | None = None) -> list[Version]:
        """Stored versions, newest first (of one document when ``path`` is given), from where the backend keeps them."""
        if self.backend_history:
            return list(self.backend.list_versions(path, limit))  # type: ignore[attr-defined]
        from core.storage.history import versions as history

        return history.list_versions(self.root, path, limit)

    def get_version(self, version_id: int) -> tuple[Version, str] | None:
        """One stored version and its text, or ``None`` (an id that cannot be one is ``None`` too, never an error)."""
        if isinstance(version_id, bool) or not isinstance(version_id, int) or not 0 < version_id <= _MAX_VERSION_ID:
            return None
        if self.backend_history:
            found = self.backend.get_version(version_id)  # type: ignore[attr-defined]
            if found is not None and not isinstance(found[1], str):
                raise MemoryBackendError(f'backend "{self.backend.id}" returned {type(found[1]).__name__} as the '
                                         f"text of version {version_id}", "READ_FAILED", self.backend.id)
            return found
        from core.storage.history import versions as history

        return history.get_version(self.root, version_id)

    def restore(self, version_id: int, *, author: str | None = None, writer: Writer | None = None) -> WriteResult:
        """Restore a stored version of a memory document to its own path, through the backend.

        The write keeps the content it replaces (source ``restore``) where the backend keeps history.
        History rows are untrusted (a shared database, a copied ``history.db``): only a memory document
        of this project's layout is ever written.
        """
        found = self.get_version(version_id)
        if found is None:
            raise MemoryBackendError(f"no version {version_id} in history", "NOT_FOUND", self.backend.id)
        version, content = found
        if not isinstance(version.path, str) or not self.layout.is_document(version.path):
            raise MemoryBackendError(
                f"version {version_id} is of {version.path!r}, which is not a memory document of this project; "
                "memdesk restores memory documents only", "INVALID_CONFIG", self.backend.id)
        return self.write(version.path, content, source="restore", author=author, writer=writer)

