"""Load-rule globs match in linear time (issue 19, item 3) and mean what they meant before."""

from __future__ import annotations

import random
import re

from core.documents.globs import glob_match


def reference(glob: str, path: str) -> bool:
    """The translation the globs had (a backtracking regex): the meaning to keep, on small inputs only."""
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.match("".join(out) + r"\Z", path) is not None


def test_the_same_answers_as_before_on_thousands_of_globs_and_paths():
    rng = random.Random(19)
    pieces = ["a", "b", ".", "/", "*", "**", "**/", "?", "md", "-"]
    paths = ["", "a", "a/b", "a/b/c.md", ".fusion/memory/MEMORY.md", ".fusion/agent-memory/x/2026-01-01.md",
             "a//b", "/a", "a/", "ab/ba/aa.md", "b.md", "**", "a*b"]
    for _ in range(4000):
        glob = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 7)))
        path = rng.choice(paths) if rng.random() < 0.5 else "".join(rng.choice("ab./") for _ in range(rng.randrange(8)))
        assert glob_match(glob, path) == reference(glob, path), (glob, path)


def test_real_load_rule_globs():
    assert glob_match(".fusion/memory/*.md", ".fusion/memory/MEMORY.md")
    assert not glob_match(".fusion/memory/*.md", ".fusion/memory/sub/MEMORY.md")
    assert glob_match("**/MEMORY.md", ".fusion/agent-memory/bot/MEMORY.md")
    assert glob_match("**/MEMORY.md", "MEMORY.md")
    assert glob_match(".fusion/**", ".fusion/a/b/c")
    assert glob_match(".fusion/memory/????-??-??.md", ".fusion/memory/2026-12-01.md")


def test_hostile_globs_end_on_long_paths():
    # Each of these takes a backtracking regex exponential or high-polynomial time on these paths.
    path = "a/" * 400 + "y"
    assert not glob_match("**/" * 60 + "x", path)
    assert not glob_match("*a" * 60 + "b", "a" * 3000)
    assert not glob_match("**a" * 60 + "b", "a/" * 1500)
    assert glob_match("**/" * 60 + "y", path)
