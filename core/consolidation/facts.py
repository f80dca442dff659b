"""Distinctive facts of memory text, and the conservation check: which of them a consolidation would lose.

A *fact* is a piece of text an agent could not rebuild from prose: an identifier (``camelCase``,
``snake_case``, ``CONSTANT_CASE``, ``name()``, ``dotted.names``), a path, a command or any other
inline code span, a number (with its unit), a task id (``FN-1734``), a URL or a quoted string. The
check lists every fact of the old documents found nowhere in the new ones, unless the entry holding it
is marked dropped (or superseded) in the ledger. Extraction is a few linear regex passes (no
backtracking constructs), so a 1 MiB document is checked well under a second (``python -m bench
consolidation`` measures it).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = ["Fact", "LostFact", "conservation_check", "extract_facts", "fact_set"]

FactKind = Literal["url", "code", "task", "path", "quoted", "number", "identifier"]

#: Code spans, quoted strings and URLs are found by pattern; every other fact is a token (a run of
#: characters other than spaces, quotes, brackets and punctuation that separates words) classified by
#: cheap string tests: seven regex passes over 1 MiB took 0.36 s, one token pass and two spans 0.1 s.
_SPANS: tuple[tuple[FactKind, re.Pattern[str]], ...] = (
    ("code", re.compile(r"`([^`\n]{2,200})`")),
    ("quoted", re.compile(r"\"([^\"\n]{3,120})\"|“([^”\n]{3,120})”")),
)
_TOKEN_RE = re.compile(r"[^\s`'\"(){}\[\],;<>|*=!?]+")
_TASK_RE = re.compile(r"[A-Z][A-Z0-9]{1,9}-[0-9]{1,7}")
_NUMBER_RE = re.compile(r"[0-9][0-9,._:-]*(?:ms|s|KB|MB|GB|KiB|MiB|GiB|%|px|x|h|m|d)?")
_PATH_RE = re.compile(r"(?:~|\.{1,2})?/?(?:[\w@.+-]+/)+[\w@.+-]*\w/?")
_IDENT_RE = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*(?:\(\))?")
_TRIVIAL = frozenset({"e.g", "i.e", "etc", "vs"})


@dataclass(frozen=True)
class Fact:
    """One distinctive fact and where it sits (0-based line in its text)."""

    text: str
    kind: FactKind
    line: int


@dataclass(frozen=True)
class LostFact:
    """A fact of the old text found nowhere in the result and not marked dropped."""

    fact: str
    kind: FactKind
    path: str
    line: int  # 1-based
    entry: str  # the old entry's first line, to show where it was

    def to_json(self) -> dict[str, object]:
        """camelCase JSON."""
        return {"fact": self.fact, "kind": self.kind, "path": self.path, "line": self.line, "entry": self.entry}


def _line_starts(text: str) -> list[int]:
    starts = [0]
    find = text.find
    pos = find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = find("\n", pos + 1)
    return starts


def _token_kind(tok: str) -> FactKind | None:
    """What kind of fact a bare token is, or ``None`` for an ordinary word."""
    if tok.startswith(("http://", "https://")):
        return "url" if len(tok) > 10 else None
    if "/" in tok:
        return "path" if _PATH_RE.fullmatch(tok) and any(c.isalnum() for c in tok) else None
    first = tok[0]
    if "0" <= first <= "9":
        return "number" if _NUMBER_RE.fullmatch(tok) else None
    if "-" in tok and first.isupper() and _TASK_RE.fullmatch(tok):
        return "task"
    if not _IDENT_RE.fullmatch(tok):
        return None
    if "_" in tok or "." in tok or tok.endswith("()"):
        return "identifier"
    rest = tok[1:]
    if any(c.isupper() for c in rest) and any(c.islower() for c in tok):
        return "identifier"  # camelCase, PascalCase with an inner capital
    return None


_KINDS: dict[str, tuple[str, FactKind] | None] = {}  # token -> fact; most tokens are words seen again and again
_KINDS_MAX = 200_000


def _token_fact(raw: str) -> tuple[str, FactKind] | None:
    found = _KINDS.get(raw, False)
    if found is not False:
        return found  # type: ignore[return-value]
    if raw.isalpha() and (raw.islower() or raw.istitle() or raw.isupper()):
        found = None
    else:
        tok = raw.strip(".:-")
        kind = _token_kind(tok) if len(tok) >= 2 and tok.casefold() not in _TRIVIAL else None
        found = (tok, kind) if kind is not None else None
    if len(_KINDS) < _KINDS_MAX:
        _KINDS[raw] = found
    return found


def extract_facts(text: str) -> Iterator[Fact]:
    """Every distinctive fact of ``text`` with its line (a fact inside another, e.g. a path in code, too)."""
    starts = _line_starts(text)
    line_of = bisect.bisect_right
    for kind, pattern in _SPANS:
        for m in pattern.finditer(text):
            value = (m.group(1) or (m.group(2) if m.lastindex and m.lastindex > 1 else None) or "").strip()
            if len(value) >= 2:
                yield Fact(value, kind, line_of(starts, m.start()) - 1)
    for m in _TOKEN_RE.finditer(text):
        found = _token_fact(m.group(0))
        if found is not None:
            yield Fact(found[0], found[1], line_of(starts, m.start()) - 1)


def fact_set(text: str) -> set[str]:
    """The distinct facts of ``text`` (no line numbers: the fast path for many small texts)."""
    out: set[str] = set()
    for _kind, pattern in _SPANS:
        for m in pattern.finditer(text):
            value = (m.group(1) or (m.group(2) if m.lastindex and m.lastindex > 1 else None) or "").strip()
            if len(value) >= 2:
                out.add(value)
    for raw in _TOKEN_RE.findall(text):
        found = _token_fact(raw)
        if found is not None:
            out.add(found[0])
    return out


def conservation_check(old: Mapping[str, str], new: Mapping[str, str],
                       accounted: Mapping[str, Iterable[tuple[int, int]]] | None = None,
                       entry_of: Mapping[str, Mapping[int, str]] | None = None,
                       ignore_lines: frozenset[str] = frozenset(), counts: dict[str, int] | None = None
                       ) -> list[LostFact]:
    """The facts of the ``old`` documents (path → text) found in none of the ``new`` ones.

    ``new`` holds every document after the change (unchanged ones too, so a fact that moved from a
    daily note into DREAMS.md is found). ``accounted`` gives per path the old line ranges (0-based,
    end exclusive) of entries the ledger marks dropped or superseded: their facts are not counted as
    lost. Facts on a line equal to one of ``ignore_lines`` (Fusion's scaffold comments) are not memory.
    Each lost fact is reported once, at its first line. ``counts["total"]`` receives how many distinct
    facts the changed old documents hold.
    """
    new_texts = list(new.values())
    known: set[str] = set()
    for text in new_texts:
        known |= fact_set(text)
    changed = {path: text for path, text in old.items() if new.get(path) != text}  # unchanged: nothing lost
    total: set[str] = set()
    for text in changed.values():
        total |= fact_set(text)
    missing = total - known
    if missing:  # a fact may survive inside a longer token or span: look for its text itself
        joined = "\n".join(new_texts)
        missing = {fact for fact in missing if fact not in joined}
    lost: list[LostFact] = []
    seen: set[str] = set()
    for path, text in changed.items() if missing else ():  # only now are the lines worth finding
        ranges = sorted((accounted or {}).get(path, ()))
        range_starts = [r[0] for r in ranges]
        lines = text.split("\n")
        for fact in extract_facts(text):
            if fact.text not in missing or fact.text in seen:
                continue
            k = bisect.bisect_right(range_starts, fact.line) - 1
            if k >= 0 and ranges[k][0] <= fact.line < ranges[k][1]:
                continue
            if ignore_lines and lines[fact.line] in ignore_lines:
                continue
            seen.add(fact.text)
            shown = (entry_of or {}).get(path, {}).get(fact.line) or lines[fact.line]
            lost.append(LostFact(fact.text, fact.kind, path, fact.line + 1, shown.strip()[:200]))
    lost.sort(key=lambda f: (f.path, f.line))
    if counts is not None:
        counts["total"] = len(total)
    return lost
