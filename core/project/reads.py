"""The project's reads (:class:`ProjectReads`): where its documents are, which exist, their text, and search.

The first of the :class:`~core.project.model.Project` class's parts (then :mod:`core.project.writes`,
:mod:`core.project.history`, and the settings and backend in :mod:`core.project.model`). Every read goes
through the resolved backend for that document.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from core.backends.base import MemoryBackend
from core.documents.layout import DocumentInfo, Layout
from core.errors import MemoryBackendError, PathOutsideRootError
from core.storage import fileio
from core.storage.pipeline import Screen

if TYPE_CHECKING:  # core.settings imports pydantic: a project given its settings never needs it
    from core.search.types import MemorySearchOptions, MemorySearchResult
    from core.settings.model import ProjectSettings

#: Longest search query, in characters (a query is words to look for, not a document).
MAX_QUERY = 4096
#: Compiled (and cached by ``re``) on the first search: its surrogate range costs ~0.7 ms to compile, which every
#: ``memdesk append`` process paid at import for a search it never runs (issue 19 item 7).
_BAD_QUERY_CHAR = "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]"


class ProjectReads:
    """Facts, reading and search over a project (set up by :class:`core.project.model.Project`)."""

    root: Path
    layout: Layout
    backend: MemoryBackend
    settings: ProjectSettings
    screen: Screen
    default_author: str | None

    # -- facts -------------------------------------------------------------------------------------
    @property
    def fallback_reason(self) -> str | None:
        """Why the configured backend is not the one in use (``None`` when it is)."""
        return self.backend.fallback_reason

    @property
    def memory_path(self) -> str:
        """The layout's long-term document (what commands use without ``--file``)."""
        return self.layout.memory_path

    @property
    def insights_path(self) -> str:
        """Where this layout keeps insights."""
        return self.layout.insights_path

    @property
    def audit_path(self) -> str:
        """Where this layout keeps the audit report."""
        return self.layout.audit_path

    @property
    def audit_state_path(self) -> str:
        """Where this layout keeps the audit's last-run state."""
        return self.layout.audit_state_path

    def documents(self) -> list[DocumentInfo]:
        """Every memory document of the project, in design §2a order."""
        docs = self.layout.documents()
        if self.backend.file_canonical:
            return docs
        # A backend that keeps documents itself: what it holds is listed even without a mirror file.
        known = {d.path: d for d in docs}
        listing = getattr(self.backend, "list_documents", None)
        if callable(listing):
            for path, size, updated, _by in listing():
                if isinstance(path, str) and self.layout.is_document(path):
                    stamp = updated.isoformat(timespec="seconds").replace("+00:00", "Z") \
                        if hasattr(updated, "isoformat") else updated
                    known[path] = self.layout.describe(path, size, stamp)
        else:
            primary = getattr(self.backend, "primary_path", self.memory_path)
            if primary not in known:
                text = self._read_or_none(primary)
                if text is not None:
                    known[primary] = self.layout.describe(primary, len(text.encode("utf-8")))
        return sorted(known.values(), key=self.layout.order_key)

    def resolve_path(self, user_path: str | None) -> str:
        """Normalise a user's or client's document path (design §2a); ``None`` gives the long-term file."""
        if user_path is None:
            return self.memory_path
        return self.layout.normalize(user_path)

    def writable(self, path: str | None = None) -> str | None:
        """``None`` when ``path`` can be written, else the reason (for the read-only banner)."""
        if not self.backend.has_capability("write"):
            if self.backend.fallback_reason:
                return f"memory is read-only here: {self.backend.fallback_reason}"
            return f'the "{self.backend.id}" backend is read-only; switch the backend to "file" to edit memory'
        rel = self.resolve_path(path)
        try:
            fileio.resolve_in_root(self.root, rel)
        except (PathOutsideRootError, RuntimeError, OSError) as exc:
            return f"{rel} cannot be written: {exc}"
        target = self.root / rel
        probe = target if target.exists() else next((p for p in target.parents if p.exists()), self.root)
        if not os.access(probe, os.W_OK):
            what = "file" if probe == target else "folder"
            return f"the {what} {probe} is not writable (permissions or a read-only mount)"
        return None

    # -- reading -----------------------------------------------------------------------------------
    def read(self, path: str | None = None) -> str:
        """One document's text (``""`` when it does not exist). Raises :class:`MemoryBackendError`."""
        return self._read_or_none(self.resolve_path(path)) or ""

    def read_bytes(self, path: str | None = None) -> bytes | None:
        """One document's UTF-8 bytes as on disk, not decoded (``None`` when it does not exist): for a reader that
        works on bytes and decodes only what it has not seen (a served read after an append). Raises
        :class:`MemoryBackendError`, as :meth:`read` does (a file that is not UTF-8 is not refused here)."""
        return self.backend.read_document_bytes(self.resolve_path(path))

    def _read_or_none(self, rel: str) -> str | None:
        text = self.backend.read_document(rel)
        if text is not None and not isinstance(text, str):
            raise MemoryBackendError(f'backend "{self.backend.id}" returned {type(text).__name__} for {rel}',
                                     "READ_FAILED", self.backend.id)
        return text

    def exists(self, path: str | None = None) -> bool:
        """Whether the document exists."""
        return self._read_or_none(self.resolve_path(path)) is not None


    def read_insights(self) -> str | None:
        """The insights document, or ``None`` (never ``""``) when absent."""
        return self._read_or_none(self.insights_path)

    # -- search ------------------------------------------------------------------------------------
    def can_search(self) -> bool:
        """Whether the backend itself can search (the HTTP search route answers 501 otherwise)."""
        return self.backend.has_capability("search")

    def search(self, query: str, options: MemorySearchOptions | None = None, *, derived_ok: bool = True
               ) -> list[MemorySearchResult]:
        """Search the backend; without its own search, memdesk's derived index when ``derived_ok``.

        A query that cannot be one (not text, a NUL or another control character, a lone surrogate,
        over :data:`MAX_QUERY` characters) is ``INVALID_CONFIG`` (a 400 over HTTP) naming the problem.
        """
        self._check_query(query)
        if self.can_search():
            return self.backend.search(query, options)
        if not derived_ok:
            raise MemoryBackendError(f'Backend "{self.backend.id}" does not support required capability: search',
                                     "CAPABILITY_UNSUPPORTED", self.backend.id)
        from core.search.derived import derived_search

        return derived_search(self.root, query, options)

    def _check_query(self, query: object) -> None:
        def bad(why: str) -> MemoryBackendError:
            return MemoryBackendError(f"the search query {why}; nothing was searched", "INVALID_CONFIG",
                                      self.backend.id)

        if not isinstance(query, str):
            raise bad(f"must be text, not {type(query).__name__}")
        if len(query) > MAX_QUERY:
            raise bad(f"is {len(query):,} characters long; the limit is {MAX_QUERY:,}")
        found = re.search(_BAD_QUERY_CHAR, query)  # one character class: linear, never backtracks
        if found is not None:
            i, code = found.start(), ord(found.group())
            if 0xD800 <= code <= 0xDFFF:
                raise bad(f"holds a lone surrogate U+{code:04X} (at character {i}), which is not valid text")
            name = "a NUL character" if code == 0 else f"the control character U+{code:04X}"
            raise bad(f"holds {name} (at character {i})")

    # -- history -----------------------------------------------------------------------------------
    @property
    def backend_history(self) -> bool:
        """Whether the backend keeps the history itself (``postgres``: in its database) instead of ``core.storage.history.versions``."""
        return callable(getattr(self.backend, "list_versions", None)) and \
            callable(getattr(self.backend, "get_version", None))

