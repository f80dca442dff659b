"""Where a load rule cuts a text: pure functions over a ``str``, fast enough to run after each pause in typing.

Lines are numbered from 1 and end at ``\\n``; a final newline does not start a line of its own. A cut is
the offset (a ``str`` index) where loading stops; :class:`Cut` turns it into the first line that is
not wholly loaded. Size limits count UTF-8 bytes, characters (code points), UTF-16 code units (what a
JavaScript ``length`` counts) or tokens (see :mod:`core.budget.tokens`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.budget.tokens import TokenCounter, token_counter

if TYPE_CHECKING:  # pydantic models; a rule is read by its attributes (core.budget.plain has the same)
    from core.budget.rules import LoadRule, Unit

__all__ = ["Cut", "Measure", "RuleResult", "line_count", "line_of", "measure_rule"]

# What JavaScript's String.prototype.trim removes that str.strip() keeps.
_JS_EXTRA_SPACE = "\ufeff"


@dataclass(frozen=True)
class Measure:
    """How much of one unit the document uses against the rule's limit."""

    unit: Unit
    used: int
    limit: int
    estimated: bool = False

    def to_json(self) -> dict[str, object]:
        """camelCase JSON."""
        return {"unit": self.unit, "used": self.used, "limit": self.limit, "estimated": self.estimated}


@dataclass(frozen=True)
class Cut:
    """Where loading stops: ``first_line`` is the first line not wholly loaded (1-based).

    ``kind`` is ``cut`` (the rest is never loaded), ``window`` (one read ends here; later lines need more
    reads) or ``middle`` (head and tail are loaded; loading resumes at ``resume_line``).
    """

    kind: str
    first_line: int
    offset: int
    partial: bool
    binding: str
    resume_line: int | None = None
    resume_offset: int | None = None

    @property
    def last_loaded_line(self) -> int:
        """The last line loaded whole before the cut (0 when none is)."""
        return self.first_line - 1

    def to_json(self) -> dict[str, object]:
        """camelCase JSON."""
        return {"kind": self.kind, "firstLine": self.first_line, "offset": self.offset, "partial": self.partial,
                "binding": self.binding, "resumeLine": self.resume_line, "resumeOffset": self.resume_offset}


@dataclass(frozen=True)
class RuleResult:
    """A rule applied to a text: the measures, the cut (``None``: all of it is loaded), and notes."""

    measures: tuple[Measure, ...]
    cut: Cut | None
    total_lines: int
    notes: tuple[str, ...] = ()


def line_count(text: str) -> int:
    """Lines in ``text`` (a final newline does not start a new line)."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def line_of(text: str, offset: int) -> int:
    """The 1-based line holding ``offset`` (a newline belongs to the line it ends)."""
    return text.count("\n", 0, max(0, offset)) + 1


def _trim_bounds(text: str) -> tuple[int, int]:
    stripped = text.strip()
    while stripped[:1] == _JS_EXTRA_SPACE or stripped[-1:] == _JS_EXTRA_SPACE:  # JavaScript trims a BOM too
        stripped = stripped.strip(_JS_EXTRA_SPACE).strip()
    if not stripped:
        return 0, 0
    start = text.find(stripped)
    return start, start + len(stripped)


def _prefix_chars(body: str, unit: Unit, n: int, counter: TokenCounter | None) -> int:
    """How many leading characters of ``body`` fit in ``n`` units."""
    if unit == "chars" or (unit in ("bytes", "utf16") and body.isascii()):
        return min(n, len(body))
    if unit == "bytes":
        return len(body[:n].encode("utf-8")[:n].decode("utf-8", "ignore"))
    if unit == "utf16":
        return len(body[:n].encode("utf-16-le")[: 2 * n].decode("utf-16-le", "ignore"))
    assert counter is not None
    return counter.prefix_chars(body, n)


def _suffix_chars(body: str, unit: Unit, n: int, counter: TokenCounter | None) -> int:
    """How many trailing characters of ``body`` fit in ``n`` units."""
    if n <= 0:
        return 0
    if unit == "chars" or (unit in ("bytes", "utf16") and body.isascii()):
        return min(n, len(body))
    if unit == "bytes":
        return len(body[-n:].encode("utf-8")[-n:].decode("utf-8", "ignore"))
    if unit == "utf16":
        return len(body[-n:].encode("utf-16-le")[-2 * n:].decode("utf-16-le", "ignore"))
    assert counter is not None
    return counter.suffix_chars(body, n)


def _used(body: str, unit: Unit, counter: TokenCounter | None) -> int:
    if unit == "lines":
        return line_count(body)
    if unit == "chars":
        return len(body)
    if unit == "bytes":
        return len(body) if body.isascii() else len(body.encode("utf-8"))
    if unit == "utf16":
        return len(body) if body.isascii() else len(body.encode("utf-16-le")) // 2
    assert counter is not None
    return counter.count(body)


def _nth_newline(text: str, start: int, end: int, n: int) -> int:
    """Offset of the ``n``-th newline at or after ``start`` (before ``end``), or -1."""
    pos = start - 1
    for _ in range(n):
        pos = text.find("\n", pos + 1, end)
        if pos < 0:
            return -1
    return pos


def _cut_at(text: str, kind: str, stop: int, binding: str, start: int) -> Cut:
    if stop <= start or text[stop - 1] == "\n":  # stops at a line start: that line is not loaded at all
        return Cut(kind, line_of(text, stop), stop, False, binding)
    if text[stop] == "\n":  # stops at the end of a line: the line is loaded whole
        return Cut(kind, line_of(text, stop) + 1, stop, False, binding)
    return Cut(kind, line_of(text, stop), stop, True, binding)


def measure_rule(text: str, rule: LoadRule, memo: dict | None = None) -> RuleResult:
    """Apply ``rule`` to ``text``: the used/limit measures and where loading stops.

    ``memo`` (a dict kept for one text) shares whole-text counts between the rules of several consumers.
    """
    memo = {} if memo is None else memo
    bounds = memo.setdefault(("bounds", rule.trim), _trim_bounds(text) if rule.trim else (0, len(text)))
    start, end = bounds
    body = text[start:end]
    limits = rule.limits()
    counter = token_counter(rule.tokenizer) if "tokens" in limits else None
    notes = (counter.note,) if counter is not None and counter.note else ()

    def used(unit: Unit) -> int:
        key = (unit, start, end, counter.name if unit == "tokens" and counter is not None else "")
        if key not in memo:
            memo[key] = _used(body, unit, counter)
        return memo[key]

    measures = tuple(Measure(unit, used(unit), limit, unit == "tokens" and counter.estimated)  # type: ignore[union-attr]
                     for unit, limit in limits.items())
    total = memo.setdefault("total_lines", line_count(text))
    if not limits:
        if rule.read_window is None:
            return RuleResult(measures, None, total, notes)
        window = (Measure("lines", line_count(body), rule.read_window),)
        nl = _nth_newline(text, start, end, rule.read_window)
        cut = _cut_at(text, "window", nl, "window", start) if 0 <= nl < end - 1 else None
        return RuleResult(window, cut, total, notes)
    if rule.load == "head_tail":
        return RuleResult(measures, _head_tail(text, body, start, end, rule, counter), total, notes)
    stop, binding = end, ""
    if "lines" in limits:
        nl = _nth_newline(text, start, end, limits["lines"])
        if 0 <= nl < end - 1:
            stop, binding = nl, "lines"
    for unit in ("bytes", "chars", "utf16", "tokens"):
        if unit not in limits:
            continue
        k = start + _prefix_chars(text[start:stop], unit, limits[unit], counter)
        if k < stop:
            if rule.whole_lines:
                nl = text.rfind("\n", start, k + 1)
                k = nl if nl > start else k
            stop, binding = k, unit
    if stop >= end:
        return RuleResult(measures, None, total, notes)
    return RuleResult(measures, _cut_at(text, "cut", stop, binding, start), total, notes)


def _head_tail(text: str, body: str, start: int, end: int, rule: LoadRule,
               counter: TokenCounter | None) -> Cut | None:
    unit, limit = next(iter(rule.limits().items()))  # a head_tail rule has one size limit
    if _used(body, unit, counter) <= limit:
        return None
    head = start + _prefix_chars(body, unit, limit // 2, counter)
    resume = end - _suffix_chars(body, unit, limit - limit // 2, counter)
    cut = _cut_at(text, "middle", head, unit, start)
    resume_line = line_of(text, resume) + (0 if resume <= start or text[resume - 1] == "\n" else 1)
    return Cut("middle", cut.first_line, cut.offset, cut.partial, unit, resume_line, resume)
