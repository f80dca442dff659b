"""``memory_recent`` and ``memory_history``: what changed, when and by whom, from the project's history."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from core.project.model import Project
from core.server.mcp_models import Change, HistoryResult, RecentResult, VersionInfo
from core.server.refusals import Refusal
from core.storage.fileio import content_hash
from core.storage.history.versions import list_events, source_label

__all__ = ["document_history", "parse_since", "recent_changes"]

_RELATIVE = re.compile(r"^\s*(\d{1,6})\s*(m|min|h|d|w)\s*$", re.IGNORECASE)
_UNITS = {"m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(value: str | None, *, now: datetime | None = None, default: timedelta = timedelta(days=1)) -> datetime:
    """A time from ``value``: ISO 8601 (``2026-12-01``, ``2026-12-01T09:00:00Z``) or relative (``30m``, ``24h``,
    ``7d``, ``2w``); ``None`` is ``default`` ago. Times without a zone are UTC."""
    now = now or datetime.now(UTC)
    if value is None or not value.strip():
        return now - default
    rel = _RELATIVE.match(value)
    if rel:
        return now - timedelta(seconds=int(rel.group(1)) * _UNITS[rel.group(2).lower()])
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise Refusal("INVALID_ARGUMENT", f"since {value!r} is not a time: give ISO 8601 (2026-12-01T09:00:00Z) or "
                      "a span back from now (30m, 24h, 7d)", next="the same tool with since fixed") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _when(stamp: str) -> datetime:
    try:
        t = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def recent_changes(project: Project, since: datetime, *, path: str | None = None, limit: int = 50,
                   allowed: Callable[[str], bool] = lambda _p: True) -> RecentResult:
    """Appends and replacements of the project's documents (or of ``path``) since ``since``, newest first."""
    out: list[Change] = []
    scan = max(limit * 4, 200)
    for v in project.list_versions(path, scan):
        if _when(v.created_at) >= since and allowed(v.path):
            out.append(Change(time=v.created_at, path=v.path, kind="replace", source=v.source, label=v.label,
                              author=v.author, size=v.size))
    # a backend with its own history (postgres) keeps only the firewall's reports here (core.firewall.imports)
    for e in list_events(project.root, path, scan):
        if project.backend_history and e.source != "firewall-import":
            continue
        if _when(e.created_at) >= since and allowed(e.path):
            text = e.text if len(e.text) <= 400 else e.text[:399] + "…"
            out.append(Change(time=e.created_at, path=e.path, kind="append", source=e.source,
                              label=source_label(e.source), author=e.author, size=e.size, text=text))
    out.sort(key=lambda c: _when(c.time), reverse=True)
    return RecentResult(since=since.isoformat(timespec="seconds"), changes=out[:limit])


def document_history(project: Project, rel: str, *, limit: int = 50) -> HistoryResult:
    """The stored versions of ``rel``, newest first, with the document's current hash."""
    current = project.read(rel) if project.exists(rel) else None
    versions = [VersionInfo(id=v.id, hash=v.hash, size=v.size, createdAt=v.created_at, source=v.source,
                            label=v.label, author=v.author) for v in project.list_versions(rel, limit)]
    return HistoryResult(path=rel, currentHash=None if current is None else content_hash(current), versions=versions)
