"""Activity: every recorded write to the project's memory, by every writer, newest first.

Three kinds of record make it up: an *append* (``core.storage.history.versions``'s events: the entry's text, who wrote
it, when), a *replacement* (a stored version: the content a save, prune, restore, merge… replaced,
with its source and author) and a *read* (``core.storage.readlog``: a client read lines of a document through
``memdesk serve`` or ``memdesk mcp``; never any text). Pure Python; the GUI's Activity view and the
bench read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from core.storage.history import versions as history

ActivityKind = Literal["append", "replace", "read"]

#: What a version's ``source`` did, in the operator's words (the version holds what it replaced).
_ACTIONS = {
    "editor": "saved in the editor", "write": "replaced", "cli-write": "replaced (CLI write)",
    "prune": "pruned", "restore": "restored a version", "rotate": "archived entries",
    "insights-merge": "merged insights", "insights-edit": "edited insights", "proposal": "updated a proposal",
    "mirror-import": "imported the mirror", "import": "imported", "migrate": "migrated legacy memory",
    "http": "replaced (HTTP)", "mcp": "replaced (MCP)", "save": "saved", "merge": "merged",
    "compact": "compacted", "dream": "dreamed", "extraction": "extraction",
}
#: Who wrote, when no author was recorded: guessed from the source only where it is unambiguous.
_SOURCE_WRITERS = {"editor": "operator", "cli-write": "cli", "cli-append": "cli", "http": "token", "mcp": "mcp",
                   "mirror-import": "program:mirror"}  # rows a sqlite mirror kept before they named it


@dataclass(frozen=True)
class ActivityEntry:
    """One write: when (UTC ISO), who, what kind, which document, and a one-line summary."""

    key: str  # "e<id>" for an append event, "v<id>" for a version
    at: str
    writer: str
    kind: ActivityKind
    path: str
    summary: str
    text: str = ""  # an append's entry text (to find it in the document)
    source: str = ""
    line: int = 0  # a read's first line (1-based; 0: not a read)

    @property
    def when(self) -> datetime:
        """The time as an aware datetime (UTC when the record has no zone)."""
        try:
            stamp = datetime.fromisoformat(self.at.replace("Z", "+00:00"))
        except ValueError:
            return datetime.fromtimestamp(0, UTC)
        return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


def writer_name(author: str | None, source: str) -> str:
    """The writer as shown: the recorded author (``kind:name``), else what the source says, else "unknown"."""
    if author and author.strip():
        return author.strip()
    return _SOURCE_WRITERS.get(source, "unknown")


def _first_line(text: str, limit: int = 160) -> str:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("<!--"):
            return stripped if len(stripped) <= limit else stripped[:limit - 1] + "…"
    return "(blank entry)"


def load_activity(root: Path | str, versions: list[history.Version] | None = None,
                  limit: int | None = None, *, reads: bool = True) -> list[ActivityEntry]:
    """Every recorded append, replacement and (with ``reads``) read of the project at ``root``, newest first.

    ``versions`` are the stored versions when the backend keeps them itself (postgres); by default
    ``core.storage.history.versions``'s. ``limit`` bounds each kind of record read.
    """
    entries: list[ActivityEntry] = []
    for event in history.list_events(root, limit=limit):
        entries.append(ActivityEntry(f"e{event.id}", event.created_at, writer_name(event.author, event.source),
                                     "append", event.path, _first_line(event.text), event.text, event.source))
    for version in versions if versions is not None else history.list_versions(root, limit=limit):
        action = _ACTIONS.get(version.source, version.source or "replaced")
        entries.append(ActivityEntry(f"v{version.id}", version.created_at, writer_name(version.author, version.source),
                                     "replace", version.path,
                                     f"{action} — the previous text ({version.size:,} bytes) is in History",
                                     source=version.source))
    if reads:
        entries.extend(read_entries(root, limit=limit or 10_000))
    entries.sort(key=lambda e: (e.when, e.key), reverse=True)
    return entries


def read_entries(root: Path | str, limit: int = 10_000) -> list[ActivityEntry]:
    """The project's recorded reads (``core.storage.readlog``), newest first; none when the log cannot be read."""
    from core.storage import readlog

    try:
        events = readlog.query(root=root, limit=limit)
    except OSError:
        return []
    out = []
    for event in events:
        reader = event.client or (f"token:{event.token}" if event.token else "unknown")
        if event.token and event.client and event.token not in event.client:
            reader = f"{event.client} (token:{event.token})"
        lines = f"lines {event.start_line:,}–{event.end_line:,} of {event.total_lines:,}"
        out.append(ActivityEntry(f"r{event.id}", event.at, reader, "read", event.path,
                                 f"read {lines} ({event.size:,} bytes) via {event.via}", source=event.via,
                                 line=max(event.start_line, 1)))
    return out


def entry_line(document: str, entry: ActivityEntry) -> int | None:
    """The 1-based line where an append's entry starts in ``document`` now (the last occurrence), or ``None``."""
    body = entry.text.strip()
    if entry.kind != "append" or not body:
        return None
    at = document.rfind(body)
    if at < 0:
        first = _first_line(entry.text, 10**6)
        at = document.rfind(first) if first != "(blank entry)" else -1
    return None if at < 0 else document.count("\n", 0, at) + 1
