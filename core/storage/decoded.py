"""The text of a few large files as last decoded, kept with their bytes: the same bytes are not decoded twice.

Every read of a document reads its file whole (nothing is taken from ``stat``). Decoding is then most of a
read's cost: 1 ms for the 0.9 MiB agent-written memory of the fixtures, beside 20 µs to compare the bytes
with those decoded last time. So when a file holds exactly the bytes it held at its last read, the text
decoded then is given back (the same object); when it holds them and more after (an agent appended), only
the new tail is decoded. Anything else is decoded whole. The answer is always ``bytes.decode("utf-8")``
of what is on disk now: only the work is saved, never a read.

Only files of at least :data:`MIN_BYTES` are kept, at most :data:`MAX_BYTES` of them in all (the oldest go).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

from core.documents.grown import joined

__all__ = ["MAX_BYTES", "MIN_BYTES", "DecodedCache"]

MIN_BYTES = 64 * 1024
MAX_BYTES = 16 * 1024 * 1024


class DecodedCache:
    """``key -> (bytes, text)`` for large files, bounded by the bytes held."""

    def __init__(self, min_bytes: int = MIN_BYTES, max_bytes: int = MAX_BYTES) -> None:
        self.min_bytes, self.max_bytes = min_bytes, max_bytes
        self._items: OrderedDict[str, tuple[bytes, str]] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()

    def text(self, key: str, data: bytes, decode: Callable[[bytes], str]) -> str:
        """``decode(data)``, reusing the text decoded last time for ``key`` when ``data`` is the same bytes or
        those bytes with more after them. ``decode`` raises for bytes that are not UTF-8; its error is the one
        raised (a tail that does not decode is decoded again whole, so the error names the file's offset)."""
        if len(data) < self.min_bytes:
            return decode(data)
        with self._lock:
            known = self._items.get(key)
        text: str | None = None
        if known is not None:
            old_data, old_text = known
            if old_data == data:
                return old_text
            if len(data) > len(old_data) and data.startswith(old_data):
                # Valid UTF-8 ends on a character boundary, so the tail starts on one: decoded alone it is
                # valid exactly when the whole is. The join is remembered (core.documents.grown), so whoever
                # holds the text before learns that this one only adds to it without comparing the two again.
                try:
                    text = joined(old_text, decode(data[len(old_data):]))
                except Exception:  # noqa: BLE001 - decoded whole below, for the error's real offset
                    text = None
        if text is None:
            text = decode(data)
        self._remember(key, data, text)
        return text

    def _remember(self, key: str, data: bytes, text: str) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._held -= len(old[0])
            if len(data) > self.max_bytes:
                return
            self._items[key] = (data, text)
            self._held += len(data)
            while self._held > self.max_bytes:
                _key, (dropped, _text) = self._items.popitem(last=False)
                self._held -= len(dropped)

    def forget(self, key: str) -> None:
        """Drop what is kept for ``key``."""
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._held -= len(old[0])
