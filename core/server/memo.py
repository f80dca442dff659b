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
        self._items: OrderedDict[Hashable, tuple[str, Any, int]] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def _hit(self, key: Hashable) -> tuple[str, Any, int] | None:
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

    def put(self, key: Hashable, text: str, value: Any) -> None:
        """Remember ``value`` as derived from ``text`` (the oldest entries go when over the bound)."""
        self._keep(key, text, len(text), value)

    def _keep(self, key: Hashable, text: str, chars: int, value: Any) -> None:
        """Remember ``value`` under ``key``, counted as ``chars`` characters of text."""
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._chars -= old[2]
            if chars > self.max_chars:
                return
            self._items[key] = (text, value, chars)
            self._chars += chars
            while self._chars > self.max_chars:
                _key, (_text, _value, dropped) = self._items.popitem(last=False)
                self._chars -= dropped


#: Tails a text read as bytes keeps beside its base before they are joined (:attr:`TextFacts.text`).
MAX_TAILS = 64
#: Pieces a grown literal is kept in before they are joined (:meth:`TextFacts.json_parts`).
MAX_PARTS = 16


class TextFacts:
    """A text's SHA-256 (of its UTF-8), UTF-8 size, line count and JSON string literal, its UTF-8 bytes when
    known (``data``), and the response bodies made from them (by shape), which go when the facts do.

    Facts grown from bytes (:meth:`grown_bytes`: a served read after an append) hold their text as the text before
    and the tails after it, joined the first time :attr:`text` is asked for: a read answered from bytes never
    builds the whole text (a 1 MiB memory with one CJK character is a 2 MB ``str``; its join was the largest
    single cost of such a read)."""

    __slots__ = ("_json", "_lazy", "_parts", "_sha", "bodies", "data", "hash", "lines", "size")

    def __init__(self, text: str, sha: Any, size: int, lines: int, json: bytes | memoryview | None,
                 parts: tuple[bytes | memoryview, ...] = (), data: bytes | None = None,
                 tails: tuple[str, ...] = ()) -> None:
        # One attribute, replaced whole: a thread joining the tails never leaves another one a half-joined text.
        self._lazy: tuple[str, tuple[str, ...]] = (text, tails)
        self._sha, self.size, self.lines, self._json, self._parts, self.data = sha, size, lines, json, parts, data
        self.hash: str = sha.hexdigest()
        self.bodies: dict[str, bytes] = {}

    @property
    def text(self) -> str:
        """The text (its tails joined to it now if they were not yet)."""
        base, tails = self._lazy
        if tails:
            base = base + "".join(tails)
            self._lazy = (base, ())
        return base

    @text.setter
    def text(self, value: str) -> None:
        self._lazy = (value, ())

    @property
    def chars(self) -> int:
        """The text's length in characters (its tails not joined for it)."""
        base, tails = self._lazy
        return len(base) + sum(len(t) for t in tails)

    @property
    def joined_text(self) -> str | None:
        """The text when it needs no join (``None`` while tails wait to be joined): a cheap look, for a compare."""
        base, tails = self._lazy
        return None if tails else base

    def is_text(self, text: str) -> bool:
        """Whether these are ``text``'s facts: the very object, or an equal text."""
        base, tails = self._lazy
        return (not tails and base is text) or self.text == text

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
        return cls(text, hashlib.sha256(data), len(data), text.count("\n") + 1, to_json(text), data=data)

    def _with_tail(self, tail: str, data: bytes, whole: bytes | None, text: str | None) -> TextFacts:
        """These facts grown by ``tail`` (its UTF-8 ``data``); ``whole``: the grown text's bytes, when known;
        ``text``: the grown text, when known (else kept as this text and its tails)."""
        sha = self._sha.copy()
        sha.update(data)
        # JSON escapes character by character, so the literal of the whole is the two literals joined. They are
        # kept as views and joined by whoever needs them whole: a response body joins them into itself.
        parts: tuple[bytes | memoryview, ...] = (*(p for p in self.json_parts()[:-1]),
                                                 memoryview(self.json_parts()[-1])[:-1], memoryview(to_json(tail))[1:])
        if len(parts) > MAX_PARTS:  # served as they are (no body joins them), they are joined now and then
            parts = (b"".join(parts),)
        if text is None:
            base, tails = self._lazy
            tails = (*tails, tail)
            if len(tails) > MAX_TAILS:  # joined now and then: the tails held stay few
                base, tails = base + "".join(tails), ()
            return TextFacts(base, sha, self.size + len(data), self.lines + tail.count("\n"), None, parts,
                             whole, tails)
        return TextFacts(text, sha, self.size + len(data), self.lines + tail.count("\n"), None, parts, whole)

    def grown(self, text: str, *, checked: bool = False) -> TextFacts | None:
        """The facts of ``text`` from these and its tail when ``text`` is this text with more after it
        (``checked``: the caller has just compared them)."""
        mine = self.text
        if not checked and (len(text) <= len(mine) or not text.startswith(mine)):
            return None
        tail = text[len(mine):]
        data = tail.encode("utf-8")
        return self._with_tail(tail, data, None if self.data is None else self.data + data, text)

    def grown_bytes(self, data: bytes) -> TextFacts | None:
        """The facts of the UTF-8 ``data`` when it is this text's bytes with more after them, worked out from the
        tail alone and holding ``data`` (the whole text is not built); ``None`` when it is not, or the tail is
        not UTF-8 (whoever reads it whole then names the bad byte)."""
        known = self.data
        if known is None or len(data) <= len(known) or not data.startswith(known):
            return None
        raw = data[len(known):]
        try:
            # Valid UTF-8 ends on a character boundary, so the tail starts on one: decoded alone it is valid
            # exactly when the whole is.
            tail = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return self._with_tail(tail, raw, data, None)


class FactsMemo(TextMemo):
    """:class:`TextFacts` by key: reused while the text is the same, grown when it only grew.

    A served read compares bytes (:meth:`same_bytes`, :meth:`grow_bytes`); every other reader compares texts
    (:meth:`same`, :meth:`grow`, :meth:`facts`). Both meet in the one record per document, so a change is noticed
    once, whichever read sees it first."""

    def _facts(self, key: Hashable) -> TextFacts | None:
        hit = self._hit(key)
        return None if hit is None else hit[1]

    def _remember(self, key: Hashable, facts: TextFacts) -> None:
        self._keep(key, "", facts.chars, facts)  # the facts hold their text (perhaps not yet joined)

    def same(self, key: Hashable, text: str) -> TextFacts | None:
        """The facts remembered under ``key`` when they are ``text``'s (one compare), else ``None``: nothing is
        worked out, and nothing is noticed."""
        known = self._facts(key)
        if known is None or not known.is_text(text):
            return None
        known.text = text  # adopted, as :meth:`facts` does: asked again, it answers by identity
        return known

    def same_bytes(self, key: Hashable, data: bytes) -> TextFacts | None:
        """The facts remembered under ``key`` when they are those of the UTF-8 ``data`` (one compare of bytes)."""
        known = self._facts(key)
        if known is None or known.data is None or (known.data is not data and known.data != data):
            return None
        known.data = data  # asked again with these bytes, it answers by identity
        return known

    def grow(self, key: Hashable, text: str, changed: Callable[[str], object]) -> TextFacts | None:
        """The facts of ``text`` worked out from the tail alone when it is the text remembered under ``key`` with
        more after it (``changed(before)`` called first, and the facts remembered), else ``None``. When the read
        made ``text`` by joining a decoded tail to that very text (:mod:`core.storage.decoded`), that join answers
        (:func:`core.documents.grown.extends`) and the two MiBs are not compared at all; else one compare."""
        known = self._facts(key)
        if known is None or not extends(text, known.text):  # the read's own join answers by identity; else one compare
            return None
        changed(known.text)
        facts = known.grown(text, checked=True)
        assert facts is not None
        self._remember(key, facts)
        return facts

    def grow_bytes(self, key: Hashable, data: bytes,
                   changed: Callable[[TextFacts, TextFacts], object]) -> TextFacts | None:
        """:meth:`grow` for a read that has the document's bytes: the facts of ``data`` from its tail alone, when
        it is the remembered bytes with more after them (``changed(before, after)`` called with the facts before
        and after, whose texts are joined only if they are asked for; then the facts are remembered), else
        ``None``."""
        known = self._facts(key)
        facts = None if known is None else known.grown_bytes(data)
        if known is None or facts is None:
            return None
        changed(known, facts)
        self._remember(key, facts)
        return facts

    def facts(self, key: Hashable, text: str, changed: Callable[[str | None], object] | None = None) -> TextFacts:
        """The facts of ``text`` (remembered under ``key``); ``changed(before)`` is called first when ``text`` is not
        the text remembered (``before``: that text, ``None`` when none was).

        One compare of the texts per call: an equal text is adopted (the facts then hold this very object), so
        the same request asking again is answered by identity, not by comparing a MiB twice."""
        known = self._facts(key)
        if known is not None:
            if known.is_text(text):
                known.text = text
                if known.data is None:  # a served read compares bytes: it gets them, once
                    known.data = text.encode("utf-8")
                return known
            if changed is not None:
                changed(known.text)
            facts = known.grown(text) or TextFacts.of(text)
        else:
            if changed is not None:
                changed(None)
            facts = TextFacts.of(text)
        self._remember(key, facts)
        return facts
