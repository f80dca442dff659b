"""Where proposals live: one JSON file per proposal under ``.fusion/memdesk/proposals/``.

Each file is written through ``core.storage.saving.replace_text`` (atomic, with history). This module stores,
lists and loads proposals, turns a saved AI reply or a prune candidate file into a proposal, and
records review outcomes in the audit.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from core.errors import MemoryBackendError, PathOutsideRootError
from core.insights import (
    MemoryInsight,
    PruneReason,
    read_working_memory,
    record_audit,
    validate_prune_candidate,
)
from core.insights._text import iso_timestamp, to_utc
from core.proposals.model import PROPOSAL_ID_RE, Proposal, ProposalError, ProposedInsight
from core.storage import fileio, statefiles

__all__ = [
    "PROPOSALS_DIR",
    "PROPOSAL_MAX_SIZE",
    "is_stale",
    "list_proposals",
    "load_proposal",
    "new_proposal_id",
    "proposal_relpath",
    "read_stored",
    "record_audit",
    "save_new_proposal",
    "store_prune_candidate",
    "update_proposal",
]

log = logging.getLogger(__name__)

PROPOSALS_DIR = f"{fileio.MEMDESK_DIR}/proposals"
#: Proposal files are not memory files: a proposal holds a whole pruned memory (up to 1 MiB) plus its
#: insights, so it gets a limit of its own.
PROPOSAL_MAX_SIZE = 4 * 1024 * 1024
#: Room kept for a review step's changes (statuses, messages) so the save after it cannot fail on size.
_REVIEW_MARGIN = 64 * 1024
_ID_RE = PROPOSAL_ID_RE
T = TypeVar("T")
P = TypeVar("P")


def proposal_relpath(proposal_id: str) -> str:
    """The proposal file's path relative to the project root."""
    return f"{PROPOSALS_DIR}/{proposal_id}.json"


def new_proposal_id(now: datetime | None = None) -> str:
    """A sortable, unique id: ``YYYYMMDDTHHMMSS-xxxxxx`` (UTC)."""
    moment = to_utc(now or datetime.now(UTC))
    return f"{moment:%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"


def _corrupt(relpath: str, why: str) -> ProposalError:
    return ProposalError(f"proposal file {relpath} cannot be used: {why.rstrip('. ')}; delete it (or restore an earlier "
                         "version with `memdesk history`) and run a new extraction", "CORRUPT")


def _read(root: Path | str, proposal_id: str) -> tuple[Proposal, str]:
    if not _ID_RE.match(proposal_id or ""):
        raise ProposalError(f"{proposal_id!r} is not a proposal id", "INVALID_ID")
    relpath = proposal_relpath(proposal_id)
    try:
        text = fileio.read_in_root(root, relpath, max_size=PROPOSAL_MAX_SIZE)
    except MemoryBackendError as exc:
        raise _corrupt(relpath, str(exc).replace(str(fileio.resolve_in_root(root, relpath)), "it")) from exc
    if text is None:
        raise ProposalError(f"no proposal {proposal_id!r} (see `memdesk proposals list`)", "NOT_FOUND")
    try:
        proposal = Proposal.from_json(json.loads(text))
    except RecursionError as exc:
        raise _corrupt(relpath, "its JSON is nested too deeply") from exc
    except json.JSONDecodeError as exc:
        raise _corrupt(relpath, f"it is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from exc
    except ValueError as exc:  # json.JSONDecodeError is a ValueError too
        raise _corrupt(relpath, str(exc)) from exc
    if proposal.id != proposal_id:
        # Using it would save its review under another file (and prune first, then fail).
        raise _corrupt(relpath, f"it holds the id {proposal.id!r}, not {proposal_id!r}")
    return proposal, text


def _write(root: Path | str, proposal: Proposal, loaded_text: str | None) -> Proposal:
    text = json.dumps(proposal.to_json(), indent=2, ensure_ascii=False) + "\n"
    expected = fileio.content_hash(loaded_text or "")
    statefiles.write("proposal", root, text, key=proposal.id, expected_hash=expected, source="proposal",
                     max_size=PROPOSAL_MAX_SIZE)
    return proposal


def _preflight(root: Path | str, proposal_id: str, text: str) -> None:
    """Check that the proposal can be saved again before a review step changes anything else."""
    relpath = proposal_relpath(proposal_id)
    try:
        fileio.check_writable(root, relpath)
    except MemoryBackendError as exc:
        raise _corrupt(relpath, str(exc)) from exc
    if len(text.encode("utf-8")) + _REVIEW_MARGIN > PROPOSAL_MAX_SIZE:
        raise _corrupt(relpath, f"it is too big to be saved again after a review (limit {PROPOSAL_MAX_SIZE:,} bytes)")


def _resolve_id(root: Path | str, proposal_id: str) -> str:
    """Accept a unique prefix of an id, as the CLI prints short ids."""
    if not _ID_RE.match(proposal_id or ""):
        raise ProposalError(f"{proposal_id!r} is not a proposal id", "INVALID_ID")
    folder = Path(root) / PROPOSALS_DIR
    if (folder / f"{proposal_id}.json").exists() or not folder.is_dir():
        return proposal_id
    matches = sorted(p.stem for p in folder.glob("*.json") if p.stem.startswith(proposal_id))
    if len(matches) > 1:
        raise ProposalError(f"{proposal_id!r} matches {len(matches)} proposals; give more of the id", "AMBIGUOUS")
    return matches[0] if matches else proposal_id


def update_proposal(root: Path | str, proposal_id: str,
                    change: Callable[[Proposal], tuple[Proposal, T]]) -> T:
    """Load, change and save a proposal under its file lock; ``change`` returns (proposal, result)."""
    pid = _resolve_id(root, proposal_id)
    with statefiles.lock("proposal", root, key=pid):
        proposal, text = _read(root, pid)
        _preflight(root, pid, text)
        updated, result = change(proposal)
        if updated != proposal:
            _write(root, updated, text)
        return result


def save_new_proposal(root: Path | str, *, provider: str, summary: str, insights: Iterable[MemoryInsight],
                      pruned_memory: str | None, memory_hash_at_start: str, prune_status: str, prune_message: str,
                      duplicate_count: int = 0, origin: str = "manual", now: datetime | None = None,
                      prune_reasons: Iterable[PruneReason] = ()) -> Proposal:
    """Store a new proposal whose insights are all pending, and return it."""
    items = tuple(ProposedInsight(n, insight, "pending") for n, insight in enumerate(insights, start=1))
    proposal = Proposal(new_proposal_id(now), iso_timestamp(now), provider, origin, summary, items, pruned_memory,
                        memory_hash_at_start, prune_status, prune_message, duplicate_count, tuple(prune_reasons))
    return _write(root, proposal, None)


def list_proposals(root: Path | str, *, pending_only: bool = True,
                   warnings: list[str] | None = None) -> list[Proposal]:
    """Return the stored proposals, oldest first; ``pending_only`` keeps those with something to review.

    An unusable proposal file is skipped: logged, and its one-line reason appended to ``warnings``.
    """
    stored = read_stored(root, PROPOSALS_DIR, _read, "proposals", warnings)
    return sorted((p for p in stored if not pending_only or p.is_pending), key=lambda p: (p.created_at, p.id))


def read_stored(root: Path | str, folder_relpath: str, read: Callable[[Path | str, str], tuple[P, str]],
                label: str, warnings: list[str] | None) -> list[P]:
    """Every proposal file ``*.json`` under ``folder_relpath`` read by ``read``, in file-name order.

    An unusable file is skipped: logged, and its one-line reason appended to ``warnings``.
    """
    try:
        folder = fileio.resolve_in_root(root, folder_relpath)
    except PathOutsideRootError as exc:
        if warnings is not None:
            warnings.append(f"{label} skipped: {exc}")
        return []
    out: list[P] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        try:
            out.append(read(root, path.stem)[0])
        except (ProposalError, MemoryBackendError) as exc:
            log.warning("skipping %s: %s", path.name, exc)
            if warnings is not None:
                warnings.append(f"skipped {exc}")
    return out


def load_proposal(root: Path | str, proposal_id: str) -> Proposal:
    """Load one proposal (a unique id prefix is enough); raise :class:`ProposalError` when missing."""
    return _read(root, _resolve_id(root, proposal_id))[0]


def is_stale(root: Path | str, proposal: Proposal) -> bool:
    """True when the working memory is no longer the one the proposal's prune was made from."""
    return fileio.content_hash(read_working_memory(root)) != proposal.memory_hash_at_start


def store_prune_candidate(root: Path | str, candidate: str, source_name: str, *,
                          now: datetime | None = None) -> Proposal:
    """Store a prune candidate (plain markdown, e.g. edited by hand) as a proposal without insights.

    It is made against the memory as it is now: if the memory changes before it is applied, it is
    stale like any other prune. A candidate dropping required sections is stored as ``invalid``.
    """
    validation = validate_prune_candidate(candidate)
    status, message = (("pending", "Prune proposed; review it before it is applied") if validation.valid else
                       ("invalid", f"The proposed prune cannot be applied: {validation.reason}"))
    return save_new_proposal(
        root, provider=f"{source_name} (loaded)", summary=f"Prune candidate loaded from {source_name}",
        insights=(), pruned_memory=candidate, memory_hash_at_start=fileio.content_hash(read_working_memory(root)),
        prune_status=status, prune_message=message, origin="import", now=now)
