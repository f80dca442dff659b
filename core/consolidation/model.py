"""What a consolidation proposal holds: the documents it rewrites, their changes, the ledger and lost facts.

Plain frozen dataclasses with their camelCase JSON (``memdesk proposals show ID --json``). A proposal is
project state under ``.fusion/memdesk/consolidations/``, so reading one back checks every field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from core.consolidation.facts import LostFact

__all__ = ["ACCOUNTED_FATES", "Change", "ConsolidationProposal", "DocumentChange", "LedgerEntry", "STATUSES"]

Fate = Literal["kept", "merged", "promoted", "rewritten", "superseded", "dropped", "removed"]
#: Fates whose facts may leave the memory: the ledger says why. ``removed`` (a model reply took the
#: entry out and said nothing) is not one of them, so its facts count as lost.
ACCOUNTED_FATES = frozenset({"dropped", "superseded"})
#: pending: waits for review; applied / partly-applied / rejected: reviewed; conflict: a document moved on
#: in a way the proposal cannot be re-based onto.
STATUSES = ("pending", "applied", "partly-applied", "rejected", "conflict")
_ID_RE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z-]{0,63}$")


@dataclass(frozen=True)
class LedgerEntry:
    """The fate of one old entry the consolidation removes or rewrites."""

    path: str
    line: int  # 1-based, in the old text
    text: str
    fate: Fate
    target_path: str | None = None
    target_line: int | None = None  # 1-based, in the new text
    reason: str = ""

    def describe(self) -> str:
        """One line: ``merged into line 12 of MEMORY.md (near duplicate)``."""
        where = f" line {self.target_line} of {self.target_path.rsplit('/', 1)[-1]}" if self.target_path else ""
        verb = {"merged": "merged into", "promoted": "promoted to", "rewritten": "rewritten as",
                "superseded": "superseded by", "kept": "kept at"}.get(self.fate, self.fate)
        text = f"{verb}{where}" if where else ("superseded" if self.fate == "superseded" else verb)
        return f"{text} ({self.reason})" if self.reason else text

    def to_json(self) -> dict[str, Any]:
        """camelCase JSON."""
        return {"path": self.path, "line": self.line, "text": self.text, "fate": self.fate,
                "targetPath": self.target_path, "targetLine": self.target_line, "reason": self.reason,
                "description": self.describe()}

    @classmethod
    def from_json(cls, data: Any) -> LedgerEntry:
        """Read back (``ValueError`` on anything wrong)."""
        _obj(data, "ledger entry")
        fate = data.get("fate")
        if fate not in ("kept", "merged", "promoted", "rewritten", "superseded", "dropped", "removed"):
            raise ValueError(f"unknown ledger fate {str(fate)[:20]!r}")
        return cls(_str(data, "path"), _int(data, "line"), _str(data, "text"), fate,
                   _opt_str(data, "targetPath"), _opt_int(data, "targetLine"), _str(data, "reason", ""))


@dataclass(frozen=True)
class Change:
    """One hunk of one document: old lines ``old_start:old_end`` become new lines ``new_start:new_end``."""

    number: int  # 1-based across the proposal
    path: str
    index: int  # the hunk's index in its document's diff
    old_start: int
    old_end: int
    new_start: int
    new_end: int
    removed: tuple[str, ...]
    added: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """camelCase JSON."""
        return {"number": self.number, "path": self.path, "index": self.index, "oldStart": self.old_start,
                "oldEnd": self.old_end, "newStart": self.new_start, "newEnd": self.new_end,
                "removed": list(self.removed), "added": list(self.added)}

    @classmethod
    def from_json(cls, data: Any) -> Change:
        """Read back (``ValueError`` on anything wrong)."""
        _obj(data, "change")
        return cls(_int(data, "number"), _str(data, "path"), _int(data, "index", 0), _int(data, "oldStart", 0),
                   _int(data, "oldEnd", 0), _int(data, "newStart", 0), _int(data, "newEnd", 0),
                   _lines(data, "removed"), _lines(data, "added"))


@dataclass(frozen=True)
class DocumentChange:
    """One document before and after (``before`` is ``None`` for a document the run creates)."""

    path: str
    before: str | None
    after: str

    def to_json(self) -> dict[str, Any]:
        """camelCase JSON."""
        return {"path": self.path, "before": self.before, "after": self.after}

    @classmethod
    def from_json(cls, data: Any) -> DocumentChange:
        """Read back (``ValueError`` on anything wrong)."""
        _obj(data, "document")
        before = data.get("before")
        if before is not None and not isinstance(before, str):
            raise ValueError('a document\'s "before" is neither text nor null')
        return cls(_str(data, "path"), before, _str(data, "after"))


@dataclass(frozen=True)
class ConsolidationProposal:
    """One dream or compaction run, staged: nothing is written until it is applied."""

    id: str
    kind: Literal["dream", "compact", "program"]
    created_at: str
    provider: str
    scope: str  # "project", "agent:<id>", or the document compacted
    origin: str  # manual | scheduled | program
    summary: str
    documents: tuple[DocumentChange, ...]
    changes: tuple[Change, ...]
    ledger: tuple[LedgerEntry, ...]
    lost_facts: tuple[LostFact, ...]
    status: str = "pending"
    message: str = ""
    applied_changes: tuple[int, ...] = ()
    change_bytes: int = 0
    facts_total: int = 0
    extra: dict[str, Any] = field(default_factory=dict, hash=False)

    @property
    def paths(self) -> tuple[str, ...]:
        """The documents the proposal touches."""
        return tuple(d.path for d in self.documents)

    def document(self, path: str) -> DocumentChange:
        """The before/after of ``path``."""
        return next(d for d in self.documents if d.path == path)

    def to_json(self) -> dict[str, Any]:
        """camelCase JSON (the stored file and ``--json``)."""
        return {"id": self.id, "type": "consolidation", "kind": self.kind, "createdAt": self.created_at,
                "provider": self.provider, "scope": self.scope, "origin": self.origin, "summary": self.summary,
                "status": self.status, "message": self.message, "changeBytes": self.change_bytes,
                "factsTotal": self.facts_total, "appliedChanges": list(self.applied_changes),
                "documents": [d.to_json() for d in self.documents],
                "changes": [c.to_json() for c in self.changes], "ledger": [e.to_json() for e in self.ledger],
                "lostFacts": [f.to_json() for f in self.lost_facts], **({"extra": self.extra} if self.extra else {})}

    @classmethod
    def from_json(cls, data: Any) -> ConsolidationProposal:
        """Read the stored JSON back, checking every field (``ValueError`` naming what is wrong)."""
        _obj(data, "proposal")
        pid = _str(data, "id")
        if not _ID_RE.match(pid):
            raise ValueError(f"its id {pid[:80]!r} is not a proposal id")
        kind = data.get("kind")
        if kind not in ("dream", "compact", "program"):
            raise ValueError(f"unknown kind {str(kind)[:20]!r}")
        status = _str(data, "status", "pending")
        if status not in STATUSES:
            raise ValueError(f"unknown status {status[:20]!r}")
        lost = tuple(_lost(item) for item in _list(data, "lostFacts"))
        applied = tuple(_int({"n": n}, "n") for n in _list(data, "appliedChanges"))
        extra = data.get("extra", {})
        if not isinstance(extra, dict):
            raise ValueError('"extra" is not an object')
        documents = tuple(DocumentChange.from_json(d) for d in _list(data, "documents"))
        changes = tuple(Change.from_json(c) for c in _list(data, "changes"))
        _consistent(documents, changes, applied)
        return cls(pid, kind, _str(data, "createdAt"), _str(data, "provider", ""), _str(data, "scope", ""),
                   _str(data, "origin", "manual"), _str(data, "summary", ""), documents, changes,
                   tuple(LedgerEntry.from_json(e) for e in _list(data, "ledger")), lost, status,
                   _str(data, "message", ""), applied, _int(data, "changeBytes", 0), _int(data, "factsTotal", 0),
                   extra)


def _consistent(documents: tuple[DocumentChange, ...], changes: tuple[Change, ...], applied: tuple[int, ...]) -> None:
    """A stored proposal is untrusted: one entry per document, changes only of those, each number and hunk once."""
    paths = [d.path for d in documents]
    if len(set(paths)) != len(paths):
        raise ValueError("it names a document twice")
    numbers = [c.number for c in changes]
    if len(set(numbers)) != len(numbers):
        raise ValueError("it numbers two changes the same")
    if len({(c.path, c.index) for c in changes}) != len(changes):
        raise ValueError("two of its changes are the same hunk")
    stray = next((c for c in changes if c.path not in set(paths)), None)
    if stray is not None:
        raise ValueError(f"change {stray.number} is of {stray.path[:80]!r}, which the proposal does not hold")
    unknown = set(applied) - set(numbers)
    if unknown:
        raise ValueError(f"it says change {min(unknown)} was applied, but has no such change")


def _lost(item: Any) -> LostFact:
    _obj(item, "lost fact")
    kind = _str(item, "kind")
    if kind not in ("url", "code", "task", "path", "quoted", "number", "identifier"):
        raise ValueError(f"unknown fact kind {kind[:20]!r}")
    return LostFact(_str(item, "fact"), kind, _str(item, "path"), _int(item, "line"), _str(item, "entry", ""))  # type: ignore[arg-type]


def _obj(data: Any, what: str) -> None:
    if not isinstance(data, dict):
        raise ValueError(f"a {what} is not an object")


def _str(data: dict[str, Any], key: str, default: str | None = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise ValueError(f'"{key}" is missing or not text')
    return value


def _opt_str(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f'"{key}" is not text')
    return value


def _int(data: dict[str, Any], key: str, default: int | None = None) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 1 << 40:
        raise ValueError(f'"{key}" is missing or not a count')
    return value


def _opt_int(data: dict[str, Any], key: str) -> int | None:
    return None if data.get(key) is None else _int(data, key)


def _list(data: dict[str, Any], key: str) -> list[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise ValueError(f'"{key}" is not a list')
    return value


def _lines(data: dict[str, Any], key: str) -> tuple[str, ...]:
    value = _list(data, key)
    if not all(isinstance(v, str) for v in value):
        raise ValueError(f'"{key}" holds something that is not text')
    return tuple(value)
