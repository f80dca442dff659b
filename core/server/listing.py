"""Listing a project's documents for a caller (``GET /api/memory/files``, MCP ``resources/list``), fast enough
for 20,000 documents: the caller's globs matched with their remembered automata, one folder's state carried to
all its files, and where a document really is worked out from its folder's real path (one ``realpath`` a
folder, one ``lstat`` a file) instead of one ``realpath`` a file.

What a caller sees is what :meth:`Access.can` allows it to read, document by document: a path-limited read
token sees only its paths, a link is followed and must lead to one of its paths too, and a document with
other hard links (another name for a file that may lie outside its paths) is not listed to it, as reading
it is refused (:meth:`Access.check`).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from core.documents.layout import DocumentInfo
from core.server.access import Access, glob_automaton

__all__ = ["Visible", "files_body"]


class Visible:
    """Which documents of the project at ``root`` the caller ``who`` may read; made once per listing (it
    remembers folders' real paths and its globs' states for that listing only)."""

    def __init__(self, who: Access, root: Path | str) -> None:
        self.who = who
        self.root = os.fspath(root)
        #: Whether the listing is limited at all: only a read token's globs limit what it reads.
        self.limited = bool(who.paths) and who.scope == "read"
        self._base = os.path.realpath(self.root)
        self._globs = [glob_automaton(g) for g in who.paths] if self.limited else []
        self._folder_states: dict[str, list[frozenset[int]]] = {}
        self._folder_real: dict[str, str | None] = {}

    def _matches(self, rel: str) -> bool:
        folder, _, name = rel.rpartition("/")
        states = self._folder_states.get(folder)
        if states is None:
            prefix = folder + "/" if folder else ""
            states = self._folder_states[folder] = [g.run(g.start, prefix) for g in self._globs]
        return any(s and g.accepts(g.run(s, name)) for g, s in zip(self._globs, states, strict=True))

    def _real_folder(self, folder: str) -> str | None:
        if folder not in self._folder_real:
            real = os.path.realpath(os.path.join(self._base, folder))
            inside = real == self._base or real.startswith(self._base + os.sep)
            self._folder_real[folder] = os.path.relpath(real, self._base).replace(os.sep, "/") if inside else None
        return self._folder_real[folder]

    def _real_rel(self, rel: str) -> tuple[str | None, int]:
        """(where ``rel`` really is in the project, or ``None`` outside it; its other hard links)."""
        path = os.path.join(self._base, rel)
        try:
            st = os.lstat(path)
        except OSError:
            return rel, 0  # gone meanwhile: nothing to read, nothing to hide
        if stat.S_ISLNK(st.st_mode):
            real = os.path.realpath(path)
            if not real.startswith(self._base + os.sep):
                return None, 0
            try:
                links = os.stat(path).st_nlink - 1
            except OSError:
                links = 0
            return os.path.relpath(real, self._base).replace(os.sep, "/"), links
        folder, _, name = rel.rpartition("/")
        real_folder = self._real_folder(folder)
        if real_folder is None:
            return None, 0
        links = st.st_nlink - 1 if stat.S_ISREG(st.st_mode) else 0
        return (f"{real_folder}/{name}" if real_folder != "." else name), links

    def can_read(self, rel: str) -> bool:
        """Whether the caller may read document ``rel`` (as :meth:`Access.can` says, and no hard link)."""
        if not self.who.can("read"):
            return False
        if not self.limited:
            return True
        if not self._matches(rel):
            return False
        real, links = self._real_rel(rel)
        if real is None or links:
            return False
        return real == rel or self._matches(real)

    def filter(self, docs: Iterable[DocumentInfo]) -> list[DocumentInfo]:
        """The documents among ``docs`` the caller may read, in their order."""
        if not self.limited:
            return list(docs) if self.who.can("read") else []
        return [d for d in docs if self.can_read(d.path)]


#: The layers Fusion's dashboard knows (``MemoryFileInfo.layer`` in Runfusion/Fusion
#: ``packages/dashboard/app/api/memory.ts`` at c81144c7: ``"long-term" | "daily" | "dreams"``). Its Memory view
#: (``components/MemoryView.tsx`` at 745971a8) labels any other layer "Dreams" with the dreams' description, so
#: memdesk's own layers are answered as the one they are closest to: the seed-era working memory, the insights,
#: the archive and the legacy ``memory.md`` are all durable project memory ("Long-term"); memdesk's own layer is
#: kept in ``kind``.
FUSION_LAYERS = frozenset({"long-term", "daily", "dreams"})


def _entry(doc: DocumentInfo) -> dict[str, object]:
    entry = doc.to_json()
    entry["kind"] = doc.layer
    if doc.layer not in FUSION_LAYERS:
        entry["layer"] = "long-term"
    return entry


def files_body(docs: Iterable[DocumentInfo]) -> bytes:
    """``GET /api/memory/files``'s JSON (the shape of :class:`core.server.models.FilesResponse`), written
    straight from the listing: 20,000 entries are not validated one by one on the way out. ``layer`` is one of
    :data:`FUSION_LAYERS`, ``kind`` memdesk's own layer (``working``, ``insights``, ``archive``, ``legacy`` too)."""
    return json.dumps({"files": [_entry(d) for d in docs]}, ensure_ascii=False,
                      separators=(",", ":")).encode("utf-8")
