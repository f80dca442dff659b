"""Flags on memory that already exists: every rule over a whole document (``memdesk scan``, the editor).

Secrets and injection are scanned on the whole text; near-duplicates and contradictions compare each
entry with the entries before it, through one :class:`~core.firewall.similarity.EntryIndex` grown
entry by entry (each pair is reported once, on the later entry, naming the earlier one).
"""

from __future__ import annotations

from core.firewall.injection import scan_injection
from core.firewall.rules import DEFAULT_DEADLINE_S, Deadline, Finding, capped
from core.firewall.secrets import scan_secrets
from core.firewall.similarity import EntryIndex, scan_similar, split_entries


def scan_document(text: str, *, deadline_s: float = 10 * DEFAULT_DEADLINE_S) -> list[Finding]:
    """Every finding of every rule in ``text``, ordered by position."""
    text = capped(text)
    deadline = Deadline(deadline_s)
    findings = scan_secrets(text, deadline) + scan_injection(text, deadline)
    index = EntryIndex()
    for entry in split_entries(text):
        for found in scan_similar(entry.text, index, deadline):
            findings.append(Finding(found.rule, found.kind, entry.line, (entry.start, entry.end), found.message))
        index.add(entry)
    return sorted(findings, key=lambda f: (f.span[0], f.rule))
