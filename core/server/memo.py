"""Values derived from a document's text (its hash, a serialised response), kept while the text stays the same.

Every read still reads the document; only the work done on the text after it is skipped when the text
equals the one seen last time. Comparing two 1 MiB strings is a memory compare; re-encoding,
hashing and serialising them takes milliseconds and churns megabytes of memory per request.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

__all__ = ["TextMemo"]


class TextMemo:
    """A small LRU of ``key -> (text, value)``, bounded by the characters of text it holds."""

    def __init__(self, max_chars: int = 32 * 1024 * 1024) -> None:
        self.max_chars = max_chars
        self._items: OrderedDict[Hashable, tuple[str, Any]] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable, text: str) -> Any | None:
        """The value stored for ``key`` if it was derived from exactly ``text``, else ``None``."""
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
        # The compare runs outside the lock: it is the only part that takes time.
        return hit[1] if hit is not None and hit[0] == text else None

    def put(self, key: Hashable, text: str, value: Any) -> None:
        """Remember ``value`` as derived from ``text`` (the oldest entries go when over the bound)."""
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._chars -= len(old[0])
            if len(text) > self.max_chars:
                return
            self._items[key] = (text, value)
            self._chars += len(text)
            while self._chars > self.max_chars:
                _key, (dropped, _value) = self._items.popitem(last=False)
                self._chars -= len(dropped)
