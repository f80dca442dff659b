"""The common start and the common end of two texts (or two byte strings), compared in C.

One implementation for the places that diff a replacement against what it replaces: history's deltas
(:mod:`core.storage.history.delta`, bytes), the firewall's look at what a save adds
(:mod:`core.firewall.engine`, :mod:`core.firewall.align`, text) and the budget's appended-entry warning.
Growing blocks are compared with ``startswith``/``endswith`` (a ``memoryview`` of bytes, so nothing is
copied); on a mismatch the block shrinks to :data:`SMALL`, then the first difference inside it is bisected.
"""

from __future__ import annotations

from typing import TypeVar

__all__ = ["SMALL", "common_prefix", "common_suffix"]

#: The block a mismatch is bisected in (and the first block compared).
SMALL = 256
#: The largest block of text compared at once (a text's block is a copy; a view of bytes is not, so theirs grow
#: without this cap).
LARGE = 1 << 16

_T = TypeVar("_T", str, bytes)


def common_prefix(a: _T, b: _T, a0: int = 0, b0: int = 0, limit: int | None = None) -> int:
    """Length of the common run of ``a[a0:]`` and ``b[b0:]`` (at most ``limit``)."""
    n = min(len(a) - a0, len(b) - b0)
    if limit is not None:
        n = min(n, limit)
    view, large = (memoryview(b), n) if isinstance(b, bytes) else (b, LARGE)
    done, step = 0, SMALL
    while done < n:
        size = min(step, n - done)
        if a.startswith(view[b0 + done:b0 + done + size], a0 + done):  # type: ignore[arg-type]
            done += size
            step = min(step * 4, large)
        elif size > SMALL:
            step = SMALL
        else:
            lo, hi = 0, size  # the first difference lies within this block
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if a.startswith(view[b0 + done:b0 + done + mid], a0 + done):  # type: ignore[arg-type]
                    lo = mid
                else:
                    hi = mid
            return done + lo
    return done


def common_suffix(a: _T, b: _T, limit: int) -> int:
    """Length of the common end of ``a`` and ``b``, at most ``limit`` (as :func:`common_prefix`, backwards)."""
    n = min(len(a), len(b), limit)
    la, lb = len(a), len(b)
    view, large = (memoryview(b), n) if isinstance(b, bytes) else (b, LARGE)
    done, step = 0, SMALL
    while done < n:
        size = min(step, n - done)
        if a.endswith(view[lb - done - size:lb - done], 0, la - done):  # type: ignore[arg-type]
            done += size
            step = min(step * 4, large)
        elif size > SMALL:
            step = SMALL
        else:
            lo, hi = 0, size
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if a.endswith(view[lb - done - mid:lb - done], 0, la - done):  # type: ignore[arg-type]
                    lo = mid
                else:
                    hi = mid
            return done + lo
    return done
