"""Find across all documents: the literal, case-insensitive matches of a query in every memory document.

Pure Python (no Qt), so the bench times it alone. :class:`DocumentTexts` reads each document once and
keeps its text until the document's size or change time moves (the picker's listing says so); a
document with unsaved edits is searched as the editor shows it, not as it is on disk.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

#: Hits listed at most (the count says how many more there were).
MAX_HITS = 2000
_CONTEXT = 160  # characters of a long line shown around its match


@dataclass(frozen=True)
class FindHit:
    """One match: the document, its 1-based line and column, and the line shown (``span`` inside it)."""

    path: str
    line: int
    column: int
    text: str
    span: tuple[int, int]


@dataclass
class FindResult:
    """The hits of a query (at most :data:`MAX_HITS`), how many there were, and in how many documents."""

    query: str
    hits: list[FindHit]
    total: int
    documents: int
    searched: int


def _shown_line(line: str, start: int, end: int) -> tuple[str, tuple[int, int]]:
    if len(line) <= _CONTEXT * 2:
        return line, (start, end)
    left = max(start - _CONTEXT // 2, 0)
    right = min(max(end + _CONTEXT, left + _CONTEXT * 2), len(line))
    prefix = "…" if left else ""
    suffix = "…" if right < len(line) else ""
    return prefix + line[left:right] + suffix, (start - left + len(prefix), end - left + len(prefix))


def find_in_documents(texts: Iterable[tuple[str, str]], query: str, limit: int = MAX_HITS) -> FindResult:
    """Every match of ``query`` (literal, any case) in ``(path, text)`` pairs, in the order given."""
    hits: list[FindHit] = []
    total = documents = searched = 0
    if not query:
        return FindResult(query, hits, 0, 0, 0)
    pattern = re.compile(re.escape(query), re.IGNORECASE)
    for path, text in texts:
        searched += 1
        found = False
        line_no, line_start = 1, 0
        for match in pattern.finditer(text):
            found = True
            total += 1
            if len(hits) >= limit:
                continue
            start = match.start()
            line_no += text.count("\n", line_start, start)
            line_start = text.rfind("\n", 0, start) + 1
            line_end = text.find("\n", start)
            line = text[line_start:line_end if line_end >= 0 else len(text)]
            shown, span = _shown_line(line, start - line_start, match.end() - line_start)
            hits.append(FindHit(path, line_no, start - line_start + 1, shown, span))
        documents += found
    return FindResult(query, hits, total, documents, searched)


class DocumentTexts:
    """The text of every document, read once and kept until its listed size or change time moves.

    ``listing()`` gives ``(path, size, updated_at)`` in the picker's order; ``read(path)`` the disk
    text; ``unsaved(path)`` the editor's text when it has unsaved edits, else ``None``.
    """

    def __init__(self, listing: Callable[[], list[tuple[str, int | None, str | None]]],
                 read: Callable[[str], str], unsaved: Callable[[str], str | None] = lambda path: None) -> None:
        self._listing, self._read, self._unsaved = listing, read, unsaved
        self._cache: dict[str, tuple[int | None, str | None, str]] = {}
        self._lock = threading.Lock()  # a search on a worker thread and one on the GUI thread share the cache
        #: Documents that could not be read in the last pass, with why.
        self.errors: dict[str, str] = {}

    def unsaved_now(self, paths: list[str] | None = None) -> dict[str, str]:
        """The unsaved texts, taken on the GUI thread (the editor's documents live there)."""
        listed = paths if paths is not None else [p for p, _s, _u in self._listing()]
        return {p: t for p in listed if (t := self._unsaved(p)) is not None}

    def __call__(self, unsaved: dict[str, str] | None = None) -> list[tuple[str, str]]:
        """``(path, text)`` of every document now (``unsaved``: texts taken beforehand, for a worker thread)."""
        with self._lock:
            return self._texts(unsaved)

    def _texts(self, unsaved: dict[str, str] | None) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        seen: set[str] = set()
        self.errors = {}
        for path, size, updated in self._listing():
            seen.add(path)
            edited = unsaved.get(path) if unsaved is not None else self._unsaved(path)
            if edited is not None:
                out.append((path, edited))
                continue
            cached = self._cache.get(path)
            if cached is not None and cached[0] == size and cached[1] == updated and size is not None:
                out.append((path, cached[2]))
                continue
            try:
                text = self._read(path)
            except Exception as exc:  # an unreadable document is skipped and named, never fatal
                self.errors[path] = str(exc)
                continue
            self._cache[path] = (size, updated, text)
            out.append((path, text))
        for gone in set(self._cache) - seen:
            del self._cache[gone]
        return out
