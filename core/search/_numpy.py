"""Import NumPy for the small vector products of search, with BLAS kept to one thread.

A 10,000 x 256 matrix-vector product takes ~0.6 ms on one thread; with OpenBLAS's default thread
pool on a busy 2-core machine the same product took 10-15 ms (threads spin and contend). The limit
is a default only: it is set when NumPy is first imported here and the variables are not set
already, so an operator's own setting wins.
"""

from __future__ import annotations

import os
import sys
from typing import Any

_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")


def numpy() -> Any:
    """Return the ``numpy`` module (imported with one BLAS thread unless configured otherwise)."""
    if "numpy" not in sys.modules:
        for var in _THREAD_VARS:
            os.environ.setdefault(var, "1")
    import numpy as np

    return np
