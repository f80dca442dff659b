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
import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from functools import partial
from typing import Any

from pydantic_core import to_json

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

    __slots__ = ("_json", "_lazy", "_parts", "_sha", "bodies", "data", "hash", "lines", "read_at", "size")

    def __init__(self, text: str, sha: Any, size: int, lines: int, json: bytes | memoryview | None,
                 parts: tuple[bytes | memoryview, ...] = (), data: bytes | None = None,
                 tails: tuple[str, ...] = ()) -> None:
        # One attribute, replaced whole: a thread joining the tails never leaves another one a half-joined text.
        self._lazy: tuple[str, tuple[str, ...]] = (text, tails)
        self._sha, self.size, self.lines, self._json, self._parts, self.data = sha, size, lines, json, parts, data
        self.hash: str = sha.hexdigest()
        self.bodies: dict[str, bytes] = {}
        self.read_at = 0  # the ticket of the newest read that found this text (FactsMemo.ticket)

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
        parts = self._parts  # read before the literal: whoever joins them sets the literal first, then drops them
        literal = self._json
        return parts if literal is None else (literal,)

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
        # Taken once: another thread may adopt the joined literal meanwhile (a read of these facts in the pool), and
        # the pieces' head taken before it and the whole literal taken after it would repeat the text.
        old = self.json_parts()
        parts: tuple[bytes | memoryview, ...] = (*old[:-1], memoryview(old[-1])[:-1], memoryview(to_json(tail))[1:])
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

    def grown(self, text: str) -> TextFacts | None:
        """The facts of ``text`` from these and its tail when ``text`` is this text with more after it."""
        mine = self.text
        if len(text) <= len(mine) or not text.startswith(mine):
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
    (:meth:`facts`). Both meet in the one record per document, so a change is noticed once, whichever read sees it
    first, and once when two see it at the same time."""

    def __init__(self, max_chars: int = 32 * 1024 * 1024) -> None:
        super().__init__(max_chars)
        # One change at a time: are the facts a read worked its change out from still the ones remembered; then
        # the change noticed and the new facts remembered. Two reads that saw the same change at once (the loop's
        # from bytes, the pool's from text) notice it once: the second finds the first's facts remembered.
        self._changing = threading.Lock()
        self._tickets = itertools.count(1)

    def ticket(self) -> int:
        """A read's place in time, taken before it reads the document: a read that took its ticket before the read
        whose facts are remembered is older than them (it may finish later, in another thread), and is served as
        it read, neither noticed as a change nor remembered (what it saw was noticed, or is noticed next)."""
        return next(self._tickets)

    def _facts(self, key: Hashable) -> TextFacts | None:
        hit = self._hit(key)
        return None if hit is None else hit[1]

    def _remember(self, key: Hashable, facts: TextFacts) -> None:
        self._keep(key, "", facts.chars, facts)  # the facts hold their text (perhaps not yet joined)

    def _change(self, key: Hashable, known: TextFacts | None, facts: TextFacts, notice: Callable[[], object] | None,
                ticket: int) -> bool | None:
        """``notice()``, then ``facts`` (read with ``ticket``) remembered in place of ``known``, when ``known`` is still
        what is remembered under ``key``: ``True``. ``False``, nothing done, when another read remembered a change
        meanwhile; ``None``, nothing done, when ``known`` were read after this read (this one is older)."""
        with self._changing:
            if self._facts(key) is not known:
                return False
            if known is not None and known.read_at > ticket:
                return None
            facts.read_at = ticket
            if notice is not None:
                notice()
            self._remember(key, facts)
            return True

    def same_bytes(self, key: Hashable, data: bytes, ticket: int = 0) -> TextFacts | None:
        """The facts remembered under ``key`` when they are those of the UTF-8 ``data`` (one compare of bytes), read
        with ``ticket``."""
        known = self._facts(key)
        if known is None or known.data is None or (known.data is not data and known.data != data):
            return None
        known.data = data  # asked again with these bytes, it answers by identity
        known.read_at = max(known.read_at, ticket)
        return known

    def grow_bytes(self, key: Hashable, data: bytes, changed: Callable[[TextFacts, TextFacts], object],
                   ticket: int | None = None) -> TextFacts | None:
        """The facts of the UTF-8 ``data`` worked out from its tail alone, when it is the bytes remembered under
        ``key`` with more after them (``changed(before, after)`` called with the facts before and after, whose texts
        are joined only if they are asked for; then the facts are remembered), else ``None``. Called after
        :meth:`same_bytes` did not answer; ``ticket``: :meth:`ticket`, taken before ``data`` was read."""
        if ticket is None:
            ticket = self.ticket()
        for attempt in range(_ATTEMPTS):
            known = self._facts(key)
            if known is None:
                return None
            if attempt and known.data is not None and known.data == data:
                return known  # another read saw these very bytes meanwhile, and noticed the change
            facts = known.grown_bytes(data)
            if facts is None:
                return None
            done = self._change(key, known, facts, partial(changed, known, facts), ticket)
            if done is not False:
                return facts  # noticed and remembered; or an older read than the one remembered: served as read
        return None  # changing under every attempt: read whole in the pool (:meth:`facts`)

    def facts(self, key: Hashable, text: str, changed: Callable[[str | None], object] | None = None,
              ticket: int | None = None) -> TextFacts:
        """The facts of ``text`` (remembered under ``key``); ``changed(before)`` is called when ``text`` is not
        the text remembered (``before``: that text, ``None`` when none was). ``ticket``: :meth:`ticket`, taken
        before ``text`` was read (``None``: now).

        One compare of the texts per call: an equal text is adopted (the facts then hold this very object), so
        the same request asking again is answered by identity, not by comparing a MiB twice."""
        if ticket is None:
            ticket = self.ticket()
        for _attempt in range(_ATTEMPTS):
            known = self._facts(key)
            if known is not None and known.is_text(text):
                known.text = text
                if known.data is None:  # a served read compares bytes: it gets them, once
                    known.data = text.encode("utf-8")
                known.read_at = max(known.read_at, ticket)
                return known
            if known is None:
                facts = TextFacts.of(text)
                if self._change(key, None, facts, None, ticket):
                    if changed is not None:  # a first serve, compared with history's record (not under the lock)
                        changed(None)
                    return facts
                continue
            facts = known.grown(text) or TextFacts.of(text)
            before = known.text
            done = self._change(key, known, facts, None if changed is None else partial(changed, before), ticket)
            if done is not False:
                return facts  # noticed and remembered; or an older read than the one remembered: served as read
        # Changing under every attempt: noticed against what is remembered now, as a change is.
        known = self._facts(key)
        if changed is not None:
            changed(None if known is None else known.text)
        facts = TextFacts.of(text)
        facts.read_at = ticket
        self._remember(key, facts)
        return facts


#: How often a read works its change out again when another read remembered one meanwhile.
_ATTEMPTS = 4
