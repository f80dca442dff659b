"""The screening engine: runs every rule family on the new text of a write, within caps and a deadline.

What is screened is what a write adds: an appended entry whole; for a replacement, only the lines
that are not already in the document (so the operator's save is not flagged again for what memory
already held). Near-duplicates and contradictions compare the new entries with the document's
entries through an :class:`~core.firewall.similarity.EntryIndex` kept per document and extended
as appends arrive (no rescan of the document per write).

A rule family that raises or runs past the deadline is reported in :attr:`Screening.errors`; the
policy decides what that means for the writer (fail closed for agents, open for the operator).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from core.documents.runs import common_prefix, common_suffix
from core.firewall.injection import scan_injection
from core.firewall.rules import DEFAULT_DEADLINE_S, Deadline, Finding, Kind, RuleTimeout, capped
from core.firewall.secrets import scan_secrets
from core.firewall.similarity import EntryIndex, TextLookup, scan_similar, split_entries

FAMILIES: tuple[tuple[str, tuple[Kind, ...]], ...] = (
    ("secret", ("secret",)), ("injection", ("injection",)),
    ("similarity", ("near-duplicate", "contradiction")),
)


class Screening(NamedTuple):  # not a dataclass: ~0.5 ms less a `memdesk append` (measured)
    """What the rules found in one write, and which rule families failed (with the reason)."""

    findings: tuple[Finding, ...] = ()
    errors: tuple[tuple[str, str], ...] = ()


class _Excerpt:
    """The lines a replacement adds, joined, with a map back to their line and offset in the full text."""

    __slots__ = ("gone", "lines", "text")  # a plain class, not a dataclass: less at import (measured, ~0.5 ms)

    def __init__(self, text: str, lines: list[tuple[int, int]] | None = None, gone: set[str] | None = None) -> None:
        self.text = text
        self.lines = [] if lines is None else lines  # (line number, offset) in the full text
        self.gone = gone  # a replacement's lines that the current text has and the new one not

    def remap(self, finding: Finding, joined_offsets: list[int]) -> Finding:
        index = finding.line - 1
        if not 0 <= index < len(self.lines):
            return finding
        number, offset = self.lines[index]
        base = joined_offsets[index]
        start, end = finding.span
        return Finding(finding.rule, finding.kind, number, (offset + start - base, offset + end - base),
                       finding.message)


def added_lines(new: str, current: str | None) -> _Excerpt:
    """The lines of ``new`` that ``current`` does not contain (all of ``new`` when there is no current)."""
    if not current:
        lines = []
        offset = 0
        for number, line in enumerate(new.split("\n"), 1):
            lines.append((number, offset))
            offset += len(line) + 1
        return _Excerpt(new, lines)
    region = _small_change(new, current)
    if region is None:
        region = _aligned_change(new, current)
    if region is not None:
        return region
    have, new_lines = set(current.split("\n")), new.split("\n")
    present = set(new_lines)
    fresh = present.difference(have)
    gone = have.difference(present)
    kept: list[str] = []
    mapping: list[tuple[int, int]] = []
    if not fresh:
        return _Excerpt("", mapping, gone)
    if len(fresh) <= 64:  # a few new lines (a save): their offsets summed in C, not line by line
        where = [i for i, line in enumerate(new_lines) if line in fresh]
        for i in where:
            number, offset = i + 1, sum(map(len, new_lines[:i])) + i
            if mapping and mapping[-1][0] != number - 1:  # apart in the document: apart in the excerpt
                kept.append("")
                mapping.append((number - 1, offset - 1))
            kept.append(new_lines[i])
            mapping.append((number, offset))
        return _Excerpt("\n".join(kept), mapping, gone)
    offset = 0
    for number, line in enumerate(new_lines, 1):
        if line in fresh:
            if mapping and mapping[-1][0] != number - 1:  # apart in the document: apart in the excerpt
                kept.append("")  # (so two added paragraphs never join into one entry, nor one secret)
                mapping.append((number - 1, offset - 1))
            kept.append(line)
            mapping.append((number, offset))
        offset += len(line) + 1
    return _Excerpt("\n".join(kept), mapping, gone)


#: A change of at most this many lines (between the common start and end of the two texts) is diffed there.
SMALL_CHANGE_LINES = 48


def _has_line(text: str, line: str) -> bool:
    """Whether ``line`` is one of the lines of ``text`` (as ``line in text.split("\\n")``, without the split)."""
    return (text == line or text.startswith(line + "\n") or text.endswith("\n" + line)
            or f"\n{line}\n" in text)


def _small_change(new: str, current: str) -> _Excerpt | None:
    """:func:`added_lines` for a save that changes a few lines in one place: only the lines between the
    texts' common start and common end are looked at (what is outside is in ``current`` where it was).
    ``None`` when the change is larger (the caller splits both texts)."""
    prefix = common_prefix(current, new)
    suffix = common_suffix(current, new, min(len(current), len(new)) - prefix)
    start = new.rfind("\n", 0, prefix) + 1
    end_new, end_cur = new.find("\n", len(new) - suffix), current.find("\n", len(current) - suffix)
    end_new = len(new) if end_new < 0 else end_new
    end_cur = len(current) if end_cur < 0 else end_cur
    if new.count("\n", start, end_new) > SMALL_CHANGE_LINES or current.count("\n", start, end_cur) > SMALL_CHANGE_LINES:
        return None
    if new == current:
        return _Excerpt("", [], set())
    return _excerpt(new, current, [(start, new[start:end_new].split("\n"), current[start:end_cur].split("\n"))])


def _aligned_change(new: str, current: str) -> _Excerpt | None:
    """:func:`added_lines` for a save that changes a few places (an edited line and an added one): only the
    lines of the stretches where the texts differ are looked at (:func:`core.firewall.align.changed_regions`).
    ``None`` when they differ in many places or many lines (the caller splits both texts)."""
    from core.firewall.align import changed_regions, lines_of

    regions = changed_regions(new, current)
    if regions is None:
        return None
    stretches = [(ns, lines_of(new, ns, ne), lines_of(current, cs, ce)) for ns, ne, cs, ce in regions]
    if sum(len(a) + len(b) for _ns, a, b in stretches) > 2 * SMALL_CHANGE_LINES:
        return None  # each line is looked for in the other whole text: many lines cost more than splitting
    return _excerpt(new, current, stretches)


def _excerpt(new: str, current: str, stretches: list[tuple[int, list[str], list[str]]]) -> _Excerpt:
    """The excerpt of the lines of ``stretches`` (each: where it starts in ``new``, its lines in ``new`` and in
    ``current``) that ``current`` does not hold anywhere, and the lines they replace that ``new`` no longer holds."""
    kept: list[str] = []
    mapping: list[tuple[int, int]] = []
    gone: set[str] = set()
    number, counted = 1, 0
    for start, added, removed in stretches:
        number += new.count("\n", counted, start)
        counted, line_no, offset = start, number, start
        for line in added:
            if not _has_line(current, line):
                if mapping and mapping[-1][0] != line_no - 1:  # apart in the document: apart in the excerpt
                    kept.append("")
                    mapping.append((line_no - 1, offset - 1))
                kept.append(line)
                mapping.append((line_no, offset))
            line_no, offset = line_no + 1, offset + len(line) + 1
        gone.update(line for line in removed if not _has_line(new, line))
    return _Excerpt("\n".join(kept), mapping, gone)


class IndexCache:
    """Each document's entry index, kept for the last few documents and extended as they grow.

    The first write to a document in a process is compared through a :class:`TextLookup` (no index:
    a one-shot ``memdesk append`` never pays for indexing 1 MiB); the second builds the index, which
    later writes extend.
    """

    def __init__(self, size: int = 4) -> None:  # an index of a 1 MiB memory holds about 15 MB
        self._items: OrderedDict[str, EntryIndex] = OrderedDict()
        self._seen: set[str] = set()
        self._size = size
        self._lock = threading.Lock()

    def get(self, key: str, text: str) -> EntryIndex | TextLookup:
        """The index of ``text`` (the document ``key``), built on the second write, then extended or rebuilt."""
        with self._lock:
            index = self._items.pop(key, None)
            if index is None and key not in self._seen:
                self._seen.add(key)
                return TextLookup(text)
            index = EntryIndex.build(text) if index is None else index.updated(text)
            self._items[key] = index
            while len(self._items) > self._size:
                self._items.popitem(last=False)
            return index


if TYPE_CHECKING:
    from core.firewall.rest_index import RestIndexes


class Engine:
    """Runs the rule families on a write's new text."""

    def __init__(self, *, deadline_s: float = DEFAULT_DEADLINE_S,
                 families: dict[str, Callable[..., list[Finding]]] | None = None) -> None:
        self.deadline_s = deadline_s
        self.indexes = IndexCache()
        self._rest: RestIndexes | None = None  # the saves' indexes, kept from one save to the next
        self._families = families  # tests pass a failing family here

    @property
    def rest(self) -> RestIndexes:
        """The saves' indexes (loaded with the first save: an append never needs them)."""
        if self._rest is None:
            from core.firewall.rest_index import RestIndexes

            self._rest = RestIndexes()
        return self._rest

    def scan(self, text: str, *, current: str | None = None, op: str = "append", key: str = "",
             kinds: frozenset[str] | None = None) -> Screening:
        """Screen ``text`` (an appended entry, or a replacement's whole content) against ``current``."""
        text = capped(text)
        deadline = Deadline(self.deadline_s)
        excerpt = _Excerpt(text) if op == "append" else added_lines(text, current)
        offsets = _offsets(excerpt.text)
        findings: list[Finding] = []
        errors: list[tuple[str, str]] = []
        for family, family_kinds in FAMILIES:
            if kinds is not None and not kinds.intersection(family_kinds):
                continue
            try:
                found = self._run(family, excerpt.text, current, op, key, text, deadline, excerpt.gone)
            except RuleTimeout as exc:
                errors.append((family, str(exc)))
                continue
            except Exception as exc:  # a rule that fails is reported, never lets the write through unseen
                errors.append((family, f"rule family {family} failed: {type(exc).__name__}: {exc}"))
                continue
            if op != "append":
                found = [excerpt.remap(f, offsets) for f in found]
            findings.extend(f for f in found if kinds is None or f.kind in kinds)
        return Screening(tuple(findings), tuple(errors))

    def _run(self, family: str, text: str, current: str | None, op: str, key: str, full: str,
             deadline: Deadline, gone: set[str] | None = None) -> list[Finding]:
        if self._families and family in self._families:
            return self._families[family](text, deadline)
        if family == "secret":
            return scan_secrets(text, deadline)
        if family == "injection":
            return scan_injection(text, deadline)
        if not text.strip():
            return []
        if op == "append":
            index = self.indexes.get(key, capped(current or "")) if key else EntryIndex.build(capped(current or ""))
        else:  # compare the added entries with the entries the new content keeps unchanged
            found = self.rest.scan(key, capped(current), full, text, deadline, gone) if key and current else None
            if found is not None:
                return found
            index = rest_lookup(_unchanged(full, text), text)
        return scan_similar(text, index, deadline)


#: A replacement that adds at most this many entries compares them through a :class:`TextLookup` of the
#: rest of the document (a few ``str.find`` over it per entry); more, and indexing the rest once is cheaper.
LOOKUP_MAX_ENTRIES = 24


def rest_lookup(rest: str, added: str) -> EntryIndex | TextLookup:
    """What the added entries of a replacement are compared with: the unchanged rest of the document.

    An operator's save of a 1 MiB memory changes a line or two; indexing the other 1 MiB on every save
    cost 200-500 ms (every entry normalised and tokenised). The lookup costs O(changed) scans of the
    rest in C (``str.find``), a few ms; a write that adds many entries (a restore, a paste) indexes once.
    """
    if added.count("\n") < LOOKUP_MAX_ENTRIES or sum(1 for _ in split_entries(added)) <= LOOKUP_MAX_ENTRIES:
        return TextLookup(rest)
    return EntryIndex.build(rest)


def _offsets(text: str) -> list[int]:
    offsets = [0]
    for line in text.split("\n")[:-1]:
        offsets.append(offsets[-1] + len(line) + 1)
    return offsets


def _unchanged(full: str, added: str) -> str:
    new = set(added.split("\n"))
    return "\n".join(line if line not in new else "" for line in full.split("\n"))
