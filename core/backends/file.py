"""The ``file`` backend (default and fallback) and the ``readonly`` backend over ``.fusion/memory.md``."""

from __future__ import annotations

from core import fileio
from core.backends.base import MemoryBackend
from core.errors import MemoryBackendError
from core.project_memory import MEMORY_FILE_PATH


class FileMemoryBackend(MemoryBackend):
    """Memory in ``.fusion/memory.md`` at the project root, written atomically under a lock."""

    id = "file"
    name = "File System"
    version = "1.0.0"
    description = "Markdown file .fusion/memory.md at the project root (Fusion's default)."
    capabilities = frozenset({"read", "write"})

    def read(self) -> str:
        """Return the file's content (``""`` when absent); ``READ_FAILED`` when it is not UTF-8."""
        root = self.require_initialized()
        return fileio.read_in_root(root, MEMORY_FILE_PATH, self.id) or ""

    def write(self, content: str, *, expected_hash: str | None = None, source: str = "write") -> None:
        """Replace the file atomically, keeping the previous version in history."""
        root = self.require_initialized()
        fileio.replace_text(root, MEMORY_FILE_PATH, content, expected_hash=expected_hash, source=source,
                            backend_id=self.id)


class ReadOnlyMemoryBackend(FileMemoryBackend):
    """The same file, never written: agents only consult it and the editor is read-only."""

    id = "readonly"
    name = "Read-Only"
    version = "1.0.0"
    description = "Reads .fusion/memory.md and refuses every write."
    capabilities = frozenset({"read"})

    def write(self, content: str, *, expected_hash: str | None = None, source: str = "write") -> None:
        """Always refuse with ``READ_ONLY``."""
        self.require_initialized()
        raise MemoryBackendError(
            'The "readonly" backend cannot write memory; switch the backend to "file" to edit it.',
            "READ_ONLY",
            self.id,
        )
