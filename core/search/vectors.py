"""Entry vectors stored as float32 BLOBs in SQLite (keyed by entry-text hash and model), searched in NumPy.

Python's ``sqlite3`` here cannot load extensions, so the vectors of the indexed entries are loaded
into one NumPy matrix, cached until the index changes (in this process or, through SQLite's
``data_version``, in another). NumPy is imported only when vectors are used.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from core.search._numpy import numpy
from core.search.db import Database

EMBED_BATCH = 512


class VectorStore:
    """The ``search_vectors`` table and the in-memory matrix built from it."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._generation = 0
        self._cache: tuple[tuple[int, int, str], Any, Any, dict[int, int]] | None = None

    def invalidate(self) -> None:
        """Drop the cached matrix (called after every change to the entries)."""
        self._generation += 1
        self._cache = None

    def ensure(self, c: sqlite3.Connection, provider: Any, items: Sequence[tuple[str, str]],
               progress: Callable[[int, int], None] | None = None) -> int:
        """Embed and store the ``(hash, text)`` items that have no vector for the provider's model."""
        model = provider.model_id
        todo: dict[str, str] = {}
        for digest, text in items:
            todo.setdefault(digest, text)
        have: set[str] = set()
        hashes = list(todo)
        for i in range(0, len(hashes), 500):
            part = hashes[i:i + 500]
            have.update(r[0] for r in c.execute(
                f"SELECT hash FROM search_vectors WHERE model=? AND hash IN ({','.join('?' * len(part))})",
                [model, *part]))
        pending = [(h, t) for h, t in todo.items() if h not in have]
        for i in range(0, len(pending), EMBED_BATCH):
            batch = pending[i:i + EMBED_BATCH]
            vecs = provider.embed([t for _h, t in batch])
            c.executemany("INSERT OR REPLACE INTO search_vectors(hash, model, vec) VALUES (?,?,?)",
                          [(h, model, vecs[j].tobytes()) for j, (h, _t) in enumerate(batch)])
            if progress is not None:
                progress(min(i + EMBED_BATCH, len(pending)), len(pending))
        if pending:
            self.invalidate()
        return len(pending)

    def missing(self, model: str) -> list[tuple[str, str]]:
        """``(hash, text)`` of indexed entries that have no vector for ``model``."""
        with self.db.lock:
            return list(self.db.conn.execute(
                "SELECT DISTINCT e.hash, e.text FROM search_entries e LEFT JOIN search_vectors v "
                "ON v.hash = e.hash AND v.model = ? WHERE v.hash IS NULL", (model,)))

    def drop_orphans(self, c: sqlite3.Connection, hashes: set[str]) -> None:
        """Delete the vectors of ``hashes`` that no indexed entry uses any more."""
        c.executemany("DELETE FROM search_vectors WHERE hash = ? AND NOT EXISTS "
                      "(SELECT 1 FROM search_entries WHERE hash = ?)", [(h, h) for h in hashes])
        self.invalidate()

    def drop_other_models(self, c: sqlite3.Connection, model: str) -> None:
        """Delete vectors made by any other model than ``model``."""
        c.execute("DELETE FROM search_vectors WHERE model != ?", (model,))

    def matrix(self, model: str) -> tuple[Any, Any, dict[int, int]]:
        """Return ``(ids, matrix, position_of_id)`` of every indexed entry that has a ``model`` vector."""
        np = numpy()

        with self.db.lock:
            key = (self.db.data_version(), self._generation, model)
            if self._cache is not None and self._cache[0] == key:
                return self._cache[1], self._cache[2], self._cache[3]
            rows = self.db.conn.execute(
                "SELECT e.id, v.vec FROM search_entries e JOIN search_vectors v "
                "ON v.hash = e.hash AND v.model = ? ORDER BY e.id", (model,)).fetchall()
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        if rows:
            mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        else:
            mat = np.zeros((0, 1), dtype=np.float32)
        pos = {int(i): n for n, i in enumerate(ids)}
        self._cache = (key, ids, mat, pos)
        return ids, mat, pos
