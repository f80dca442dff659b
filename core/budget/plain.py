"""The shipped load rules as plain frozen records (:class:`core.frozen.Record`), for an append's budget check without pydantic.

:mod:`core.budget.table` writes the shipped consumers with these; :data:`~core.budget.table.BUILTIN_CONSUMERS`
are the same data validated into :class:`core.documents.load_rules.Consumer` models (tests keep fields and
defaults in step with :class:`core.documents.load_rules.LoadRule`). Everything that measures a document
(:func:`core.budget.measure.measure_rule`, :func:`core.budget.report.budget_for`) reads rules by their
attributes, so it takes either. :func:`core.budget.registry.plain_table` is the consumer table as
plain data when the user defined no consumers of their own: all an append's budget check needs.
"""

from __future__ import annotations

from typing import Any

from core.documents.globs import glob_match
from core.frozen import Record

UNITS = ("lines", "bytes", "chars", "utf16", "tokens")


class PlainRule(Record):
    """:class:`core.documents.load_rules.LoadRule`'s fields, defaults and reading methods, without validation."""

    __slots__ = _fields = ("what", "applies_to", "lines", "bytes", "chars", "utf16", "tokens", "tokenizer", "load",
                           "trim", "whole_lines", "read_window", "source")
    what: str
    applies_to: tuple[str, ...]
    lines: int | None
    bytes: int | None
    chars: int | None
    utf16: int | None
    tokens: int | None
    tokenizer: str
    load: str
    trim: bool
    whole_lines: bool
    read_window: int | None
    source: str

    def __init__(self, what: str, applies_to: tuple[str, ...] = ("**",), lines: int | None = None,
                 bytes: int | None = None, chars: int | None = None, utf16: int | None = None,  # noqa: A002
                 tokens: int | None = None, tokenizer: str = "estimate", load: str = "head", trim: bool = False,
                 whole_lines: bool = False, read_window: int | None = None, source: str = "") -> None:
        self._set(what=what, applies_to=applies_to, lines=lines, bytes=bytes, chars=chars, utf16=utf16,
                  tokens=tokens, tokenizer=tokenizer, load=load, trim=trim, whole_lines=whole_lines,
                  read_window=read_window, source=source)

    def limits(self) -> dict[str, int]:
        """The limits set on this rule, by unit."""
        return {unit: getattr(self, unit) for unit in UNITS if getattr(self, unit) is not None}

    def cuts(self) -> bool:
        """Whether this rule cuts documents at all (a rule with a read window only pages them)."""
        return bool(self.limits())

    def matches(self, relpath: str) -> bool:
        """Whether ``relpath`` matches one of the rule's globs."""
        return any(glob_match(glob, relpath) for glob in self.applies_to)


class PlainConsumer(Record):
    """:class:`core.documents.load_rules.Consumer` as plain data."""

    __slots__ = _fields = ("id", "name", "rules", "builtin")
    id: str
    name: str
    rules: tuple[PlainRule, ...]
    builtin: bool

    def __init__(self, id: str, name: str, rules: tuple[PlainRule, ...], builtin: bool = False) -> None:  # noqa: A002
        self._set(id=id, name=name, rules=rules, builtin=builtin)

    def rule_for(self, relpath: str) -> tuple[PlainRule, bool]:
        """The rule that reads ``relpath`` and whether it matched by its globs (as ``Consumer.rule_for``)."""
        for rule in self.rules:
            if rule.matches(relpath):
                return rule, True
        return self.rules[0], False

    def data(self) -> dict[str, Any]:
        """The fields, for ``Consumer.model_validate``."""
        return {"id": self.id, "name": self.name, "builtin": self.builtin,
                "rules": tuple({f: getattr(r, f) for f in r._fields} for r in self.rules)}
