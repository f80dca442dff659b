"""The supersede marker: an entry that a newer one replaced keeps its text, marked in plain markdown.

The marker is ``[superseded YYYY-MM-DD]`` at the start of the entry's first line, after its list
marker if it has one::

    - [superseded 2026-12-01] Use the DB clock for lease expiry
    <!-- 2026-08-20 -->
    [superseded 2026-12-01] Use the DB clock for lease expiry

It is visible text, so every agent that loads the memory reads it (an HTML comment would be hidden
from the preview and easy to miss), the preview shows it as written (CommonMark renders an
undefined ``[label]`` literally), and the load budget counts it like any other text, because agents
still load the entry. Search leaves superseded entries out unless asked (``--include-superseded``).
"""

from __future__ import annotations

from datetime import UTC, date, datetime

from core.firewall.rules import compile_linear
from core.firewall.similarity import Entry, split_entries

_MARKER = compile_linear(r"^\s{0,8}(?:[-*+]\s+|\d{1,9}[.)]\s+)?\[superseded (\d{4}-\d{2}-\d{2})\]")


def marker(day: date | None = None) -> str:
    """The marker text for ``day`` (today, UTC, by default)."""
    return f"[superseded {(day or datetime.now(UTC).date()).isoformat()}]"


def superseded_on(entry_text: str) -> str | None:
    """The date an entry was superseded on, or ``None`` when it is not marked."""
    match = _MARKER.search(entry_text)
    return match.group(1) if match else None


def mark(text: str, entry: Entry, day: date | None = None) -> str:
    """``text`` with ``entry`` (found in it by :func:`~core.firewall.similarity.split_entries`) marked superseded."""
    if superseded_on(text[entry.start:entry.end]):
        return text
    line_end = text.find("\n", entry.start)
    first = text[entry.start:line_end if line_end >= 0 else len(text)]
    indent = len(first) - len(first.lstrip())
    body = first[indent:]
    prefix = ""
    for bullet in ("- ", "* ", "+ "):
        if body.startswith(bullet):
            prefix = bullet
            break
    else:
        digits = len(body) - len(body.lstrip("0123456789"))
        if digits and body[digits:digits + 2] in (". ", ") "):
            prefix = body[:digits + 2]
    at = entry.start + indent + len(prefix)
    return text[:at] + marker(day) + " " + text[at:]


def superseded_lines(text: str) -> list[tuple[int, int]]:
    """``(first line, last line)`` of every superseded entry of ``text`` (1-based, inclusive)."""
    out = []
    for entry in split_entries(text):
        if superseded_on(entry.text):
            out.append((entry.line, entry.line + entry.text.count("\n")))
    return out


def in_superseded(text: str, line: int) -> bool:
    """Whether ``line`` (1-based) of ``text`` lies in a superseded entry."""
    return any(first <= line <= last for first, last in superseded_lines(text))
