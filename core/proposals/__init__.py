"""Proposals waiting for review: the insights and the prune one extraction run (or an imported reply) offered.

Each proposal is a JSON file ``.fusion/memdesk/proposals/<id>.json``. The operator accepts or rejects
each insight (accepted ones are merged into ``.fusion/memory-insights.md``) and applies or rejects
the prune; a prune made from a memory that has changed since is stale and never applied. This is the
one review path: the CLI, the scheduler and the GUI all go through it.

``model`` holds the data, ``store`` reads and writes proposal files, ``review`` takes review steps.
"""

from __future__ import annotations

from core.proposals.model import (
    PRUNE_STATUSES,
    STALE_MESSAGE,
    InsightReview,
    Proposal,
    ProposalError,
    ProposedInsight,
    PruneReview,
)
from core.proposals.review import (
    REJECTED_PRUNE_REASON,
    accept_insights,
    apply_prune,
    prune_refusal,
    reject_insights,
    reject_prune,
)
from core.proposals.store import (
    PROPOSALS_DIR,
    is_stale,
    list_proposals,
    load_proposal,
    new_proposal_id,
    proposal_relpath,
    record_audit,
    save_new_proposal,
    store_prune_candidate,
    update_proposal,
)

__all__ = [
    "PROPOSALS_DIR",
    "PRUNE_STATUSES",
    "REJECTED_PRUNE_REASON",
    "STALE_MESSAGE",
    "InsightReview",
    "Proposal",
    "ProposalError",
    "ProposedInsight",
    "PruneReview",
    "accept_insights",
    "apply_prune",
    "is_stale",
    "list_proposals",
    "load_proposal",
    "new_proposal_id",
    "proposal_relpath",
    "prune_refusal",
    "record_audit",
    "reject_insights",
    "reject_prune",
    "save_new_proposal",
    "store_prune_candidate",
    "update_proposal",
]
