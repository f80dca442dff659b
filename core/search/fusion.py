"""Fused ranking of keyword and vector candidates (the seed 003 L2 stages that apply to one project).

Stages kept: (1) vector seed — the top :data:`SEED_K` entries by cosine similarity; keyword seed —
the top :data:`SEED_K` by BM25 (standing in for the graph expansion a single memory file has no data
for); (5) fused score ``1.0 × vector + 0.8 × keyword`` over the union, each normalised to the best
candidate and the sum divided by the weights so it stays in 0..1; (6) duplicate removal — identical
entries are kept once, then MMR with λ = 0.7 orders the rest so near-duplicates sink. Stages 2–4
(graph hops, superseded filter) and the importance/recency/affinity/contradiction terms need data
a memory file does not have and are not applied.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from core.search._numpy import numpy

SEED_K = 40
VECTOR_WEIGHT = 1.0
KEYWORD_WEIGHT = 0.8
MMR_LAMBDA = 0.7


def relative(values: Mapping[int, float]) -> dict[int, float]:
    """Scale non-negative ``values`` so the best is 1.0 (all zero stays zero)."""
    best = max(values.values(), default=0.0)
    if best <= 0:
        return {k: 0.0 for k in values}
    return {k: max(0.0, v) / best for k, v in values.items()}


def fuse(vector: float, keyword: float) -> float:
    """Return the fused score in 0..1 of normalised vector and keyword scores."""
    return (VECTOR_WEIGHT * vector + KEYWORD_WEIGHT * keyword) / (VECTOR_WEIGHT + KEYWORD_WEIGHT)


_SPACE = re.compile(r"\s+")


def normalised_text(text: str) -> str:
    """Text compared for exact-duplicate removal: case and runs of white space ignored."""
    return _SPACE.sub(" ", text).strip().lower()


def drop_duplicates(order: Sequence[int], texts: Mapping[int, str]) -> list[int]:
    """Keep the first of each group of identical entries in ``order``."""
    seen: set[str] = set()
    out = []
    for cid in order:
        key = normalised_text(texts[cid])
        if key not in seen:
            seen.add(key)
            out.append(cid)
    return out


def mmr(order: Sequence[int], relevance: Mapping[int, float], vectors: Any, k: int,
        lam: float = MMR_LAMBDA) -> list[tuple[int, float]]:
    """Maximal marginal relevance: pick ``k`` of ``order`` greedily by ``lam·rel − (1−lam)·max sim``.

    ``vectors`` holds one L2-normalised row per id of ``order`` (same order). Returns ``(id, mmr)``.
    """
    np = numpy()

    n = len(order)
    if n == 0 or k <= 0:
        return []
    sims = vectors @ vectors.T
    rel = np.array([relevance[c] for c in order], dtype=np.float32)
    max_sim = np.full(n, -np.inf, dtype=np.float32)
    chosen = np.zeros(n, dtype=bool)
    out: list[tuple[int, float]] = []
    for _ in range(min(k, n)):
        penalty = np.where(np.isfinite(max_sim), max_sim, 0.0)
        score = lam * rel - (1.0 - lam) * penalty
        score[chosen] = -np.inf
        best = int(np.argmax(score))
        chosen[best] = True
        out.append((order[best], float(score[best])))
        max_sim = np.maximum(max_sim, sims[best])
    return out
