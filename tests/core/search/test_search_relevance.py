"""Relevance on the labelled set (tests/data/search_labels.json) over the sample project: recall@5."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.backends.hybrid import HybridMemoryBackend
from core.backends.sqlite import SqliteMemoryBackend
from core.search.embeddings import Embedder, semantic_installed
from core.search.relevance import load_labels, recall_at_k, relevant_entries
from tests.conftest import REPO, SAMPLE

LABELS = REPO / "tests" / "data" / "search_labels.json"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("relevance") / "sample"
    shutil.copytree(SAMPLE, dest)
    return dest


def test_labels_are_well_formed(root: Path):
    labels = load_labels(LABELS)
    assert len(labels) >= 30
    for label in labels:
        assert relevant_entries(root, label)  # every label points at exactly one entry


def test_keyword_recall_at_5(root: Path):
    for backend in (SqliteMemoryBackend(), HybridMemoryBackend(embedder=Embedder(installed=lambda: False))):
        backend.initialize({"mirror": False} if backend.id == "sqlite" else {}, root)
        try:
            report = recall_at_k(backend, root, load_labels(LABELS), "keyword")
        finally:
            backend.shutdown()
        assert report.recall >= 0.9, report.misses


@pytest.mark.skipif(not semantic_installed(), reason="the semantic extra is not installed")
def test_semantic_and_hybrid_recall_at_5(root: Path):
    backend = HybridMemoryBackend()
    backend.initialize({}, root)
    try:
        semantic = recall_at_k(backend, root, load_labels(LABELS), "semantic")
        hybrid = recall_at_k(backend, root, load_labels(LABELS), "hybrid")
    finally:
        backend.shutdown()
    assert semantic.recall >= 0.8, semantic.misses
    assert hybrid.recall >= 0.88, hybrid.misses
