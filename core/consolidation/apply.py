"""Applying a consolidation proposal: all its changes or the chosen ones, never over newer text.

Before anything is written, every document is read again. A document still as the run read it gets
the chosen changes; one that moved on is *re-based*: when both the proposal and the newer text only
append to what the run read, the proposal's addition goes after the newer text (as Fusion's own
append would); otherwise a three-way merge that does not conflict is written. A conflict in any
document writes nothing at all. The conservation check runs again on the chosen changes: a selection
that would lose facts is refused unless the operator says they saw them (``allow_loss``). Every write
goes through :meth:`core.project.Project.write` (source ``dream``/``compact``, history kept); a write
that fails part-way restores the documents already written.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from core.consolidation import store
from core.consolidation.model import ConsolidationProposal
from core.consolidation.stage import context_for, document_hunks, lost_for
from core.documents.diff import apply_hunks
from core.documents.textmerge import merge3
from core.errors import MemoryBackendError
from core.proposals import ProposalError
from core.storage import fileio

if TYPE_CHECKING:
    from core.project.model import Project

__all__ = ["ApplyOutcome", "apply_proposal", "reject_proposal", "selected_texts"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ApplyOutcome:
    """What applying did: ``status`` applied | partly-applied | conflict | refused; the documents written."""

    status: str
    message: str
    written: tuple[str, ...] = ()
    rebased: tuple[str, ...] = ()
    lost: int = 0

    @property
    def applied(self) -> bool:
        """Whether memory changed."""
        return bool(self.written)

    def to_json(self) -> dict[str, Any]:
        """camelCase JSON."""
        return {"status": self.status, "message": self.message, "written": list(self.written),
                "rebased": list(self.rebased), "lostFacts": self.lost}


def selected_texts(proposal: ConsolidationProposal, numbers: list[int] | None,
                   already: tuple[int, ...] = ()) -> dict[str, str]:
    """Each touched document's text with only the changes ``numbers`` (all when ``None``) taken, plus
    those ``already`` applied."""
    known = {c.number for c in proposal.changes}
    chosen = (known if numbers is None else set(numbers)) | set(already)
    wrong = sorted(chosen - known)
    if wrong:
        raise ProposalError(f"proposal {proposal.id} has no change {', '.join(map(str, wrong))} "
                            f"(it has 1–{len(known)})", "INVALID_ID")
    out: dict[str, str] = {}
    for doc in proposal.documents:
        picked = {c.index for c in proposal.changes if c.path == doc.path and c.number in chosen}
        if not picked:
            continue
        old = doc.before or ""
        out[doc.path] = apply_hunks(old, doc.after, document_hunks(old, doc.after), picked)
    return out


def _rebase(before: str | None, mine: str, current: str | None) -> str | None:
    """``mine`` (made from ``before``) carried onto ``current``; ``None`` when they conflict."""
    if current == before:
        return mine
    if before is None or current is None:
        return None
    if mine.startswith(before) and current.startswith(before):
        return current + mine[len(before):]
    merged = merge3(before, mine, current)
    return None if merged.conflicts else merged.text


def apply_proposal(project: Project, proposal_id: str, numbers: list[int] | None = None, *,
                   allow_loss: bool = False, author: str | None = None) -> ApplyOutcome:
    """Apply the proposal's changes (all, or ``numbers``) as described in the module docstring."""
    def change(proposal: ConsolidationProposal) -> tuple[ConsolidationProposal, ApplyOutcome]:
        if proposal.status not in ("pending", "partly-applied"):
            return proposal, ApplyOutcome("refused", f"proposal {proposal.id} is {proposal.status}; nothing was "
                                          "written" + (f" ({proposal.message})" if proposal.message else ""))
        foreign = [d.path for d in proposal.documents if not project.layout.is_document(d.path)]
        if foreign:  # a proposal file is project state: never let one name a file that is not memory
            return proposal, ApplyOutcome("refused", f"proposal {proposal.id} names {foreign[0]!r}, which is not a "
                                          "memory document of this project; nothing was written")
        done = proposal.applied_changes
        wanted = [n for n in (numbers if numbers is not None else [c.number for c in proposal.changes]) if n not in done]
        try:
            chosen_texts = selected_texts(proposal, wanted, done)
            bases = selected_texts(proposal, [], done)
        except ValueError as exc:  # a hunk the documents do not have: the stored file was changed by hand
            raise ProposalError(f"proposal {proposal.id} cannot be used: {exc}; nothing was written. Delete it "
                                "and run again", "CORRUPT") from exc
        texts = {p: t for p, t in chosen_texts.items() if t != bases.get(p, proposal.document(p).before)}
        if not texts or not wanted:
            return proposal, ApplyOutcome("refused", "no change chosen; nothing was written")
        befores = {d.path: d.before for d in proposal.documents}
        # Every document as it would be after this step (earlier steps included), so a fact moved from a
        # daily note into DREAMS.md by an earlier step is found there.
        lost = lost_for(befores, {**context_for(project, proposal), **{p: b or "" for p, b in befores.items()},
                                  **chosen_texts}, proposal.ledger)
        if lost and not allow_loss:
            shown = "; ".join(f"{f.fact} ({f.path.rsplit('/', 1)[-1]}:{f.line})" for f in lost[:5])
            return proposal, ApplyOutcome(
                "refused", f"{len(lost)} fact{'s' if len(lost) != 1 else ''} would be lost: {shown}"
                f"{' …' if len(lost) > 5 else ''}. Review them (memdesk proposals show {proposal.id}); to apply "
                "anyway pass --allow-loss. Nothing was written", lost=len(lost))
        plan: list[tuple[str, str | None, str]] = []  # path, current, text to write
        rebased: list[str] = []
        for path, mine in texts.items():
            before = bases.get(path, befores[path])  # what the document holds after the changes applied earlier
            current = project.backend.read_document(path)
            result = _rebase(before, mine, current)
            if result is None:
                message = (f"{path} changed since the run read it, and the change overlaps this proposal's; "
                           "nothing was written. Run it again")
                return replace(proposal, status="conflict", message=message), ApplyOutcome("conflict", message)
            if current != before:
                rebased.append(path)
            plan.append((path, current, result))
        written: list[tuple[str, str | None]] = []
        source = proposal.kind if proposal.kind in ("dream", "compact") else "restore"
        try:
            for path, current, text in plan:
                expected = fileio.content_hash(current) if current is not None else None
                wrote = project.write(path, text, expected_hash=expected, source=source, author=author)
                if getattr(wrote, "status", "written") != "written":  # the firewall held it for review
                    raise MemoryBackendError(f"{path} was held for review by the memory firewall (inbox "
                                             f"{getattr(wrote, 'inbox_id', None)}); nothing was applied", "CONFLICT")
                written.append((path, current))
        except Exception:
            _undo(project, written, author)
            raise
        chosen = tuple(sorted(set(done) | set(wanted)))
        status = "applied" if set(chosen) == {c.number for c in proposal.changes} else "partly-applied"
        message = (f"Applied {len(wanted)} change{'s' if len(wanted) != 1 else ''} to {len(plan)} "
                   f"document{'s' if len(plan) != 1 else ''}" + (f" (re-based onto newer text: {', '.join(rebased)})"
                                                               if rebased else ""))
        updated = replace(proposal, status=status, message=message, applied_changes=chosen)
        return updated, ApplyOutcome(status, message, tuple(p for p, _c, _t in plan), tuple(rebased), len(lost))

    return store.update(project.root, proposal_id, change)


def _undo(project: Project, written: list[tuple[str, str | None]], author: str | None) -> None:
    """Put back the documents a failed apply already wrote (a document it created is emptied to its scaffold)."""
    for path, previous in reversed(written):
        try:
            project.write(path, previous if previous is not None else (project.layout.scaffold_for(path) or ""),
                          source="restore", author=author)
        except Exception as exc:  # the version before is in history in any case
            log.error("could not undo the write of %s after a failed apply: %s", path, exc)


def reject_proposal(project: Project, proposal_id: str) -> ApplyOutcome:
    """Mark the proposal rejected; memory is not touched."""
    def change(proposal: ConsolidationProposal) -> tuple[ConsolidationProposal, ApplyOutcome]:
        if proposal.status not in ("pending", "partly-applied"):
            return proposal, ApplyOutcome("refused", f"proposal {proposal.id} is already {proposal.status}")
        message = "Rejected; memory was not changed"
        return replace(proposal, status="rejected", message=message), ApplyOutcome("rejected", message)

    return store.update(project.root, proposal_id, change)
