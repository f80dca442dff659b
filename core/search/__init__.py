"""Search over a project's memory: entries, the FTS5 + vector index, embeddings and fused ranking.

``chunking`` splits files into entries; ``corpus`` names (and cheaply stats) the searched files;
``db`` is the shared SQLite connection; ``index`` and ``vectors`` hold the derived rows; ``fts``
builds safe MATCH expressions; ``snippet`` marks the query words; ``embeddings`` wraps the optional
local model; ``fusion`` ranks (fused score, MMR); ``service`` ties them to one project; ``verify``
checks an index against the content; ``relevance`` measures recall@k on a labelled set.
"""

from core.search.chunking import Entry, chunk_markdown
from core.search.corpus import searched_files
from core.search.embeddings import Embedder, default_embedder, semantic_installed
from core.search.service import SearchService

__all__ = ["Embedder", "Entry", "SearchService", "chunk_markdown", "default_embedder", "searched_files",
           "semantic_installed"]
