"""Search hits on record: the lines of a document a search served are a read too (issue 23, reads on record).

An agent that searches and acts on a snippet loaded those lines; ``memdesk activity`` lists each hit as a read
of its document (``via`` ``http-search``, ``mcp-search`` or ``mcp-http-search``) with the lines the hit
covers and the hash and size of the document as it is when the search answers, so ``--open`` gives back the
text the snippet came from. No text is kept, as for every read.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from core.errors import MemoryBackendError
from core.project.model import Project
from core.server import models
from core.server.service import note_read
from core.storage.fileio import content_hash


def note_search_hits(project: Project, key: str, hits: Iterable[models.SearchHit], *, client: str | None,
                     token: str | None, via: str) -> int:
    """Put each hit with a line on record as a read of its document; how many were recorded. A document that
    cannot be read now (gone, not UTF-8) is left out: its hit is still served."""
    facts: dict[str, tuple[str, int, int] | None] = {}
    recorded = 0
    root = Path(project.root)
    for hit in hits:
        if hit.line_start is None or not hit.path:
            continue
        if hit.path not in facts:
            try:
                text = project.read(hit.path)
            except (MemoryBackendError, OSError, ValueError):
                facts[hit.path] = None
            else:
                facts[hit.path] = (content_hash(text), len(text.encode("utf-8")), text.count("\n") + 1)
        found = facts[hit.path]
        if found is None:
            continue
        digest, size, total = found
        end = hit.line_end if hit.line_end is not None else hit.line_start
        note_read(key, root, hit.path, digest, size, hit.line_start, min(end, total), total, client=client,
                  token=token, via=f"{via}-search")
        recorded += 1
    return recorded
