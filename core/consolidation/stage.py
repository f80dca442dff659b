"""Staging a consolidation: its changes, its ledger and its conservation check, stored as one proposal."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING

from core.consolidation import store
from core.consolidation.facts import LostFact, conservation_check
from core.consolidation.fusion import scaffold_lines
from core.consolidation.ledger import accounted_ranges, match_ledger
from core.consolidation.model import Change, ConsolidationProposal, DocumentChange, LedgerEntry
from core.documents.diff import Hunk, diff_line_opcodes, split_lines
from core.insights._text import iso_timestamp

if TYPE_CHECKING:
    from core.project.model import Project

__all__ = ["build_proposal", "document_hunks", "lost_for", "stage"]


def document_hunks(before: str, after: str) -> list[Hunk]:
    """The hunks of the line diff ``before`` → ``after`` (no word highlights: only the ranges are needed)."""
    hunks: list[Hunk] = []
    row = 0
    for tag, i1, i2, j1, j2 in diff_line_opcodes(split_lines(before), split_lines(after)):
        span = max(i2 - i1, j2 - j1)
        if tag != "equal":
            hunks.append(Hunk(len(hunks), row, row + span, i1, i2, j1, j2))
        row += span
    return hunks


def lost_for(before: Mapping[str, str | None], after: Mapping[str, str],
             ledger: Iterable[LedgerEntry], counts: dict[str, int] | None = None) -> list[LostFact]:
    """The conservation check of ``before`` → ``after`` with the ledger's dropped and superseded entries."""
    old = {p: t or "" for p, t in before.items()}
    return conservation_check(old, after, accounted_ranges(ledger), ignore_lines=scaffold_lines(), counts=counts)


def build_proposal(kind: str, provider: str, scope: str, before: Mapping[str, str | None], after: Mapping[str, str],
                   explicit: list[LedgerEntry] | None, summary: str, origin: str, now: datetime,
                   pid: str | None = None, context: Mapping[str, str] | None = None) -> ConsolidationProposal:
    """The proposal for ``before`` → ``after`` (its id from ``pid`` or a new one); not stored.

    ``context`` holds documents the run read but does not change (MEMORY.md when a dream promotes
    nothing): a fact still there is not lost.
    """
    documents = tuple(DocumentChange(p, before.get(p), after[p]) for p in after if before.get(p) != after[p])
    changes: list[Change] = []
    change_bytes = 0
    touched: dict[str, set[int]] = {}
    for doc in documents:
        old_lines, new_lines = split_lines(doc.before or ""), split_lines(doc.after)
        touched[doc.path] = set()
        for hunk in document_hunks(doc.before or "", doc.after):
            touched[doc.path].update(range(hunk.old_start, hunk.old_end))
            removed = tuple(old_lines[hunk.old_start:hunk.old_end])
            added = tuple(new_lines[hunk.new_start:hunk.new_end])
            change_bytes += sum(len(x.encode("utf-8")) + 1 for x in removed + added)
            changes.append(Change(len(changes) + 1, doc.path, hunk.index, hunk.old_start, hunk.old_end,
                                  hunk.new_start, hunk.new_end, removed, added))
    touched_before = {d.path: d.before for d in documents}
    touched_after = {d.path: d.after for d in documents}
    ledger = match_ledger(touched_before, touched_after, explicit or (), touched)
    counts: dict[str, int] = {}
    lost = lost_for(touched_before, {**(context or {}), **touched_after}, ledger, counts)
    return ConsolidationProposal(pid or store.new_id(now), kind, iso_timestamp(now), provider, scope, origin,  # type: ignore[arg-type]
                                 summary, documents, tuple(changes), tuple(ledger), tuple(lost),
                                 change_bytes=change_bytes, facts_total=counts.get("total", 0))


def context_for(project: Project, proposal: ConsolidationProposal) -> dict[str, str]:
    """The documents the ledger points to that the proposal does not change, as they are now."""
    own = set(proposal.paths)
    out: dict[str, str] = {}
    for path in {e.target_path for e in proposal.ledger if e.target_path and e.target_path not in own}:
        try:
            out[path] = project.read(path)  # type: ignore[arg-type]
        except Exception:  # unreadable now: its facts count as lost, the safe side
            continue
    return out


def stage(project: Project, kind: str, provider: str, scope: str, before: Mapping[str, str | None],
          after: Mapping[str, str], explicit: list[LedgerEntry] | None, summary: str, origin: str,
          now: datetime, context: Mapping[str, str] | None = None) -> ConsolidationProposal:
    """Build the proposal and store it."""
    proposal = build_proposal(kind, provider, scope, before, after, explicit, summary, origin, now, context=context)
    store.save_new(project.root, proposal)
    return proposal
