"""The search types of the backend contract, in a module that imports nothing heavy.

:class:`MemorySearchOptions` and :class:`MemorySearchResult` are part of
:mod:`core.backends.base` (which re-exports them from here); they live here so that a keyword search
over memdesk's derived index runs without importing pydantic, which costs more than the search.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

SearchMode = Literal["keyword", "semantic", "hybrid"]


@dataclass(frozen=True)
class MemorySearchOptions:
    """Options of a search: page (``limit``, ``offset``) and ``mode``."""

    limit: int = 10
    offset: int = 0
    mode: SearchMode = "keyword"


@dataclass(frozen=True)
class MemorySearchResult:
    """One search hit: snippet, score in 0..1, section heading, 1-based line and the file it is in."""

    content: str
    score: float
    section: str | None = None
    line_number: int | None = None
    file: str | None = None
    scores: Mapping[str, float] = field(default_factory=dict)
    #: ``(start, end)`` in ``content`` of each «marked» query word, marks included (empty when none).
    highlights: tuple[tuple[int, int], ...] = ()


def make_result(content: str, score: float, section: str | None, line_number: int | None, file: str | None,
                scores: Mapping[str, float], highlights: tuple[tuple[int, int], ...] = ()) -> MemorySearchResult:
    """A :class:`MemorySearchResult` made without the frozen dataclass's ``__init__``, which sets each
    field through ``object.__setattr__`` (three times the cost, and a search makes one per hit)."""
    result = object.__new__(MemorySearchResult)
    result.__dict__.update(content=content, score=score, section=section, line_number=line_number, file=file,
                           scores=scores, highlights=highlights)
    return result
