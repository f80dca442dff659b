"""The ``file`` backend (default and fallback), ``readonly``, and ``qmd`` (current Fusion's layered files).

``file`` and ``readonly`` keep the layout's long-term document: ``.fusion/memory.md`` in the seed
layout, ``.fusion/memory/MEMORY.md`` in the layered one. ``qmd`` is the id current Fusion uses by
default in a layered project: the same files, searched with memdesk's own index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.backends.base import MemoryBackend
from core.errors import MemoryBackendError
from core.storage import docio

if TYPE_CHECKING:
    from core.search.types import MemorySearchOptions, MemorySearchResult


class FileMemoryBackend(MemoryBackend):
    """Memory in the layout's long-term markdown file, written atomically under a lock."""

    id = "file"
    name = "File System"
    version = "1.0.0"
    description = "Markdown files under .fusion/ at the project root (Fusion's file backend)."
    capabilities = frozenset({"read", "write"})
    file_canonical = True

    def read(self) -> str:
        """Return the file's content (``""`` when absent); ``READ_FAILED`` when it is not UTF-8."""
        root = self.require_initialized()
        assert self.memory_path is not None
        return docio.read_document(root, self.memory_path, self.id) or ""

    def write(self, content: str, *, expected_hash: str | None = None, source: str = "write",
              author: str | None = None) -> None:
        """Replace the file atomically, keeping the previous version in history."""
        root = self.require_initialized()
        assert self.memory_path is not None
        docio.replace_document(root, self.memory_path, content, expected_hash=expected_hash, source=source,
                               author=author, backend_id=self.id)

    write.plain_file_write = True  # type: ignore[attr-defined]  # core.storage.pipeline may write the file directly


class ReadOnlyMemoryBackend(FileMemoryBackend):
    """The same files, never written: agents only consult them and the editor is read-only."""

    id = "readonly"
    name = "Read-Only"
    version = "1.0.0"
    description = "Reads the memory files and refuses every write."
    capabilities = frozenset({"read"})

    def write(self, content: str, *, expected_hash: str | None = None, source: str = "write",
              author: str | None = None) -> None:
        """Always refuse with ``READ_ONLY``."""
        self.require_initialized()
        self.require_writable()

    def require_writable(self) -> None:
        """Refuse with ``READ_ONLY``: why (a team binding not confirmed yet, say), when memdesk chose read-only."""
        if self.fallback_reason:
            raise MemoryBackendError(f"memory is read-only here: {self.fallback_reason}; nothing was written",
                                     "READ_ONLY", self.id)
        raise MemoryBackendError(
            'The "readonly" backend cannot write memory; switch the backend to "file" to edit it.',
            "READ_ONLY",
            self.id,
        )


class QmdMemoryBackend(FileMemoryBackend):
    """Current Fusion's default in a layered project: the layered files, searched by memdesk's index."""

    id = "qmd"
    name = "QMD (Quantized Memory Distillation)"
    version = "1.0.0"
    description = ("Current Fusion's layered files (.fusion/memory/: MEMORY.md, daily notes, DREAMS.md, "
                   "per-agent memory); memdesk searches them with its own index.")
    capabilities = frozenset({"read", "write", "search"})

    def search(self, query: str, options: MemorySearchOptions | None = None) -> list[MemorySearchResult]:
        """Keyword search over every document of the project (memdesk's derived index)."""
        root = self.require_initialized()
        from core.search.derived import derived_search  # late: search is heavy and optional per command

        return derived_search(root, query, options)

    def search_note(self, mode: str) -> str | None:
        """Set when ``mode`` asked for meaning: memdesk's own index searches by keyword only."""
        from core.search.derived import derived_note

        return derived_note(self.id, mode)
