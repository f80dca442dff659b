"""One way to time a call repeatedly, shared by the benches."""

from __future__ import annotations

import time
from collections.abc import Callable


def timed(fn: Callable[[int], object], n: int, warm: int = 5) -> list[float]:
    """Milliseconds of ``fn(i)`` for ``n`` calls after ``warm`` warm-up calls (``fn(-1)``, ``fn(-2)``, …)."""
    for i in range(warm):
        fn(-1 - i)
    out = []
    for i in range(n):
        start = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - start) * 1000)
    return out
