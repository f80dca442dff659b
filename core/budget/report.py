"""What a consumer loads of one document, the warning an append earns, and a prune's before/after.

Pure functions of text: the CLI, the servers, the project model's append and the app all call these.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from core.budget.measure import Cut, Measure, line_of, measure_rule
from core.budget.registry import resolve_consumers
from core.budget.sections import SectionCut, headings, sections_cut
from core.documents.runs import common_prefix

if TYPE_CHECKING:  # pydantic models; rules are read by their attributes (core.budget.plain has the same)
    from core.budget.rules import Consumer

__all__ = ["ConsumerBudget", "PruneBudget", "append_warnings", "budget_for", "document_budget", "prune_budget",
           "tightest", "unit_label", "with_sections"]

_UNIT_LABELS = {"lines": "lines", "bytes": "bytes", "chars": "characters", "utf16": "characters",
                "tokens": "tokens"}


def unit_label(unit: str, estimated: bool = False) -> str:
    """The word for a unit in messages ('≈ tokens' when estimated)."""
    word = _UNIT_LABELS.get(unit, unit)
    return f"≈ {word}" if estimated else word


@dataclass(frozen=True)
class ConsumerBudget:
    """One consumer's view of one document: used/limit, where loading stops, sections left out."""

    consumer_id: str
    consumer_name: str
    path: str
    what: str
    matched: bool
    source: str
    measures: tuple[Measure, ...]
    cut: Cut | None
    total_lines: int
    sections: tuple[SectionCut, ...]
    notes: tuple[str, ...]

    @property
    def loaded_all(self) -> bool:
        """True when the consumer loads every line (a read window counts: one read does not)."""
        return self.cut is None

    def fraction(self) -> float:
        """The largest used/limit ratio (1.0 and more: the document reaches the cut)."""
        return max((m.used / m.limit for m in self.measures if m.limit), default=0.0)

    def binding(self) -> Measure | None:
        """The measure that makes the cut (or the fullest one when nothing is cut)."""
        if self.cut is not None:
            for m in self.measures:
                if m.unit == self.cut.binding or (self.cut.kind == "window" and m.unit == "lines"):
                    return m
        return max(self.measures, key=lambda m: m.used / m.limit, default=None)

    def usage_text(self) -> str:
        """``1,293 / 200 lines · 102,145 / 25,000 characters``."""
        return " · ".join(f"{m.used:,} / {m.limit:,} {unit_label(m.unit, m.estimated)}" for m in self.measures)

    def cut_text(self) -> str:
        """Where loading stops, in words."""
        c = self.cut
        if c is None:
            if not self.measures:
                return "loaded whole"
            return "all of it is loaded"
        part = " (part of it)" if c.partial else ""
        if c.kind == "window":
            limit = self.measures[0].limit if self.measures else 0
            reads = -(-self.total_lines // limit) if limit else 0
            return (f"one read returns lines 1–{c.last_loaded_line:,}; line {c.first_line:,} on needs another "
                    f"read ({reads} reads for {self.total_lines:,} lines)")
        if c.kind == "middle":
            return (f"the middle is dropped: lines {c.first_line:,}{part}–{(c.resume_line or 0) - 1:,} are not "
                    "loaded")
        return f"line {c.first_line:,}{part} and everything after it is not loaded"

    def summary(self) -> str:
        """One line for the CLI and tooltips."""
        usage = self.usage_text()
        wholly = sum(1 for s in self.sections if s.wholly)
        partly = len(self.sections) - wholly
        tail = f"; {wholly} section(s) wholly past the cut, {partly} partly" if self.sections else ""
        return f"{self.consumer_name}: {self.cut_text()}{' — ' + usage if usage else ''}{tail}"

    def to_json(self) -> dict[str, object]:
        """camelCase JSON."""
        return {
            "consumer": self.consumer_id, "name": self.consumer_name, "path": self.path, "what": self.what,
            "matchedByPath": self.matched, "source": self.source,
            "measures": [m.to_json() for m in self.measures], "loadedAll": self.loaded_all,
            "cut": self.cut.to_json() if self.cut else None,
            "firstUnloadedLine": self.cut.first_line if self.cut else None,
            "totalLines": self.total_lines, "sections": [s.to_json() for s in self.sections],
            "notes": list(self.notes), "summary": self.summary(),
        }


def budget_for(text: str, relpath: str, consumer: Consumer, heads: list | None = None,
               memo: dict | None = None) -> ConsumerBudget:
    """How ``consumer`` loads ``text`` (the document at ``relpath``); ``heads=[]`` skips the sections."""
    rule, matched = consumer.rule_for(relpath)
    result = measure_rule(text, rule, memo)
    if result.cut is not None and heads is None:
        heads = headings(text)
    sections = tuple(sections_cut(heads or [], result.cut))
    notes = result.notes + (() if matched else (
        f"{relpath} is read by {consumer.name}'s rule for its own memory file ({rule.what})",))
    return ConsumerBudget(consumer.id, consumer.name, relpath, rule.what, matched, rule.source,
                          result.measures, result.cut, result.total_lines, sections, notes)


def document_budget(text: str, relpath: str, consumers: Iterable[str | Consumer], *,
                    sections: bool = True) -> list[ConsumerBudget]:
    """Every chosen consumer's view of one document (headings parsed once; none when not ``sections``)."""
    found = resolve_consumers(consumers)
    heads = headings(text) if found and sections else []
    memo: dict = {}
    return [budget_for(text, relpath, c, heads, memo) for c in found]


def with_sections(budget: ConsumerBudget, text: str) -> ConsumerBudget:
    """``budget`` with the sections its cut leaves out (for a budget computed without them)."""
    if budget.cut is None or budget.sections:
        return budget
    return replace(budget, sections=tuple(sections_cut(headings(text), budget.cut)))


def tightest(budgets: Sequence[ConsumerBudget]) -> ConsumerBudget | None:
    """The budget whose loading stops earliest (a hard cut before a read window); ``None`` for none."""
    def key(b: ConsumerBudget) -> tuple[int, int, float]:
        if b.cut is None:
            return (2, 0, -b.fraction())
        return (1 if b.cut.kind == "window" else 0, b.cut.first_line, -b.fraction())

    return min(budgets, key=key, default=None)


def append_warnings(relpath: str, before: str, after: str, consumers: Iterable[str | Consumer]) -> list[str]:
    """Warnings when the text appended to ``before`` (giving ``after``) falls past a consumer's cut.

    For example ``entry falls past claude-code's cut (line 201 of 200)``. Empty when every chosen
    consumer still loads the new text. The write itself is never refused.
    """
    start = common_prefix(before, after)
    while start < len(after) and after[start].isspace():  # the entry's separator is not the entry
        start += 1
    if start >= len(after):
        return []
    entry_line = line_of(after, start)
    out = []
    memo: dict = {}
    for consumer in resolve_consumers(consumers):
        b = budget_for(after, relpath, consumer, heads=[], memo=memo)
        c = b.cut
        if c is None:
            continue
        m = b.binding()
        limit = f"{m.limit:,} {unit_label(m.unit, m.estimated)}" if m is not None else "load"
        if c.kind == "middle":
            old = budget_for(before, relpath, consumer, heads=[]).cut
            if old is None or old.first_line > c.first_line or (old.resume_line or 0) < (c.resume_line or 0):
                out.append(f"the memory is now over {consumer.id}'s {limit} budget: lines {c.first_line:,}–"
                           f"{(c.resume_line or 0) - 1:,} are dropped from the middle")
        elif start < c.offset:  # everything from ``start`` on is the entry: it runs past the cut
            out.append(f"entry is cut by {consumer.id}'s limit: it starts at line {entry_line:,} and "
                       f"{consumer.id} stops loading at line {c.first_line:,}")
        elif c.kind == "window":
            out.append(f"entry falls past {consumer.id}'s first read (line {entry_line:,}; a read returns "
                       f"{m.limit if m else 0:,} lines)")
        elif m is not None and m.unit == "lines":
            out.append(f"entry falls past {consumer.id}'s cut (line {entry_line:,} of {m.limit:,})")
        else:
            out.append(f"entry falls past {consumer.id}'s cut (line {entry_line:,}; {consumer.id} loads "
                       f"{limit}, up to line {c.last_loaded_line:,})")
    return out


@dataclass(frozen=True)
class PruneBudget:
    """One consumer's budget before and after a prune."""

    before: ConsumerBudget
    after: ConsumerBudget

    def summary(self) -> str:
        """``Claude Code: cut at line 167 (31 sections left out) → all 180 lines loaded``."""
        def state(b: ConsumerBudget) -> str:
            if b.cut is None:
                return f"all {b.total_lines:,} lines loaded"
            left_out = f", {len(b.sections)} section(s) left out" if b.sections else ""
            word = "first read ends" if b.cut.kind == "window" else "cut"
            return f"{word} at line {b.cut.first_line:,} of {b.total_lines:,}{left_out}"

        return f"{self.before.consumer_name}: {state(self.before)} → {state(self.after)}"

    def to_json(self) -> dict[str, object]:
        """camelCase JSON."""
        return {"consumer": self.before.consumer_id, "before": self.before.to_json(),
                "after": self.after.to_json(), "summary": self.summary()}


def prune_budget(before: str, after: str, consumers: Iterable[str | Consumer] = ("fusion",),
                 relpath: str = ".fusion/memory.md") -> list[PruneBudget]:
    """Each consumer's budget of the memory before and after a proposed prune (for the prune view)."""
    found = resolve_consumers(consumers)
    old, new = document_budget(before, relpath, found), document_budget(after, relpath, found)
    return [PruneBudget(b, a) for b, a in zip(old, new, strict=True)]
