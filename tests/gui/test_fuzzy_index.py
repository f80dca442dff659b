"""Quick open's index narrows the last result as the query grows (after a space too) and ranks exactly as
a fresh search over every candidate would."""

from __future__ import annotations

import random

from gui.fuzzy import FuzzyIndex


def _paths() -> list[str]:
    out = [".fusion/memory/MEMORY.md", ".fusion/memory/DREAMS.md"]
    for agent in range(40):
        base = f".fusion/agent-memory/agent-{agent:02d}"
        out.append(f"{base}/MEMORY.md")
        out += [f"{base}/2026-{month:02d}-{day:02d}.md" for month in (1, 2) for day in range(1, 15)]
    return out


def test_typing_a_query_character_by_character_ranks_as_a_fresh_search():
    paths = _paths()
    typed = FuzzyIndex(paths)
    rng = random.Random(22)
    queries = ["agent07 0112", "rev mem", "mem 02", "a 1 m", "dreams", "2026 03 agent 3"]
    queries += ["".join(rng.choice("agent-memory 0123 ._/md") for _ in range(10)) for _ in range(30)]
    for query in queries:
        typed.search("")
        for end in range(1, len(query) + 1):
            got = typed.search(query[:end])
            fresh = FuzzyIndex(paths).search(query[:end])
            assert got == fresh, f"{query[:end]!r}"
    best = typed.search("agent07 0112")
    assert paths[best[0].index] == ".fusion/agent-memory/agent-07/2026-01-12.md"
