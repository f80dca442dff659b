"""MCP ``resources/list`` in pages, the MCP way: at most :data:`PAGE` resources an answer, and an opaque
``nextCursor`` while more follow (the SDK's client and the Inspector pass it back as ``cursor``).

A listing longer than one page is kept, as the caller may read it, for :data:`KEEP_SECONDS` (one a caller, a
few in all), so following its pages costs one listing and the pages agree with each other. A cursor names that kept listing, the position in
it and the last resource given; when the kept listing is gone (expired, the server restarted) or was made for
another caller, the caller's listing is made again and the pages go on after that last resource. A cursor this
server did not give (or whose last resource is gone from a listing made again) is refused with a JSON-RPC
error naming it; the caller lists again from the start.
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["KEEP_SECONDS", "PAGE", "BadCursor", "Entry", "ResourcePages"]

#: Resources in one answer (about 250 KB of JSON): a project's usual few dozen documents come in one.
PAGE = 1000
#: How long a listing longer than one page is kept for its next pages.
KEEP_SECONDS = 120.0
_KEPT = 4  # 20,000 resources kept are ~10 MB: a few callers' at once at most
_MAX_CURSOR = 1024


@dataclass(frozen=True, slots=True)
class Entry:
    """One resource of a listing: ``memdesk://KEY/PATH``, its name, description and size."""

    uri: str
    name: str
    description: str
    size: int | None


class BadCursor(ValueError):
    """A ``cursor`` this server cannot continue from; the message names it and says what to do."""


def _shown(cursor: str) -> str:
    return repr(cursor if len(cursor) <= 60 else cursor[:60] + "…")


class ResourcePages:
    """Pages of the caller's listing; ``listing(who)`` makes the whole listing ``who`` may see, in order."""

    def __init__(self, listing: Callable[[Any], list[Entry]], page: int = PAGE) -> None:
        self.listing = listing
        self.size = page
        self._kept: OrderedDict[str, tuple[float, Any, list[Entry]]] = OrderedDict()
        self._lock = threading.Lock()

    def page(self, who: Any, cursor: str | None) -> tuple[list[Entry], str | None]:
        """The page ``cursor`` names (the first without one) for caller ``who``, and the next page's cursor."""
        if cursor is None:
            entries = self.listing(who)
            if len(entries) <= self.size:
                return entries, None
            return self._answer(self._keep(who, entries), entries, 0)
        kept_id, index, after = self._decode(cursor)
        kept = self._get(kept_id, who)
        if kept is not None and 0 < index <= len(kept) and kept[index - 1].uri == after:
            return self._answer(kept_id, kept, index)
        entries = self.listing(who)  # the kept listing is gone or not the caller's: list again, go on after
        at = next((i for i, e in enumerate(entries) if e.uri == after), None)
        if at is None:
            raise BadCursor(f"cursor {_shown(cursor)} continues after {after!r}, which this caller's listing does not "
                            "hold (gone since, or not one it may read); list again without a cursor")
        return self._answer(self._keep(who, entries), entries, at + 1)

    def _answer(self, kept_id: str, entries: list[Entry], start: int) -> tuple[list[Entry], str | None]:
        part = entries[start:start + self.size]
        end = start + len(part)
        if end >= len(entries) or not part:
            return part, None
        return part, self._encode(kept_id, end, part[-1].uri)

    # -- kept listings ---------------------------------------------------------------------------
    def _keep(self, who: Any, entries: list[Entry]) -> str:
        kept_id = secrets.token_urlsafe(9)
        now = time.monotonic()
        with self._lock:
            self._expire(now)
            for key in [k for k, (_at, w, _e) in self._kept.items() if w == who]:
                del self._kept[key]  # one kept listing a caller: its older one's cursors list again, then go on
            self._kept[kept_id] = (now, who, entries)
            while len(self._kept) > _KEPT:
                self._kept.popitem(last=False)
        return kept_id

    def _get(self, kept_id: str, who: Any) -> list[Entry] | None:
        with self._lock:
            self._expire(time.monotonic())
            got = self._kept.get(kept_id)
        if got is None or got[1] != who:  # another caller's listing is never shown: its scope may be wider
            return None
        return got[2]

    def _expire(self, now: float) -> None:
        for key in [k for k, (at, _who, _e) in self._kept.items() if now - at > KEEP_SECONDS]:
            del self._kept[key]

    # -- cursors ---------------------------------------------------------------------------------
    @staticmethod
    def _encode(kept_id: str, index: int, after: str) -> str:
        raw = json.dumps({"k": kept_id, "i": index, "a": after}, separators=(",", ":")).encode("utf-8")
        return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")

    @staticmethod
    def _decode(cursor: str) -> tuple[str, int, str]:
        problem = "is not a cursor this server gave (pass back the nextCursor of the page before, unchanged)"
        if not isinstance(cursor, str) or not cursor or len(cursor) > _MAX_CURSOR:
            raise BadCursor(f"cursor {_shown(str(cursor))} {problem}; list again without a cursor")
        try:
            value = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("utf-8"))
        except (binascii.Error, ValueError, UnicodeDecodeError):
            value = None
        if not (isinstance(value, dict) and isinstance(value.get("k"), str) and type(value.get("i")) is int
                and isinstance(value.get("a"), str) and value["i"] > 0):
            raise BadCursor(f"cursor {_shown(cursor)} {problem}; list again without a cursor")
        return value["k"], value["i"], value["a"]
