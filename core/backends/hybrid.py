"""The ``hybrid`` backend (seed 000 Appendix B.2): the file stays canonical, search fuses keyword and meaning.

Reads and writes are the ``file`` backend's (``.fusion/memory.md``, atomic, locked, history first).
A keyword index (FTS5) and a semantic index (vectors from a small local embedding model) live in
``.fusion/memdesk/search.db`` and are kept in step on every write and, for changes made outside
memdesk, whenever the memory is read or searched (a content-hash comparison). The semantic part is
the optional ``semantic`` install extra; without it the backend says it is keyword-only, in the
picker (:meth:`status_note`) and with the results (:meth:`search_note`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from core.backends.base import BackendSettings, MemorySearchOptions, MemorySearchResult
from core.backends.file import FileMemoryBackend
from core.documents.layout import SEED_MEMORY as MEMORY_FILE_PATH
from core.search.db import Database
from core.search.embeddings import Embedder, default_embedder
from core.search.service import SearchService
from core.storage import fileio
from core.storage.fileio import MEMDESK_DIR

INDEX_DB = f"{MEMDESK_DIR}/search.db"


class HybridSettings(BackendSettings):
    """Settings of the ``hybrid`` backend."""

    semantic: bool = Field(True, title="Semantic search",
                           description="Use the local embedding model (when the semantic extra is installed).")
    tokenizer: Literal["porter", "unicode61", "trigram"] = Field(
        "porter", title="Keyword tokenizer",
        description="porter: English word stems; unicode61: exact words; trigram: any part of a word.")


class HybridMemoryBackend(FileMemoryBackend):
    """``.fusion/memory.md`` as the file backend keeps it, plus fused keyword + semantic search."""

    id = "hybrid"
    name = "Hybrid (file + search)"
    version = "1.0.0"
    description = ("The file .fusion/memory.md stays canonical; FTS5 keyword and local semantic indexes are "
                   "kept in step and their results fused.")
    capabilities = frozenset({"read", "write", "search"})
    settings_model = HybridSettings

    def __init__(self, config: Mapping[str, Any] | None = None, *, embedder: Embedder | None = None) -> None:
        super().__init__(config)
        self._embedder = embedder
        self.search_service: SearchService | None = None

    def _make_embedder(self) -> Embedder | None:
        settings: HybridSettings = self.settings  # type: ignore[assignment]
        emb = self._embedder if self._embedder is not None else default_embedder()
        return emb if settings.semantic else Embedder(enabled=False)

    def on_initialize(self) -> None:
        """Open (or create) the index database; indexing happens on first read or search."""
        assert self.root is not None
        settings: HybridSettings = self.settings  # type: ignore[assignment]
        db = Database(fileio.resolve_in_root(self.root, INDEX_DB), self.id)
        self.search_service = SearchService(self.root, db, tokenizer=settings.tokenizer,
                                            embedder=self._make_embedder())

    def _service(self) -> SearchService:
        self.require_initialized()
        assert self.search_service is not None
        return self.search_service

    def read(self) -> str:
        """Read the file; re-index it first when it changed outside memdesk."""
        text = super().read()
        service = self._service()
        path = self.memory_path or MEMORY_FILE_PATH
        doc = service.index.docs().get(path)
        if doc is None or doc.hash != fileio.content_hash(text):
            service.sync_text(path, text)
        return text

    def write(self, content: str, *, expected_hash: str | None = None, source: str = "write",
              author: str | None = None) -> None:
        """Write the file (history first), then bring both indexes in step with it."""
        super().write(content, expected_hash=expected_hash, source=source, author=author)
        self._service().sync_text(self.memory_path or MEMORY_FILE_PATH, content)

    def search(self, query: str, options: MemorySearchOptions | None = None) -> list[MemorySearchResult]:
        """Fused keyword + semantic search (keyword only without the extra) over every searched file."""
        return self._service().search(query, options)

    def search_note(self, mode: str) -> str | None:
        """The note to show with results of ``mode`` (set when semantic search is unavailable)."""
        return self.search_service.note(mode) if self.search_service is not None else None

    def status_note(self) -> str | None:
        """"keyword-only" and why, when the semantic model cannot be used."""
        settings: HybridSettings = self.settings  # type: ignore[assignment]
        emb = self._embedder if self._embedder is not None else default_embedder()
        if not settings.semantic:
            return "keyword-only: semantic search is switched off in the settings"
        reason = emb.unavailable_reason()
        return f"keyword-only: {reason}" if reason else "keyword + semantic search"

    def shutdown(self) -> None:
        """Close the index database."""
        super().shutdown()
        if self.search_service is not None:
            self.search_service.close()
            self.search_service = None
