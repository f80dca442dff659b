"""Globs over project-relative POSIX paths, as load rules write them ('**/' spans folders, '*' one segment).

Kept apart from :mod:`core.load_rules` (pydantic models) so that an append's budget check matches
paths without importing pydantic.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["glob_match"]


@lru_cache(maxsize=256)
def _glob_regex(glob: str) -> re.Pattern[str]:
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
    return re.compile("".join(out) + r"\Z")


def glob_match(glob: str, relpath: str) -> bool:
    """Match a project-relative POSIX path against a glob ('**/' spans folders, '*' one segment)."""
    return _glob_regex(glob).match(relpath.replace("\\", "/")) is not None
