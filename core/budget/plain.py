"""The shipped load rules as plain frozen dataclasses, for an append's budget check without pydantic.

:mod:`core.budget.table` writes the shipped consumers with these; :data:`~core.budget.table.BUILTIN_CONSUMERS`
are the same data validated into :class:`core.documents.load_rules.Consumer` models (tests keep fields and
defaults in step with :class:`core.documents.load_rules.LoadRule`). Everything that measures a document
(:func:`core.budget.measure.measure_rule`, :func:`core.budget.report.budget_for`) reads rules by their
attributes, so it takes either. :func:`core.budget.registry.plain_table` is the consumer table as
plain data when the user defined no consumers of their own: all an append's budget check needs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from core.documents.globs import glob_match

UNITS = ("lines", "bytes", "chars", "utf16", "tokens")


@dataclass(frozen=True)
class PlainRule:
    """:class:`core.documents.load_rules.LoadRule`'s fields, defaults and reading methods, without validation."""

    what: str
    applies_to: tuple[str, ...] = ("**",)
    lines: int | None = None
    bytes: int | None = None
    chars: int | None = None
    utf16: int | None = None
    tokens: int | None = None
    tokenizer: str = "estimate"
    load: str = "head"
    trim: bool = False
    whole_lines: bool = False
    read_window: int | None = None
    source: str = ""

    def limits(self) -> dict[str, int]:
        """The limits set on this rule, by unit."""
        return {unit: getattr(self, unit) for unit in UNITS if getattr(self, unit) is not None}

    def cuts(self) -> bool:
        """Whether this rule cuts documents at all (a rule with a read window only pages them)."""
        return bool(self.limits())

    def matches(self, relpath: str) -> bool:
        """Whether ``relpath`` matches one of the rule's globs."""
        return any(glob_match(glob, relpath) for glob in self.applies_to)


@dataclass(frozen=True)
class PlainConsumer:
    """:class:`core.documents.load_rules.Consumer` as plain data."""

    id: str
    name: str
    rules: tuple[PlainRule, ...]
    builtin: bool = False

    def rule_for(self, relpath: str) -> tuple[PlainRule, bool]:
        """The rule that reads ``relpath`` and whether it matched by its globs (as ``Consumer.rule_for``)."""
        for rule in self.rules:
            if rule.matches(relpath):
                return rule, True
        return self.rules[0], False

    def data(self) -> dict[str, Any]:
        """The fields, for ``Consumer.model_validate``."""
        return asdict(self)
