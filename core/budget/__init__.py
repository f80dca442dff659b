"""What the agents will actually load of each memory document (design §8; docs/budget.md).

Consumers are data (:mod:`core.budget.table`, plus the user's own rules); :func:`document_budget`
tells, per document and consumer, used / limit, the first line not loaded and the sections past it;
:func:`append_warnings` says when an append lands past a cut; :func:`prune_budget` compares a prune's
before and after. Nothing here writes, except :func:`set_document_consumers` (the project's choice).
"""

from __future__ import annotations

import importlib
from typing import Any

# Exported lazily (PEP 562): the shipped consumers and the load-rule models import pydantic, and an
# append's budget check on the shipped consumers needs neither (see project_append_warnings).
_EXPORTS = {
    "Cut": "measure", "Measure": "measure", "line_count": "measure", "line_of": "measure",
    "measure_rule": "measure",
    "SETTING_KEY": "registry", "all_consumers": "registry", "chosen_consumer_ids": "registry",
    "chosen_consumers": "registry", "consumers_patch": "registry", "default_consumer_ids": "registry",
    "get_consumer": "registry", "set_document_consumers": "registry",
    "ConsumerBudget": "report", "PruneBudget": "report", "append_warnings": "report", "budget_for": "report",
    "document_budget": "report", "prune_budget": "report", "tightest": "report",
    "Consumer": "rules", "LoadRule": "rules", "UserConsumer": "rules",
    "headings": "sections", "sections_past_cut": "sections",
    "BUILTIN_CONSUMERS": "table",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "BUILTIN_CONSUMERS", "SETTING_KEY", "Consumer", "ConsumerBudget", "Cut", "LoadRule", "Measure", "PruneBudget",
    "UserConsumer", "all_consumers", "append_warnings", "budget_for", "chosen_consumer_ids", "chosen_consumers",
    "consumers_patch", "default_consumer_ids", "document_budget", "get_consumer", "headings", "line_count",
    "line_of", "measure_rule", "project_append_warnings", "prune_budget", "sections_past_cut",
    "set_document_consumers", "tightest",
]


def project_append_warnings(project: object, relpath: str, before: str | bytes, after: str) -> list[str]:
    """:func:`append_warnings` for the consumers the project chose for ``relpath`` (``project.settings``).

    When the user's config defines no consumers of its own, the table is the shipped one as plain data
    (:func:`core.budget.registry.plain_table`): the same rules and measures, without importing pydantic.
    ``before`` may be the document's UTF-8 bytes: they are decoded only when a consumer may cut it.
    """
    from core.budget.registry import chosen_consumers, plain_table

    # PlainConsumer is Consumer's plain-data twin (the same rule_for), made without importing pydantic.
    consumers = chosen_consumers(relpath, getattr(project, "settings", None), plain_table())  # type: ignore[arg-type]
    if not any(_may_cut(consumer, relpath) for consumer in consumers):
        return []  # no limit and no read window: every consumer loads it whole (the measures are not needed)
    from core.budget.report import append_warnings

    if isinstance(before, bytes):  # advice only: a byte the replacement refused would not get here
        before = before.decode("utf-8", "replace")
    return append_warnings(relpath, before, after, consumers)


def _may_cut(consumer: Any, relpath: str) -> bool:
    """Whether the rule ``consumer`` reads ``relpath`` by has a limit or a read window (else it loads it whole)."""
    rule, _ = consumer.rule_for(relpath)
    return bool(rule.limits()) or rule.read_window is not None
