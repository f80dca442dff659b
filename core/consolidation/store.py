"""Where consolidation proposals live: one JSON file each under ``.fusion/memdesk/consolidations/``.

Kept apart from the extraction proposals (``.fusion/memdesk/proposals/``) because they hold other
data: every document's text before and after, the changes, the ledger and the lost facts. Both kinds
are reviewed through ``memdesk proposals``. Files are project state, so untrusted: size-capped and
checked field by field on every read.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from core.consolidation.model import ConsolidationProposal
from core.errors import MemoryBackendError
from core.proposals import ProposalError
from core.proposals.store import new_proposal_id, read_stored
from core.storage import fileio, statefiles

__all__ = ["CONSOLIDATIONS_DIR", "exists", "list_consolidations", "load", "new_id", "save_new", "update"]

CONSOLIDATIONS_DIR = f"{fileio.MEMDESK_DIR}/consolidations"
#: A proposal holds up to a few documents twice (before and after, 1 MiB each at most) and its ledger.
MAX_SIZE = 24 * 1024 * 1024
T = TypeVar("T")


def _relpath(pid: str) -> str:
    return f"{CONSOLIDATIONS_DIR}/{pid}.json"


#: A sortable unique id ``YYYYMMDDTHHMMSS-xxxxxx`` (UTC), from the same generator as extraction proposals'.
new_id = new_proposal_id


def _check_id(pid: str) -> None:
    from core.proposals.model import PROPOSAL_ID_RE

    if not isinstance(pid, str) or not PROPOSAL_ID_RE.match(pid):
        raise ProposalError(f"{str(pid)[:80]!r} is not a proposal id", "INVALID_ID")


def _resolve(root: Path | str, pid: str) -> str | None:
    """The full id of ``pid`` (a unique prefix is enough), or ``None`` when no consolidation has it."""
    _check_id(pid)
    folder = Path(root) / CONSOLIDATIONS_DIR
    if (folder / f"{pid}.json").is_file():
        return pid
    if not folder.is_dir():
        return None
    matches = sorted(p.stem for p in folder.glob("*.json") if p.stem.startswith(pid))
    if len(matches) > 1:
        raise ProposalError(f"{pid!r} matches {len(matches)} proposals; give more of the id", "AMBIGUOUS")
    return matches[0] if matches else None


def exists(root: Path | str, pid: str) -> bool:
    """Whether ``pid`` (or a unique prefix) names a consolidation proposal."""
    try:
        return _resolve(root, pid) is not None
    except ProposalError:
        return False


def _read(root: Path | str, pid: str) -> tuple[ConsolidationProposal, str]:
    relpath = _relpath(pid)
    try:
        text = fileio.read_in_root(root, relpath, max_size=MAX_SIZE)
    except MemoryBackendError as exc:
        raise ProposalError(f"proposal file {relpath} cannot be used: {exc}", "CORRUPT") from exc
    if text is None:
        raise ProposalError(f"no proposal {pid!r} (see `memdesk proposals list`)", "NOT_FOUND")
    try:
        proposal = ConsolidationProposal.from_json(json.loads(text))
    except RecursionError as exc:
        raise ProposalError(f"proposal file {relpath} cannot be used: its JSON is nested too deeply", "CORRUPT") from exc
    except ValueError as exc:
        raise ProposalError(f"proposal file {relpath} cannot be used: {exc}; delete it and run again", "CORRUPT") from exc
    if proposal.id != pid:
        raise ProposalError(f"proposal file {relpath} holds the id {proposal.id!r}", "CORRUPT")
    return proposal, text


def _write(root: Path | str, proposal: ConsolidationProposal, loaded: str | None) -> ConsolidationProposal:
    text = json.dumps(proposal.to_json(), ensure_ascii=False) + "\n"
    statefiles.write("consolidation", root, text, key=proposal.id, expected_hash=fileio.content_hash(loaded or ""),
                     source="proposal", max_size=MAX_SIZE)
    return proposal


def save_new(root: Path | str, proposal: ConsolidationProposal) -> ConsolidationProposal:
    """Store a new proposal."""
    return _write(root, proposal, None)


def load(root: Path | str, pid: str) -> ConsolidationProposal:
    """Load one proposal (a unique id prefix is enough); :class:`ProposalError` when missing or unusable."""
    full = _resolve(root, pid)
    if full is None:
        raise ProposalError(f"no proposal {pid!r} (see `memdesk proposals list`)", "NOT_FOUND")
    return _read(root, full)[0]


def update(root: Path | str, pid: str,
           change: Callable[[ConsolidationProposal], tuple[ConsolidationProposal, T]]) -> T:
    """Load, change and save a proposal under its file lock; ``change`` returns (proposal, result)."""
    full = _resolve(root, pid)
    if full is None:
        raise ProposalError(f"no proposal {pid!r} (see `memdesk proposals list`)", "NOT_FOUND")
    with statefiles.lock("consolidation", root, key=full):
        proposal, text = _read(root, full)
        updated, result = change(proposal)
        if updated != proposal:
            _write(root, updated, text)
        return result


def list_consolidations(root: Path | str, *, pending_only: bool = True,
                        warnings: list[str] | None = None) -> list[ConsolidationProposal]:
    """Stored consolidation proposals, oldest first (pending ones only by default); unusable files skipped."""
    stored = read_stored(root, CONSOLIDATIONS_DIR, _read, "consolidation proposals", warnings)
    return sorted((p for p in stored if not pending_only or p.status == "pending"), key=lambda p: (p.created_at, p.id))
