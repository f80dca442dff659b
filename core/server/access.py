"""What a token (or ``memdesk mcp``'s flags) lets a client do: a scope, the projects, the document paths.

Scopes are ordered: ``read`` (read documents, search, list), ``append`` (read, and add entries),
``write`` (everything: replace, edit, remove entries, settings). ``projects`` limits which served
projects the caller sees at all (by key or folder; empty: all). ``paths`` are globs over
project-relative POSIX paths (``*`` within a folder, ``?`` one character, ``**`` across folders) that
limit the documents the caller may change at its scope (for a ``read`` token: the documents it may
read). A token made before scopes existed has the full ``write`` scope and says so.

Globs are matched by simulating their automaton over the path (the set of glob positions reached so
far), so a match takes time proportional to the path's length times the glob's, whatever the glob:
no backtracking, no regular expression built from a token's text.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

__all__ = ["FULL", "LEVELS", "Access", "ScopeError", "check_glob", "glob_automaton", "glob_matches", "hard_links", "real_rel"]

LEVELS = ("read", "append", "write")
_RANK = {name: i for i, name in enumerate(LEVELS)}


class ScopeError(PermissionError):
    """The caller's scope does not allow this; the message names the scope and what it allows."""


# -- globs -----------------------------------------------------------------------------------------
_LIT, _ONE, _STAR, _ANY, _SKIP2 = range(5)


@lru_cache(maxsize=512)
def _compile(glob: str) -> tuple[tuple[int, str], ...]:
    """The glob as tokens: literal, ``?``, ``*`` (no ``/``), ``**`` (anything); ``**/`` is an optional
    ``**`` + ``/`` pair (a ``_SKIP2`` marker lets the automaton jump over both)."""
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out += [(_SKIP2, ""), (_ANY, ""), (_LIT, "/")]
            i += 3
        elif glob.startswith("**", i):
            out.append((_ANY, ""))
            i += 2
        elif glob[i] == "*":
            out.append((_STAR, ""))
            i += 1
        elif glob[i] == "?":
            out.append((_ONE, ""))
            i += 1
        else:
            out.append((_LIT, glob[i]))
            i += 1
    return tuple(out)


def _closure(tokens: tuple[tuple[int, str], ...], states: set[int]) -> set[int]:
    todo, seen = list(states), set(states)
    while todo:
        i = todo.pop()
        if i >= len(tokens):
            continue
        kind = tokens[i][0]
        nxt = [i + 3] if kind == _SKIP2 else [i + 1] if kind in (_STAR, _ANY) else []
        if kind == _SKIP2:
            nxt.append(i + 1)
        for j in nxt:
            if j not in seen:
                seen.add(j)
                todo.append(j)
    return seen


class _Glob:
    """One glob's automaton, its steps remembered as they are taken (a lazy DFA over sets of glob positions):
    a listing of 20,000 documents matches each path with one dict look-up a character. At most
    ``_MAX_STEPS`` steps are kept per glob; past that they are worked out each time, as before."""

    __slots__ = ("tokens", "start", "steps")

    def __init__(self, glob: str) -> None:
        self.tokens = _compile(glob)
        self.start = frozenset(_closure(self.tokens, {0}))
        self.steps: dict[tuple[frozenset[int], str], frozenset[int]] = {}

    def step(self, states: frozenset[int], ch: str) -> frozenset[int]:
        """The positions reached from ``states`` reading ``ch`` (empty: no match possible)."""
        got = self.steps.get((states, ch))
        if got is not None:
            return got
        tokens = self.tokens
        nxt: set[int] = set()
        for i in states:
            if i >= len(tokens):
                continue
            kind, lit = tokens[i]
            if kind == _LIT and lit == ch or kind == _ONE and ch != "/":
                nxt.add(i + 1)
            elif kind == _STAR and ch != "/" or kind == _ANY:
                nxt.add(i)
        got = frozenset(_closure(tokens, nxt)) if nxt else frozenset()
        if len(self.steps) < _MAX_STEPS:
            self.steps[(states, ch)] = got
        return got

    def run(self, states: frozenset[int], text: str) -> frozenset[int]:
        """The positions reached from ``states`` reading ``text``."""
        for ch in text:
            states = self.step(states, ch)
            if not states:
                break
        return states

    def accepts(self, states: frozenset[int]) -> bool:
        return len(self.tokens) in states


_MAX_STEPS = 4096


@lru_cache(maxsize=512)
def glob_automaton(glob: str) -> _Glob:
    """The (shared, remembered) automaton of ``glob``."""
    return _Glob(glob)


def glob_matches(glob: str, path: str) -> bool:
    """Whether the project-relative POSIX ``path`` matches ``glob`` (whole path)."""
    g = glob_automaton(glob)
    return g.accepts(g.run(g.start, path))


def check_glob(glob: str) -> str:
    """``glob`` when it can name documents of a project; ``ValueError`` naming the problem otherwise."""
    g = glob.strip()
    if not g:
        raise ValueError("an empty --path glob names nothing")
    if len(g) > 256:
        raise ValueError(f"--path glob is {len(g)} characters; at most 256")
    if g.startswith("/") or "\\" in g or ":" in g[:2]:
        raise ValueError(f"--path {g!r} must be relative to the project (like .fusion/agent-memory/bot/**)")
    if ".." in g.split("/"):
        raise ValueError(f"--path {g!r} must not contain '..'")
    if any(ord(c) < 32 for c in g):
        raise ValueError(f"--path {g!r} holds a control character")
    return g


def real_rel(root: Path | str, rel: str) -> str | None:
    """The project-relative path the document ``rel`` really is, links followed (a link inside the project
    names another document); ``None`` when it leads out of the project."""
    base = os.path.realpath(root)
    real = os.path.realpath(os.path.join(base, rel))
    if not real.startswith(base + os.sep):
        return None
    return os.path.relpath(real, base).replace(os.sep, "/")


def hard_links(root: Path | str, rel: str) -> int:
    """How many other hard links the regular file ``rel`` of the project has (0: none, missing, or not a file)."""
    try:
        st = os.stat(os.path.join(root, rel))
    except OSError:
        return 0
    return st.st_nlink - 1 if stat.S_ISREG(st.st_mode) else 0


# -- access ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Access:
    """A caller's scope: ``scope`` in :data:`LEVELS`, ``projects`` (keys or folders; empty: all), ``paths``
    (globs; empty: all documents)."""

    name: str | None = None
    scope: str = "write"
    projects: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    legacy: bool = False

    def describe(self) -> str:
        """One line: ``append on projects alpha, paths .fusion/agent-memory/bot/**``."""
        if self.legacy:
            return "full (write on all projects and paths; created before scopes)"
        where = [f"projects {', '.join(self.projects)}" if self.projects else "all projects",
                 f"paths {', '.join(self.paths)}" if self.paths else "all paths"]
        return f"{self.scope} on {'; '.join(where)}"

    def _who(self) -> str:
        return f"token {self.name!r}" if self.name else "this MCP server"

    def sees_project(self, key: str, root: Path | str) -> bool:
        """Whether the caller may use the project at all."""
        if not self.projects:
            return True
        if key in self.projects:
            return True
        real = str(Path(root).resolve())
        return any(p == real for p in self.projects)

    def path_ok(self, rel: str) -> bool:
        """Whether ``rel`` is one of the caller's paths (any path when it has none)."""
        return not self.paths or any(glob_matches(g, rel) for g in self.paths)

    def can(self, need: str, rel: str | None = None, root: Path | str | None = None) -> bool:
        """Whether the caller may ``need`` (read/append/write) the document ``rel`` (or the project: ``None``).
        With the project's ``root``, a document that is a link (or lies under one) must match the caller's
        globs where it leads too: a link in an agent's folder to the project's memory is not the agent's."""
        if _RANK[self.scope] < _RANK[need]:
            return False
        if rel is None or not self.paths:
            return True
        # Globs limit what the caller changes at its scope; a read token's globs limit what it reads.
        if need == "read" and self.scope != "read":
            return True
        if not self.path_ok(rel):
            return False
        if root is None:
            return True
        real = real_rel(root, rel)
        if real is None or real != rel and not self.path_ok(real):
            return False
        # A read token's document with other hard links may be a file outside its paths under another name
        # (a clone cannot carry one, but a local ``ln`` can); the file layer refuses such a file for writes too.
        return need != "read" or hard_links(root, rel) == 0

    def check_project(self, key: str, root: Path | str) -> None:
        """Raise :class:`ScopeError` when the caller may not use project ``key``."""
        if not self.sees_project(key, root):
            raise ScopeError(f"{self._who()} has scope {self.describe()}: project {key!r} is not one of them; "
                             "nothing was done")

    def check(self, need: str, key: str, root: Path | str, rel: str | None = None) -> None:
        """Raise :class:`ScopeError` unless the caller may ``need`` the document ``rel`` of project ``key``."""
        self.check_project(key, root)
        if _RANK[self.scope] < _RANK[need]:
            raise ScopeError(f"{self._who()} has scope {self.describe()}: it may not {need}"
                             f"{' ' + rel if rel else ''}; nothing was done")
        if not self.can(need, rel):
            raise ScopeError(f"{self._who()} has scope {self.describe()}: {rel} is not one of its paths; nothing "
                             "was done")
        if rel is not None and not self.can(need, rel, root):
            others = hard_links(root, rel) if need == "read" else 0
            if others and real_rel(root, rel) is not None:
                raise ScopeError(f"{self._who()} has scope {self.describe()}: {rel} has {others} other hard link(s), "
                                 "so it may be a file outside its paths under another name; nothing was read")
            raise ScopeError(f"{self._who()} has scope {self.describe()}: {rel} is a link to "
                             f"{real_rel(root, rel) or 'outside the project'}, not one of its paths; nothing was done")


FULL = Access()
