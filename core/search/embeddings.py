"""Local text embeddings for semantic search (the optional ``semantic`` install extra).

The provider is WordLlama (static token embeddings, 256 dimensions, NumPy only, no PyTorch): its
weights and tokenizer ship inside the installed ``wordllama`` wheel and are loaded from there with
downloads disabled, so nothing is fetched at run time. Without the extra, :func:`default_embedder`
gives an embedder that reports itself unavailable and search stays keyword-only.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
import time
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from core.search._numpy import numpy

log = logging.getLogger(__name__)

EMBED_BATCH = 16
SEMANTIC_EXTRA_HINT = "install the semantic extra: pip install 'memdesk[semantic]'"


class EmbeddingProvider(Protocol):
    """Turns texts into L2-normalised float32 vectors (rows of an ``(n, dim)`` NumPy array)."""

    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> Any:
        """Return the vectors of ``texts``."""


class WordLlamaProvider:
    """WordLlama ``l2_supercat`` at 256 dimensions, loaded from the installed package only."""

    model_id = "wordllama-l2_supercat-256"
    dim = 256

    def __init__(self) -> None:
        np = numpy()
        import wordllama
        from wordllama import WordLlama

        self._np = np
        package_dir = Path(wordllama.__file__).resolve().parent
        # cache_dir = the package folder: its tokenizers/ and weights/ hold the shipped files.
        self._model = WordLlama.load(config="l2_supercat", dim=self.dim, cache_dir=package_dir,
                                     disable_download=True)

    def embed(self, texts: Sequence[str]) -> Any:
        """Return normalised vectors, one row per text."""
        np = self._np
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # Batches are padded to their longest text: embedding in length order, in small batches,
        # is ~20x faster on real memory (entries from a few words to a thousand characters).
        order = np.argsort([len(t) for t in texts], kind="stable")
        vecs = self._model.embed([texts[i] for i in order], norm=True, batch_size=EMBED_BATCH)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        out[order] = vecs
        return out


class Embedder:
    """Loads a provider on first use (once), remembers why it could not, and times the load."""

    def __init__(self, factory: Callable[[], EmbeddingProvider] | None = None, *,
                 installed: Callable[[], bool] | None = None, enabled: bool = True) -> None:
        self._factory: Callable[[], EmbeddingProvider] = factory or WordLlamaProvider
        if installed is None:
            installed = semantic_installed if factory is None else (lambda: True)
        self._installed = installed
        self.enabled = enabled
        self._provider: EmbeddingProvider | None = None
        self._failed: str | None = None
        self._lock = threading.Lock()
        #: Seconds the last model load took (``None`` until loaded).
        self.load_seconds: float | None = None

    @classmethod
    def of(cls, provider: EmbeddingProvider) -> Embedder:
        """An embedder around an already built provider (tests, benchmarks)."""
        emb = cls(factory=lambda: provider)
        emb.get()
        return emb

    @property
    def available(self) -> bool:
        """Whether semantic search can run (enabled, installed, and not failed to load)."""
        return self.enabled and self._failed is None and (self._provider is not None or self._installed())

    @property
    def model_id(self) -> str | None:
        """The loaded model's id (``None`` before loading or without the extra)."""
        return self._provider.model_id if self._provider is not None else None

    def get(self) -> EmbeddingProvider | None:
        """Return the provider, loading it the first time; ``None`` when unavailable."""
        if not self.available:
            return None
        if self._provider is not None:
            return self._provider
        with self._lock:
            if self._provider is None and self._failed is None:
                start = time.perf_counter()
                try:
                    self._provider = self._factory()
                except Exception as exc:  # a broken install must not break keyword search
                    self._failed = f"the embedding model failed to load: {exc}"
                    log.warning("semantic search disabled: %s", self._failed)
                    return None
                self.load_seconds = time.perf_counter() - start
        return self._provider

    def unavailable_reason(self) -> str | None:
        """Why semantic search is off, as a short sentence; ``None`` when it is on."""
        if not self.enabled:
            return "semantic search is switched off in this backend's settings"
        if self._failed:
            return self._failed
        if not self.available:
            return f"the semantic extra is not installed ({SEMANTIC_EXTRA_HINT})"
        return None


@lru_cache(maxsize=1)
def semantic_installed() -> bool:
    """Whether the packages of the semantic extra are importable."""
    return all(importlib.util.find_spec(m) is not None for m in ("numpy", "wordllama"))


_shared: Embedder | None = None


def default_embedder() -> Embedder:
    """The process-wide embedder (the model is loaded once and shared by every backend)."""
    global _shared
    if _shared is None:
        _shared = Embedder()
    return _shared
