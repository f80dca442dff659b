"""Dreams and compaction (design §10): run by memdesk, staged as one proposal, applied only when seen.

``fusion`` holds Fusion's prompts, reply formats and output bytes; ``entries`` the units of a document;
``facts`` the distinctive facts and the conservation check; ``offline`` the deterministic consolidation;
``ledger`` each removed entry's fate; ``stage``/``store`` the proposal; ``run`` a dream or compaction run;
``apply`` applying or rejecting; ``policy`` and ``scheduled`` unattended runs on Fusion's schedules;
``programs`` other programs' rewrites after the fact; ``backups`` Fusion's memory backups.
"""

from __future__ import annotations

from core.consolidation.apply import ApplyOutcome, apply_proposal, reject_proposal, selected_texts
from core.consolidation.model import Change, ConsolidationProposal, DocumentChange, LedgerEntry
from core.consolidation.run import RunCancelled, RunOutcome, list_agents, run_compact, run_dream
from core.consolidation.store import exists, list_consolidations, load

__all__ = [
    "ApplyOutcome",
    "Change",
    "ConsolidationProposal",
    "DocumentChange",
    "LedgerEntry",
    "RunCancelled",
    "RunOutcome",
    "apply_proposal",
    "exists",
    "list_agents",
    "list_consolidations",
    "load",
    "reject_proposal",
    "run_compact",
    "run_dream",
    "selected_texts",
]
