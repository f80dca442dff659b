"""THROWAWAY SHIM of the lead's core.project API (common brief); deleted when main's project model lands."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from core import fileio
from core.backends import default_registry, resolve_memory_backend
from core.backends.base import MemorySearchOptions, MemorySearchResult
from core.entries import append_memory_entry, tool_message
from core.errors import MemoryBackendError
from core.layout import Layout
from core.settings import load_settings


@dataclass(frozen=True)
class Changes:
    documents: frozenset[str] = frozenset()
    insights: bool = False
    audit: bool = False
    proposals: bool = False
    settings: bool = False
    history: bool = False


@dataclass(frozen=True)
class WriteResult:
    path: str
    changed: bool
    hash: str
    size: int
    changes: Changes = field(default_factory=Changes)
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class AppendOutcome:
    status: Literal["written", "skipped_empty", "skipped_duplicate"]
    file_path: Path | None
    path: str | None
    message: str
    archived_entries: int = 0
    changes: Changes = field(default_factory=Changes)
    warnings: tuple[str, ...] = ()


class Project:
    def __init__(self, root, registry=None) -> None:
        self.root = Path(root).resolve()
        self.layout = Layout(self.root)
        self.settings = load_settings(self.root)
        self.backend = resolve_memory_backend(self.settings, self.root, registry or default_registry())
        self.fallback_reason = self.backend.fallback_reason
        self.memory_path = self.layout.memory_path
        self.insights_path = self.layout.insights_path

    def documents(self):
        return self.layout.documents()

    def resolve_path(self, user_path):
        return self.memory_path if user_path is None else self.layout.normalize(user_path)

    def read(self, path=None) -> str:
        rel = self.resolve_path(path)
        if rel == ".fusion/memory.md" and not self.layout.layered:
            return self.backend.read()
        return fileio.read_text(fileio.resolve_in_root(self.root, rel)) or ""

    def writable(self, path=None):
        return None if self.backend.has_capability("write") else f'backend "{self.backend.id}" is read-only'

    def write(self, path, content, *, expected_hash=None, source="write", author=None) -> WriteResult:
        rel = self.resolve_path(path)
        if reason := self.writable(rel):
            raise MemoryBackendError(reason, "READ_ONLY", self.backend.id)
        if rel == ".fusion/memory.md" and not self.layout.layered:
            before = self.backend.read()
            self.backend.write(content, expected_hash=expected_hash, source=f"{source}:{author}")
            changed = before != content
        else:
            changed = fileio.replace_text(self.root, rel, content, expected_hash=expected_hash,
                                          source=f"{source}:{author}").changed
        data = content.encode("utf-8")
        return WriteResult(rel, changed, fileio.content_hash(content), len(data), Changes(frozenset({rel})))

    def append(self, text, *, layer=None, agent=None, path=None, author=None, source="append", force=False):
        if reason := self.writable():
            raise MemoryBackendError(reason, "READ_ONLY", self.backend.id)
        if path is not None:
            rel = self.resolve_path(path)
        elif layer == "daily":
            rel = self.layout.daily_path(agent=agent)
        else:
            rel = self.layout.long_term_path(agent)
        res = append_memory_entry(self.root, text, relpath=rel)
        return AppendOutcome(res.status, res.file_path, rel if res.file_path else None, tool_message(res),
                             res.archived_entries, Changes(frozenset({rel}) if res.status == "written" else frozenset()),
                             ("shim warning",) if "WARN" in (text or "") else ())

    def read_insights(self):
        return fileio.read_text(self.root / self.insights_path)

    def write_insights(self, content, *, expected_hash=None, source="insights", author=None):
        return self.write(self.insights_path, content, expected_hash=expected_hash, source=source, author=author)

    def search(self, query, options=None, *, derived_ok=True) -> list[MemorySearchResult]:
        if self.backend.has_capability("search"):
            return self.backend.search(query, options or MemorySearchOptions())
        if not derived_ok:
            raise MemoryBackendError(f'Backend "{self.backend.id}" does not support required capability: search',
                                     "CAPABILITY_UNSUPPORTED", self.backend.id)
        from core.search.service import SearchService
        return SearchService(self.root).search(query, options or MemorySearchOptions())
