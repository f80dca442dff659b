"""A snapshot of a folder's files, to assert that an operation changed (or created) nothing on disk."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def tree(root: Path) -> dict[str, str]:
    """Every file and folder under ``root`` with a hash of its bytes (folders: "dir"; links: their target)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            out[os.path.relpath(os.path.join(dirpath, d), root)] = "dir"
        for f in filenames:
            p = os.path.join(dirpath, f)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                out[rel] = "link:" + os.readlink(p)
            elif os.path.isfile(p):
                out[rel] = hashlib.sha256(Path(p).read_bytes()).hexdigest()
            else:
                out[rel] = "special"
    return out
