"""Globs over project-relative POSIX paths, as load rules write them ('**/' spans folders, '*' one segment).

Kept apart from :mod:`core.documents.load_rules` (pydantic models) so that an append's budget check matches
paths without importing pydantic. Load rules are the user's (or a cloned project's) input, so a glob
is matched by simulating its automaton over the path, one character at a time: time grows with the
path times the glob, never exponentially (a backtracking regex of ``**/**/**/…`` or ``*a*a*a…b``
takes minutes on a long path).
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["glob_match"]

# Tokens: a literal character, "?" (one character but '/'), "*" (a run without '/'), "**" (any run),
# "**/" (zero or more whole folders: non-empty segments each followed by '/').
_ONE, _STAR, _ANY, _FOLDERS = "?", "*", "**", "**/"


@lru_cache(maxsize=256)
def _tokens(glob: str) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            tok = (_FOLDERS, "")
            i += 3
        elif glob.startswith("**", i):
            tok = (_ANY, "")
            i += 2
        elif glob[i] == "*":
            tok = (_STAR, "")
            i += 1
        elif glob[i] == "?":
            tok = (_ONE, "")
            i += 1
        else:
            tok = ("", glob[i])
            i += 1
        if tok[0] and out and out[-1] == tok and tok[0] != _ONE:
            continue  # "**/**/" or "**" twice match what one does: one state instead of two
        out.append(tok)
    return tuple(out)


def _closure(states: set[tuple[int, int]], toks: tuple[tuple[str, str], ...]) -> set[tuple[int, int]]:
    """Add the states reached without reading a character (a star, '**' or '**/' that matches nothing)."""
    todo = list(states)
    while todo:
        i, sub = todo.pop()
        if sub == 0 and i < len(toks) and toks[i][0] in (_STAR, _ANY, _FOLDERS) and (i + 1, 0) not in states:
            states.add((i + 1, 0))
            todo.append((i + 1, 0))
    return states


def glob_match(glob: str, relpath: str) -> bool:
    """Match a project-relative POSIX path against a glob ('**/' spans folders, '*' one segment)."""
    toks = _tokens(glob)
    end = len(toks)
    states = _closure({(0, 0)}, toks)
    for ch in relpath.replace("\\", "/"):
        nxt: set[tuple[int, int]] = set()
        slash = ch == "/"
        for i, sub in states:
            if i == end:
                continue
            kind, lit = toks[i]
            if not kind:
                if ch == lit:
                    nxt.add((i + 1, 0))
            elif kind == _ONE:
                if not slash:
                    nxt.add((i + 1, 0))
            elif kind == _STAR:
                if not slash:
                    nxt.add((i, 0))
            elif kind == _ANY:
                nxt.add((i, 0))
            elif slash:  # "**/": a '/' ends a segment only when one was started
                if sub == 1:
                    nxt.add((i, 0))
            else:
                nxt.add((i, 1))
        if not nxt:
            return False
        states = _closure(nxt, toks)
    return (end, 0) in states
