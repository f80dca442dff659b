"""Search over a project's memory: entries, the FTS5 + vector index, embeddings and fused ranking.

``chunking`` splits files into entries; ``corpus`` names (and cheaply stats) the searched files;
``watch`` tells which of them changed (inotify, so a search checks nothing it need not); ``db`` is
the shared SQLite connection; ``index`` and ``vectors`` hold the derived rows; ``fts`` builds safe
MATCH expressions; ``snippet`` marks the query words; ``embeddings`` wraps the optional local model;
``fusion`` ranks (fused score, MMR); ``service`` ties them to one project; ``derived`` is the index
memdesk keeps for backends that cannot search; ``verify`` checks an index against the content;
``relevance`` measures recall@k on a labelled set; ``types`` holds the contract's search types.

The names below are imported on first use, so importing one submodule (``core.search.types``)
does not import the others.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Embedder": "core.search.embeddings", "default_embedder": "core.search.embeddings",
    "semantic_installed": "core.search.embeddings", "Entry": "core.search.chunking",
    "chunk_markdown": "core.search.chunking", "SearchService": "core.search.service",
    "searched_files": "core.search.corpus", "derived_search": "core.search.derived",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'core.search' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
