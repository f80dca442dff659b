"""The searching backends the search tests run against, by kind.

``sqlite``; ``hybrid`` with the semantic model (the test is skipped when the extra is not installed);
``hybrid-keyword-only``, the hybrid backend as it runs without the extra.
"""

from __future__ import annotations

import pytest

from core.backends import MemoryBackend
from core.backends.hybrid import HybridMemoryBackend
from core.backends.sqlite import SqliteMemoryBackend
from core.search.embeddings import Embedder, semantic_installed

SEARCHING_KINDS = ("sqlite", "hybrid", "hybrid-keyword-only")


def make_searching_backend(kind: str) -> MemoryBackend:
    """A fresh, uninitialized backend of ``kind`` (one of ``SEARCHING_KINDS``)."""
    if kind == "sqlite":
        return SqliteMemoryBackend()
    if kind == "hybrid":
        if not semantic_installed():
            pytest.skip("the semantic extra is not installed")
        return HybridMemoryBackend()
    return HybridMemoryBackend(embedder=Embedder(installed=lambda: False))
