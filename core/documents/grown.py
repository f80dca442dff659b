"""Texts known to be another text with something added at the end, without comparing them again.

An append keeps the document's new text as ``current + extra`` (:mod:`core.storage.plain_append`); the
firewall's entry index, which holds ``current``, must then learn that the new text only adds to it
before extending itself. ``text.startswith(current)`` answers that by reading both texts again (a
memory that holds one CJK character is stored two bytes a character: 2 MB each, cold in the cache
after the write; ~0.3 ms an append on the real memory repeated to 1 MB, issue 19 item 7).
:func:`joined` makes the text and remembers the pair; :func:`extends` answers from that record when
the two are the very objects joined (strings are immutable and the record holds both, so an identity
cannot be reused or wrong), and compares the texts otherwise.

One join is remembered, the last: an append reads its document's record before it makes the next one.
Keeping more (one per document) kept old MiBs alive after a rotation replaced the document, and the
appends after it took fresh pages for each new text (~460 page faults an append, measured with
``ru_minflt``): slower than the comparison saved.
"""

from __future__ import annotations

import threading

__all__ = ["extends", "forget", "joined"]

_last: list[tuple[str, str]] = []  # at most one (prefix, prefix + extra)
_guard = threading.Lock()


def joined(prefix: str, extra: str) -> str:
    """``prefix + extra``, remembered as an extension of ``prefix`` (for :func:`extends`)."""
    with _guard:
        _last.clear()  # the record before (often the one that made ``prefix``): its texts go now, not later
    text = prefix + extra
    if extra:
        with _guard:
            _last.append((prefix, text))
    return text


def extends(text: str, prefix: str) -> bool:
    """Whether ``text`` is ``prefix`` with something added at the end (longer, and starting with it).

    A remembered join answers once and is dropped (it must not keep ``prefix`` alive)."""
    if len(text) <= len(prefix):
        return False
    with _guard:
        if _last and _last[0][1] is text and _last[0][0] is prefix:
            _last.clear()
            return True
    return text.startswith(prefix)


def forget() -> None:
    """Drop the remembered join (it holds its texts)."""
    with _guard:
        _last.clear()
