"""What the agents will actually load of each memory document (design §8; docs/budget.md).

Consumers are data (:mod:`core.budget.table`, plus the user's own rules); :func:`document_budget`
tells, per document and consumer, used / limit, the first line not loaded and the sections past it;
:func:`append_warnings` says when an append lands past a cut; :func:`prune_budget` compares a prune's
before and after. Nothing here writes, except :func:`set_document_consumers` (the project's choice).
"""

from __future__ import annotations

from core.budget.measure import Cut, Measure, line_count, line_of, measure_rule
from core.budget.registry import (
    SETTING_KEY,
    all_consumers,
    chosen_consumer_ids,
    chosen_consumers,
    consumers_patch,
    default_consumer_ids,
    get_consumer,
    set_document_consumers,
)
from core.budget.report import (
    ConsumerBudget,
    PruneBudget,
    append_warnings,
    budget_for,
    document_budget,
    prune_budget,
    tightest,
)
from core.budget.rules import Consumer, LoadRule, UserConsumer
from core.budget.sections import headings, sections_past_cut
from core.budget.table import BUILTIN_CONSUMERS

__all__ = [
    "BUILTIN_CONSUMERS", "SETTING_KEY", "Consumer", "ConsumerBudget", "Cut", "LoadRule", "Measure", "PruneBudget",
    "UserConsumer", "all_consumers", "append_warnings", "budget_for", "chosen_consumer_ids", "chosen_consumers",
    "consumers_patch", "default_consumer_ids", "document_budget", "get_consumer", "headings", "line_count",
    "line_of", "measure_rule", "project_append_warnings", "prune_budget", "sections_past_cut",
    "set_document_consumers", "tightest",
]


def project_append_warnings(project: object, relpath: str, before: str, after: str) -> list[str]:
    """:func:`append_warnings` for the consumers the project chose for ``relpath`` (``project.settings``)."""
    return append_warnings(relpath, before, after, chosen_consumers(relpath, getattr(project, "settings", None)))
