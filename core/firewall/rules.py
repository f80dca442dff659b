"""The firewall's rule vocabulary: a named rule, what one match says, and the caps every rule runs within.

Every rule is linear in its input: plain string scans, or patterns compiled with RE2 (``google-re2``),
which matches in time linear in the text whatever the pattern (no backtracking). Input is capped
before any rule sees it (:data:`MAX_SCREEN_CHARS`, :data:`MAX_LINE_CHARS`) and each rule checks a
deadline between lines, so a hostile 1 MiB entry is screened within a bounded time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Literal, NamedTuple

from core.frozen import Record

if TYPE_CHECKING:
    import re2

Kind = Literal["secret", "injection", "near-duplicate", "contradiction"]
KINDS: tuple[Kind, ...] = ("secret", "injection", "near-duplicate", "contradiction")

#: Text screened per write: the document limit (1 MiB of UTF-8 is at most this many characters).
MAX_SCREEN_CHARS = 1_048_576
#: One line is screened up to this many characters; the rest of a longer line is screened as further chunks.
MAX_LINE_CHARS = 16_384
#: Default time a whole screen may take before it counts as a failed rule (fail closed / open).
DEFAULT_DEADLINE_S = 2.0

#: RE2's memory budget per pattern.
RE2_MAX_MEM = 64 << 20


def compile_linear(pattern: str, *, ignore_case: bool = False) -> re2._Regexp:
    """Compile ``pattern`` with RE2 (linear-time matching); raise ``ValueError`` if RE2 cannot take it.

    RE2 is loaded on the first compile: most writes need none (:mod:`core.firewall.prefilter`)."""
    import re2

    options = re2.Options()
    options.log_errors = False
    options.max_mem = RE2_MAX_MEM
    options.case_sensitive = not ignore_case
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        raise ValueError(f"pattern not accepted by RE2: {pattern[:60]!r}: {exc}") from exc


class Finding(Record):
    """One match of a rule: ``line`` is 1-based in the screened text, ``span`` character offsets in it (a frozen
    :class:`~core.frozen.Record`, not a dataclass: the screen is on every ``memdesk append`` process's path)."""

    __slots__ = _fields = ("rule", "kind", "line", "span", "message")
    rule: str
    kind: Kind
    line: int
    span: tuple[int, int]
    message: str

    def __init__(self, rule: str, kind: Kind, line: int, span: tuple[int, int], message: str) -> None:
        self._set(rule=rule, kind=kind, line=line, span=span, message=message)

    def to_json(self) -> dict[str, object]:
        """The ``{rule, kind, line, span, message}`` shape every surface reports."""
        return {"rule": self.rule, "kind": self.kind, "line": self.line, "span": list(self.span),
                "message": self.message}


# The functional form (UP014 asks for the class form): real types, not the strings typing compiles one
# by one for the class form under `from __future__ import annotations` (issue 19 item 7).
RuleInfo = NamedTuple("RuleInfo", [  # noqa: UP014
    ("name", str),
    ("kind", Kind),
    ("catches", str),
    ("source", str),
    ("hit", str),
    ("near_miss", str),
])
RuleInfo.__doc__ = "A rule's name, kind and documentation (the docs' rules table is generated from these)."


class RuleTimeout(Exception):
    """A rule ran past the screen's deadline."""


class Deadline:
    """A monotonic deadline that rules check between lines."""

    def __init__(self, seconds: float = DEFAULT_DEADLINE_S, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._end = clock() + seconds

    def check(self, rule: str) -> None:
        """Raise :class:`RuleTimeout` naming ``rule`` once the deadline has passed."""
        if self._clock() > self._end:
            raise RuleTimeout(f"rule {rule} ran out of time")


def iter_lines(text: str) -> Iterator[tuple[int, int, str]]:
    """Yield ``(line number, offset of the line in text, line)`` for each line, long lines cut into chunks."""
    offset = 0
    number = 0
    for raw in text.split("\n"):
        number += 1
        if len(raw) <= MAX_LINE_CHARS:
            yield number, offset, raw
        else:  # chunks overlap by a little so a token on a boundary is still seen whole
            step = MAX_LINE_CHARS - 256
            for start in range(0, len(raw), step):
                yield number, offset + start, raw[start:start + MAX_LINE_CHARS]
        offset += len(raw) + 1


def capped(text: str) -> str:
    """``text`` cut to :data:`MAX_SCREEN_CHARS`."""
    return text if len(text) <= MAX_SCREEN_CHARS else text[:MAX_SCREEN_CHARS]
