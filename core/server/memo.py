"""Values derived from a document's text (its hash, size, line count, JSON string), kept while the text
stays the same and extended when it only grew.

Every read still reads the document; only the work done on the text after it is skipped. When the
text equals the one seen last time (a memory compare) everything is reused; when it starts with it
(an agent appended, the common change) only the new tail is encoded, hashed, counted and escaped,
so a read right after an append costs what the tail costs, not what the MiB costs. Anything else is
worked out afresh.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from pydantic_core import to_json

from core.documents.grown import extends

__all__ = ["FactsMemo", "TextFacts", "TextMemo"]


class TextMemo:
    """A small LRU of ``key -> (text, value)``, bounded by the characters of text it holds."""

    def __init__(self, max_chars: int = 32 * 1024 * 1024) -> None:
        self.max_chars = max_chars
        self._items: OrderedDict[Hashable, tuple[str, Any]] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def _hit(self, key: Hashable) -> tuple[str, Any] | None:
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
            return hit

    def get(self, key: Hashable, text: str) -> Any | None:
        """The value stored for ``key`` if it was derived from exactly ``text``, else ``None``."""
        hit = self._hit(key)
        # The compare runs outside the lock: it is the only part that takes time.
        return hit[1] if hit is not None and (hit[0] is text or hit[0] == text) else None

    def last_text(self, key: Hashable) -> str | None:
        """The text last remembered under ``key`` (``None``: none)."""
        hit = self._hit(key)
        return hit[0] if hit is not None else None

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


class TextFacts:
    """A text's SHA-256 (of its UTF-8), UTF-8 size, line count and JSON string literal, and the response
    bodies made from them (by shape), which go when the facts do."""

    __slots__ = ("_json", "_parts", "_sha", "bodies", "hash", "lines", "size", "text")

    def __init__(self, text: str, sha: Any, size: int, lines: int, json: bytes | memoryview | None,
                 parts: tuple[bytes | memoryview, ...] = ()) -> None:
        self.text, self._sha, self.size, self.lines, self._json, self._parts = text, sha, size, lines, json, parts
        self.hash: str = sha.hexdigest()
        self.bodies: dict[str, bytes] = {}

    @property
    def json(self) -> bytes | memoryview:
        """The text's JSON string literal (joined from its parts the first time it is asked for)."""
        if self._json is None:
            self._json, self._parts = b"".join(self._parts), ()
        return self._json

    def json_parts(self) -> tuple[bytes | memoryview, ...]:
        """The literal as buffers to join: after an append, the old literal's view and the tail's, not yet
        joined, so a response body that holds the literal copies the MiB once (:meth:`adopt_json`), not twice."""
        return self._parts if self._json is None else (self._json,)

    def adopt_json(self, literal: memoryview) -> None:
        """Take ``literal`` (a view into a body that holds exactly this text's literal) as the literal."""
        if self._json is None:
            self._json, self._parts = literal, ()

    @classmethod
    def of(cls, text: str) -> TextFacts:
        """Work everything out from ``text``."""
        data = text.encode("utf-8")
        return cls(text, hashlib.sha256(data), len(data), text.count("\n") + 1, to_json(text))

    def grown(self, text: str, *, checked: bool = False) -> TextFacts | None:
        """The facts of ``text`` from these and its tail when ``text`` is this text with more after it
        (``checked``: the caller has just compared them)."""
        if not checked and (len(text) <= len(self.text) or not text.startswith(self.text)):
            return None
        tail = text[len(self.text):]
        data = tail.encode("utf-8")
        sha = self._sha.copy()
        sha.update(data)
        # JSON escapes character by character, so the literal of the whole is the two literals joined. They are
        # kept as views and joined by whoever needs them whole: a response body joins them into itself.
        parts = (*(p for p in self.json_parts()[:-1]), memoryview(self.json_parts()[-1])[:-1],
                 memoryview(to_json(tail))[1:])
        return TextFacts(text, sha, self.size + len(data), self.lines + tail.count("\n"), None, parts)


class FactsMemo(TextMemo):
    """:class:`TextFacts` by key: reused while the text is the same, grown when it only grew."""

    def same(self, key: Hashable, text: str) -> TextFacts | None:
        """The facts remembered under ``key`` when they are ``text``'s (one compare), else ``None``: nothing is
        worked out, and nothing is noticed."""
        hit = self._hit(key)
        if hit is None:
            return None
        known: TextFacts = hit[1]
        if known.text is not text and known.text != text:
            return None
        if known.text is not text:  # adopted, as :meth:`facts` does: asked again, it answers by identity
            known.text = text
            self.put(key, text, known)
        return known

    def grow(self, key: Hashable, text: str, changed: Callable[[str], object]) -> TextFacts | None:
        """The facts of ``text`` worked out from the tail alone when it is the text remembered under ``key`` with
        more after it (``changed(before)`` called first, and the facts remembered), else ``None``. When the read
        made ``text`` by joining a decoded tail to that very text (:mod:`core.storage.decoded`), that join answers
        (:func:`core.documents.grown.extends`) and the two MiBs are not compared at all; else one compare."""
        hit = self._hit(key)
        if hit is None:
            return None
        known: TextFacts = hit[1]
        if not extends(text, known.text):  # the read's own join answers by identity; else one compare
            return None
        changed(known.text)
        facts = known.grown(text, checked=True)
        assert facts is not None
        self.put(key, text, facts)
        return facts

    def facts(self, key: Hashable, text: str, changed: Callable[[str | None], object] | None = None) -> TextFacts:
        """The facts of ``text`` (remembered under ``key``); ``changed(before)`` is called first when ``text`` is not
        the text remembered (``before``: that text, ``None`` when none was).

        One compare of the texts per call: an equal text is adopted (the facts then hold this very object), so
        the same request asking again is answered by identity, not by comparing a MiB twice."""
        hit = self._hit(key)
        if hit is not None:
            known: TextFacts = hit[1]
            if known.text is text:
                return known
            if known.text == text:
                known.text = text
                self.put(key, text, known)
                return known
            if changed is not None:
                changed(known.text)
            facts = known.grown(text) or TextFacts.of(text)
        else:
            if changed is not None:
                changed(None)
            facts = TextFacts.of(text)
        self.put(key, text, facts)
        return facts
