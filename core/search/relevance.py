"""Search relevance on a labelled set: recall@k of a backend over a project (used by tests and the benchmark).

A label names a file and a piece of text; the relevant entry is the entry of that file containing
the text. recall@k of a query is the share of its relevant entries among the first k results; the
set's recall@k is the mean over queries.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.search.types import MemorySearchOptions

if TYPE_CHECKING:
    from typing import Protocol

    from core.search.types import MemorySearchResult

    class Searchable(Protocol):
        """What recall is measured on: a backend's ``search`` (the backends sit above search)."""

        def search(self, query: str, options: MemorySearchOptions | None = None) -> list[MemorySearchResult]: ...
from core.search.chunking import chunk_markdown


@dataclass
class RecallReport:
    """recall@k of one mode, with the queries that missed something."""

    mode: str
    k: int
    recall: float
    queries: int
    misses: list[str] = field(default_factory=list)


def load_labels(path: Path) -> list[dict[str, Any]]:
    """Return the labelled queries of a ``search_labels.json`` file."""
    return json.loads(path.read_text(encoding="utf-8"))["queries"]


def relevant_entries(root: Path, label: dict[str, Any]) -> set[tuple[str, int]]:
    """The ``(file, line)`` of each entry a label marks relevant; raises when a label matches nothing."""
    out = set()
    for rel in label["relevant"]:
        text = (root / rel["file"]).read_text(encoding="utf-8")
        lines = [e.line for e in chunk_markdown(text, rel["file"]) if rel["contains"] in e.text]
        if len(lines) != 1:
            raise ValueError(f"label {rel['contains']!r} matches {len(lines)} entries of {rel['file']}")
        out.add((rel["file"], lines[0]))
    return out


def recall_at_k(backend: Searchable, root: Path, labels: list[dict[str, Any]], mode: str,
                k: int = 5) -> RecallReport:
    """Run every labelled query through ``backend`` in ``mode`` and return recall@k."""
    total = 0.0
    misses = []
    for label in labels:
        wanted = relevant_entries(root, label)
        results = backend.search(label["query"], MemorySearchOptions(limit=k, mode=mode))  # type: ignore[arg-type]
        got = {(r.file, r.line_number) for r in results}
        found = len(wanted & got)
        total += found / len(wanted)
        if found < len(wanted):
            misses.append(f"{label['query']!r}: {found}/{len(wanted)}")
    return RecallReport(mode, k, total / max(1, len(labels)), len(labels), misses)
