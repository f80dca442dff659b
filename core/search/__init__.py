"""Search over a project's memory: entries, the FTS5 + vector index, embeddings and fused ranking.

``chunking`` splits files into entries; ``corpus`` names the searched files; ``index`` and
``vectors`` hold the derived rows in SQLite; ``embeddings`` wraps the optional local model;
``fusion`` ranks; ``service`` ties them to one project; ``verify`` checks an index against the content.
"""

from core.search.chunking import Entry, chunk_markdown
from core.search.corpus import searched_files
from core.search.embeddings import Embedder, default_embedder, semantic_installed
from core.search.service import SearchService

__all__ = ["Embedder", "Entry", "SearchService", "chunk_markdown", "default_embedder", "searched_files",
           "semantic_installed"]
