"""Flags on memory that already exists: every rule over a whole document (``memdesk scan``, the editor).

Secrets and injection are scanned on the whole text; near-duplicates and contradictions compare each
entry with the entries before it, through one :class:`~core.firewall.similarity.EntryIndex` grown
entry by entry (each pair is reported once, on the later entry, naming the earlier one).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.firewall.injection import scan_injection
from core.firewall.rules import DEFAULT_DEADLINE_S, Deadline, Finding, capped
from core.firewall.secrets import scan_secrets
from core.firewall.similarity import Entry, EntryIndex, match_entry, split_entries


@dataclass(frozen=True)
class Mark:
    """A finding in a document, with the earlier entry a near-duplicate or contradiction pairs it with."""

    finding: Finding
    other: Entry | None = None


def scan_marks(text: str, *, deadline_s: float = 10 * DEFAULT_DEADLINE_S) -> list[Mark]:
    """Every finding of every rule in ``text`` (pairs with their other entry), ordered by position."""
    text = capped(text)
    deadline = Deadline(deadline_s)
    marks = [Mark(f) for f in scan_secrets(text, deadline) + scan_injection(text, deadline)]
    index = EntryIndex()
    for entry in split_entries(text):
        found = match_entry(entry.text, index, deadline)
        if found is not None:
            kind, message, other = found
            marks.append(Mark(Finding(kind, kind, entry.line, (entry.start, entry.end), message), other))  # type: ignore[arg-type]
        index.add(entry)
    return sorted(marks, key=lambda m: (m.finding.span[0], m.finding.rule))


def scan_document(text: str, *, deadline_s: float = 10 * DEFAULT_DEADLINE_S) -> list[Finding]:
    """Every finding of every rule in ``text``, ordered by position."""
    return [m.finding for m in scan_marks(text, deadline_s=deadline_s)]
