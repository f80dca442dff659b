"""Check a search index against the canonical content: every entry indexed, findable, and nothing else.

For each searched file the entries are cut again from the canonical text and compared with the
indexed rows (by text hash and line); each entry must be found by an FTS5 query made of its own words,
and, when semantic search is on, must have a vector whose nearest neighbour is itself.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from core.search._numpy import numpy
from core.search.chunking import chunk_markdown
from core.search.fts import query_terms
from core.search.service import SearchService

MAX_TERMS = 8


@dataclass
class VerifyReport:
    """What :func:`verify_index` checked and the problems it found (empty: the index is sound)."""

    entries: int = 0
    keyword_checked: int = 0
    vectors_checked: int = 0
    unsearchable: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems


def _entry_match(text: str, tokenizer: str) -> str | None:
    terms = [t for t in query_terms(text, tokenizer) if " " not in t][:MAX_TERMS]
    if not terms:
        return None
    return " AND ".join('"' + t.replace('"', '""') + '"' for t in terms)


def verify_index(service: SearchService) -> VerifyReport:
    """Verify ``service``'s index against the canonical content of every searched file."""
    report = VerifyReport()
    index = service.index
    docs = service.documents()
    indexed_paths = set(index.docs())
    for path in sorted(indexed_paths - docs.keys()):
        report.problems.append(f"{path}: indexed but no longer part of the memory")
    for path, text in docs.items():
        expected = Counter((e.hash, e.line) for e in chunk_markdown(text, path))
        rows = index.all_entries(path)
        actual = Counter((r.hash, r.line) for r in rows)
        for (_h, line), n in (expected - actual).items():
            report.problems.append(f"{path}:{line}: entry missing from the index ({n}x)")
        for (_h, line), n in (actual - expected).items():
            report.problems.append(f"{path}:{line}: index holds an entry that is not in the file ({n}x)")
        report.entries += len(rows)
        for row in rows:
            match = _entry_match(row.text, index.tokenizer)
            if match is None:
                report.unsearchable += 1
                continue
            report.keyword_checked += 1
            if not index.matches_entry(match, row.id):
                report.problems.append(f"{path}:{row.line}: keyword search does not find this entry")
    provider = service.provider()
    if provider is not None:
        _verify_vectors(service, provider.model_id, report)
    return report


def _verify_vectors(service: SearchService, model: str, report: VerifyReport) -> None:
    np = numpy()

    ids, mat, _pos = service.index.vectors.matrix(model)
    rows = {r.id: r for r in service.index.all_entries()}
    for rid in sorted(rows.keys() - {int(i) for i in ids}):
        report.problems.append(f"{rows[rid].path}:{rows[rid].line}: entry has no vector")
    if not len(ids):
        return
    hashes = [rows[int(i)].hash for i in ids]
    for start in range(0, len(ids), 1024):
        block = mat[start:start + 1024] @ mat.T
        best = np.argmax(block, axis=1)
        for offset, j in enumerate(best):
            i = start + offset
            report.vectors_checked += 1
            # A duplicate entry (same text) is an equally good nearest neighbour.
            if int(j) != i and hashes[int(j)] != hashes[i] and block[offset, j] > block[offset, i] + 1e-5:
                row = rows[int(ids[i])]
                report.problems.append(f"{row.path}:{row.line}: semantic search does not find this entry")
