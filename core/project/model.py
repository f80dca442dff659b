"""One open project (design §3a): its documents, settings, backend, insights and history, under every surface.

The GUI, the CLI and the servers all work through :class:`Project`. Every memory read and write of
every operation goes through the resolved backend for that document, so the ``readonly`` backend
refuses all of them and a backend that keeps memory itself (``sqlite`` without its mirror) still
serves what it holds. Each operation returns what it changed (:class:`Changes`) so a surface knows
what to refresh. Constructing a project creates nothing on disk.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Mapping
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from core.backends.base import MemoryBackend
from core.backends.registry import MemoryBackendRegistry, default_registry, resolve_memory_backend
from core.documents.layout import SEED_MEMORY, DocumentInfo, Layout
from core.errors import MemoryBackendError, PathOutsideRootError, SettingsError
from core.firewall import lazy_screen
from core.frozen import Record
from core.storage import fileio, pipeline
from core.storage.pipeline import Screen, Writer

if TYPE_CHECKING:  # core.settings imports pydantic: a project given its settings never needs it
    from core.search.types import MemorySearchOptions, MemorySearchResult
    from core.settings.model import ProjectSettings

CONFIG_PATH = ".fusion/config.json"  # core.settings.CONFIG_PATH (a test keeps the two in step)

if TYPE_CHECKING:
    from core.storage.history.versions import Version

log = logging.getLogger(__name__)

AppendStatus = Literal["written", "held", "skipped_empty", "skipped_duplicate"]
AppendLayer = Literal["long-term", "daily"]
_MAX_VERSION_ID = 2**63 - 1  # history ids are 64-bit in SQLite and PostgreSQL
#: Longest search query, in characters (a query is words to look for, not a document).
MAX_QUERY = 4096
_BAD_QUERY_CHAR = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


class Changes(Record):
    r"""What an operation changed, so each surface can decide what to refresh (Anki's ``OpChanges``).

    Frozen :class:`~core.frozen.Record`\ s, this one and :class:`WriteResult`, not dataclasses: this module is on
    every ``memdesk append`` process's path, and ``import dataclasses`` alone brings ``inspect``, ``ast`` and ``dis``.
    """

    __slots__ = _fields = ("documents", "insights", "audit", "proposals", "settings", "history")
    documents: frozenset[str]
    insights: bool
    audit: bool
    proposals: bool
    settings: bool
    history: bool

    def __init__(self, documents: frozenset[str] = frozenset(), insights: bool = False, audit: bool = False,
                 proposals: bool = False, settings: bool = False, history: bool = False) -> None:
        self._set(documents=documents, insights=insights, audit=audit, proposals=proposals, settings=settings,
                  history=history)

    def __or__(self, other: Changes) -> Changes:
        return Changes(self.documents | other.documents, self.insights or other.insights,
                       self.audit or other.audit, self.proposals or other.proposals,
                       self.settings or other.settings, self.history or other.history)

    def __bool__(self) -> bool:
        return bool(self.documents) or self.insights or self.audit or self.proposals or self.settings \
            or self.history


class WriteResult(Record):
    """What :meth:`Project.write` did; :attr:`hash` is worked out when first asked (most callers never ask)."""

    _fields = ("path", "changed", "size", "changes", "warnings", "data", "status", "flags", "inbox_id")
    __slots__ = (*_fields, "_hash")  # _hash: the digest once asked for (not a field)
    _hidden = _uncompared = ("data",)
    _hash: str | None
    path: str
    changed: bool
    size: int
    changes: Changes
    warnings: tuple[str, ...]
    data: bytes  # the document's new bytes
    status: str  # "written" | "held" (with inbox_id); a refusal raises pipeline.WriteRefused
    flags: tuple[dict[str, Any], ...]  # the screen's findings: {rule, kind, line, span, message}
    inbox_id: str | None

    def __init__(self, path: str, changed: bool, size: int, changes: Changes | None = None,
                 warnings: tuple[str, ...] = (), data: bytes = b"", status: str = "written",
                 flags: tuple[dict[str, Any], ...] = (), inbox_id: str | None = None) -> None:
        self._set(path=path, changed=changed, size=size, changes=Changes() if changes is None else changes,
                  warnings=warnings, data=data, status=status, flags=flags, inbox_id=inbox_id, _hash=None)

    @property
    def hash(self) -> str:
        """The SHA-256 hex digest of the document's new content."""
        if self._hash is None:
            self._set(_hash=fileio.sha256_hex(self.data))
        return self._hash  # type: ignore[return-value]


class AppendOutcome(Record):
    """What :meth:`Project.append` did: seed 002's status and message, and what it changed (a frozen
    :class:`~core.frozen.Record`: built on every ``memdesk append`` process's start)."""

    __slots__ = _fields = ("status", "file_path", "path", "message", "archived_entries", "changes", "warnings",
                           "flags", "inbox_id")
    status: AppendStatus
    file_path: Path | None
    path: str | None
    message: str
    archived_entries: int
    changes: Changes
    warnings: tuple[str, ...]
    flags: tuple[dict[str, Any], ...]  # the screen's findings: {rule, kind, line, span, message}
    inbox_id: str | None  # status "held": the inbox item that waits for review

    def __init__(self, status: AppendStatus, file_path: Path | None, path: str | None, message: str,
                 archived_entries: int = 0, changes: Changes | None = None, warnings: tuple[str, ...] = (),
                 flags: tuple[dict[str, Any], ...] = (), inbox_id: str | None = None) -> None:
        self._set(status=status, file_path=file_path, path=path, message=message, archived_entries=archived_entries,
                  changes=Changes() if changes is None else changes, warnings=warnings, flags=flags,
                  inbox_id=inbox_id)

    def to_json(self) -> dict[str, Any]:
        """The JSON shape of ``memdesk append --json`` and the servers' append responses."""
        out = {"status": self.status, "filePath": str(self.file_path) if self.file_path else None,
               "path": self.path, "message": self.message, "archivedEntries": self.archived_entries,
               "warnings": list(self.warnings), "flags": list(self.flags)}
        if self.inbox_id is not None:
            out["inboxId"] = self.inbox_id
        return out


class MemoryDisabledError(MemoryBackendError):
    """An agent's write while the project's memory is switched off."""


class Project:
    """One project folder: layout, settings, resolved backend, and every memory operation over them."""

    #: Who writes when a caller names no author (the app and the CLI set it: "operator:USER", "cli:USER"),
    #: so History's Author column is filled for their writes too.
    default_author: str | None = None

    def __init__(self, root: str | os.PathLike[str], registry: MemoryBackendRegistry | None = None, *,
                 settings: ProjectSettings | None = None) -> None:
        root_p = Path(root).expanduser()
        if not root_p.is_dir():
            raise MemoryBackendError(f"project folder {str(root)!r} does not exist or is not a folder",
                                     "NOT_FOUND", "file")
        self.root = root_p.resolve()
        self.closed = False
        #: The write pipeline's screen stage (:mod:`core.storage.pipeline`): the firewall installs its own here.
        self.screen: Screen = lazy_screen(self.root)  # the memory firewall (core.firewall, issue 20)
        self.registry = registry or default_registry()
        self.layout = Layout(self.root)
        self.settings_error: SettingsError | None = None
        #: Where Fusion's settings of this project live (:class:`core.settings.store.StoreInfo`), once read.
        self.settings_store: Any = None
        self.settings = settings if settings is not None else self._load_settings()
        self.backend: MemoryBackend = resolve_memory_backend(self.settings, self.root, self.registry)

    # -- set-up ------------------------------------------------------------------------------------
    def _load_settings(self) -> ProjectSettings:
        from core.settings.model import read_settings
        from core.settings.store import detect_store

        try:
            self.settings_error = None
            store = detect_store(self.root)
            self.settings_store = store.info
            return read_settings(self.root, store).settings
        except SettingsError as exc:
            from core.settings.model import ProjectSettings

            self.settings_error = exc
            log.warning("settings unreadable, using defaults: %s", exc)
            return ProjectSettings()

    def reload(self) -> Changes:
        """Read the settings again and re-resolve the backend (after a change made elsewhere)."""
        self.layout = Layout(self.root)
        self.settings = self._load_settings()
        self._replace_backend(resolve_memory_backend(self.settings, self.root, self.registry))
        return Changes(settings=True)

    def adopt_settings(self, settings: ProjectSettings, store: Any, error: SettingsError | None = None) -> Changes:
        """Take settings read elsewhere (a watcher noticed a change made outside this process), re-resolving
        the backend when its choice moved."""
        before = self.settings
        self.settings, self.settings_store, self.settings_error = settings, store, error
        if (settings.memory_backend, settings.memory_backend_config) != (
                before.memory_backend, before.memory_backend_config):
            self._replace_backend(resolve_memory_backend(settings, self.root, self.registry))
        return Changes(settings=True)

    def _replace_backend(self, backend: MemoryBackend) -> None:
        old, self.backend = self.backend, backend
        if old is not backend:
            try:
                old.shutdown()
            except Exception as exc:
                log.warning("backend %s shutdown failed: %s", old.id, exc)

    def close(self) -> None:
        """Release the backend's resources (a closed project is never handed out again by :func:`open_project`)."""
        self.closed = True
        try:
            self.backend.shutdown()
        except Exception as exc:
            log.warning("backend %s shutdown failed: %s", self.backend.id, exc)

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

    # -- writing -----------------------------------------------------------------------------------
    def write(self, path: str | None, content: str, *, expected_hash: str | None = None,
              source: str = "write", author: str | None = None, writer: Writer | None = None) -> WriteResult:
        """Replace a document through the write pipeline (:mod:`core.storage.pipeline`; previous version kept in history first).

        ``status`` is ``written``, or ``held`` (``inbox_id``) when the screen holds it; a refusal raises
        :class:`core.storage.pipeline.WriteRefused`.
        """
        if not isinstance(content, str):
            raise MemoryBackendError(f"content must be a string, not {type(content).__name__}",
                                     "INVALID_CONFIG", self.backend.id)
        rel = self.resolve_path(path)
        self.backend.require_writable()  # even a write that changes nothing: the answer must not depend on it
        data = self._encoded(content, f"the new text of {rel}")
        author = author if author is not None else self.default_author  # the app's or the CLI's user
        who = writer or pipeline.writer_for(source, author)
        done = pipeline.replace(self, rel, content, writer=who, source=source, expected_hash=expected_hash,
                                author=author, data=data)
        flags = tuple(f.to_json() for f in done.flags)
        if not done.changed:
            return WriteResult(rel, False, len(data), data=data, status=done.status, flags=flags,
                               inbox_id=done.inbox_id)
        before = done.before
        changes = Changes(documents=frozenset({rel}), history=before is not None,
                          insights=rel == self.insights_path)
        warnings = tuple(self._warnings(rel, before or "", content)) + done.warnings
        return WriteResult(rel, True, len(data), changes, warnings, data, status=done.status, flags=flags)

    def write_insights(self, content: str, *, expected_hash: str | None = None, source: str = "insights-merge",
                       author: str | None = None, writer: Writer | None = None) -> WriteResult:
        """Replace the insights document (at this layout's path)."""
        return self.write(self.insights_path, content, expected_hash=expected_hash, source=source, author=author,
                          writer=writer)

    def _check_text(self, text: str, what: str) -> None:
        """Refuse (``INVALID_CONFIG``) text that cannot be a UTF-8 memory file, before any I/O."""
        self._encoded(text, what)

    def _encoded(self, text: str, what: str) -> bytes:
        """``text`` as UTF-8; ``INVALID_CONFIG`` (before any I/O) when it cannot be a UTF-8 memory file."""
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError as exc:  # lone surrogates: a non-UTF-8 argument decoded by Python
            raise MemoryBackendError(
                f"{what} holds a character that is not valid UTF-8 (at character {exc.start}; a command-line "
                "argument in another encoding?); nothing was written", "INVALID_CONFIG", self.backend.id) from exc

    def _check_creatable(self, rel: str, current: str | bytes | None) -> None:
        """Refuse creating a file of the other layout: the legacy ``.fusion/memory.md`` of a layered project."""
        if current is None and self.layout.layered and rel == SEED_MEMORY:
            raise MemoryBackendError(
                f"{SEED_MEMORY} is the seed layout's file and this project is layered: Fusion would not read it, "
                f"so memdesk does not create it (write {self.memory_path} instead); nothing was written",
                "INVALID_CONFIG", self.backend.id)

    def create_document(self, path: str | None = None) -> Changes:
        """Create a missing document with its layout's exact scaffold (never overwrites); what changed."""
        rel = self.resolve_path(path)
        self.backend.require_writable()
        if not self.exists(rel):
            self._check_creatable(rel, None)
        scaffold = self.layout.scaffold_for(rel)
        if scaffold is None:
            scaffold = ""
        if self.exists(rel):
            return Changes()
        done = pipeline.append(self, rel, scaffold, lambda current: None if current else scaffold,
                               writer=pipeline.MEMDESK, source="create")
        return Changes(documents=frozenset({rel})) if done.added else Changes()

    # -- appending ---------------------------------------------------------------------------------
    def append_target(self, *, layer: AppendLayer | None = None, agent: str | None = None,
                      path: str | None = None, today: date | None = None) -> str:
        """The document an append goes to: ``path``, else by layout, layer and agent (design §2a)."""
        if path is not None:
            if layer is not None or agent is not None:
                raise MemoryBackendError("give either --file or --layer/--agent, not both", "INVALID_CONFIG",
                                         self.backend.id)
            rel = self.resolve_path(path)
            self._check_append_target(rel)
            return rel
        if not self.layout.layered:
            if layer == "daily" or agent is not None:
                raise MemoryBackendError(
                    "this project is in the seed layout (.fusion/memory.md): it has no daily notes or "
                    "per-agent memory; append without --layer daily/--agent", "INVALID_CONFIG", self.backend.id)
            return self.memory_path
        day = today or datetime.now(UTC).date()
        if (layer or "daily") == "daily":
            return self.layout.daily_path(day, agent)
        return self.layout.long_term_path(agent)

    def _check_append_target(self, rel: str) -> None:
        """Entries go to memory documents only: not to insights (merged by review), the archive or the legacy file."""
        why = None
        if rel == self.insights_path:
            why = "insights are added by extraction and review (memdesk insights), never appended as raw text"
        elif rel == self.layout.archive_path:
            why = "the archive only receives entries memdesk rotates out of the working memory"
        elif self.layout.layered and rel == SEED_MEMORY:
            why = "Fusion does not read the legacy file in a layered project; append to MEMORY.md or a daily note " \
                  "(and move the legacy file with `memdesk migrate`)"
        if why:
            raise MemoryBackendError(f"cannot append to {rel}: {why}; nothing was written", "INVALID_CONFIG",
                                     self.backend.id)

    def append(self, text: str | None, *, layer: AppendLayer | None = None, agent: str | None = None,
               path: str | None = None, author: str | None = None, source: str = "append",
               force: bool = False, today: date | None = None, max_lines: int | None = None,
               writer: Writer | None = None) -> AppendOutcome:
        """Append an entry with seed 002's guards: empty → no I/O at all; already present → no write.

        Seed layout: ``\\n\\n<!-- YYYY-MM-DD -->\\n<content>`` and batched archive rotation. Layered
        layout: Fusion's ``\\n<content>\\n``, today's daily note created with its scaffold when missing.
        With memory switched off the append is refused unless ``force``.
        """
        from core.project import appending as entries
        from core.storage.history import (
            worker as history_worker,  # not core.storage.history.versions: an append needs no versions
        )

        trimmed = (text or "").strip()
        if not trimmed:
            return AppendOutcome("skipped_empty", None, None, entries.tool_message_for("skipped_empty", None))
        if not self.settings.memory_enabled and not force:
            raise MemoryDisabledError(
                "memory is switched off for this project (memoryEnabled is false); nothing was written. "
                "Switch it on, or pass --force to write anyway", "READ_ONLY", self.backend.id)
        self._check_text(trimmed, "the entry")
        if "\x00" in trimmed:
            raise MemoryBackendError(
                f"the entry holds a NUL character (at character {trimmed.index(chr(0))}); memory files are text, so "
                "nothing was written", "INVALID_CONFIG", self.backend.id)
        rel = self.append_target(layer=layer, agent=agent, path=path, today=today)
        self.backend.require_writable()
        # An entry that could never fit is refused before any lock or folder is made.
        fileio.check_size(trimmed.encode("utf-8"), f"{rel} with this entry", self.backend.id)
        layered_format = self.layout.layered
        # Seed 002 creates a missing file with the entry alone; Fusion's layered files start from their scaffold.
        scaffold = (self.layout.scaffold_for(rel) or "") if layered_format else ""

        def build(current: str) -> str | None:
            if trimmed in current:
                return None
            entry = f"\n{trimmed}\n" if layered_format else entries.format_entry(trimmed, today)
            history_worker.open_soon(self.root)  # the entry will be written: its event follows
            return (scaffold if not current else "") + entry

        author = author if author is not None else self.default_author  # the app's or the CLI's user
        who = writer or pipeline.writer_for(source, author)
        done = pipeline.append(self, rel, trimmed, build, writer=who, source=source, author=author)
        before = done.before or ""
        added = done.added
        file_path = self.root / rel
        flags = tuple(f.to_json() for f in done.flags)
        if done.status == "held":
            return AppendOutcome("held", file_path, rel, f"Memory entry held for review ({done.inbox_id}) — {rel}",
                                 flags=flags, inbox_id=done.inbox_id)
        if not added:
            return AppendOutcome("skipped_duplicate", file_path, rel,
                                 entries.tool_message_for("skipped_duplicate", file_path), flags=flags)
        self._record_append(rel, trimmed, author, source)
        archived = 0
        after = done.after if done.after is not None else before + added  # a MiB copied once, not twice
        warnings: list[str] = []
        if not layered_format and rel == self.layout.memory_path and self.backend.file_canonical:
            try:
                archived = entries.rotate_if_needed(self, rel, max_lines, seen=after)
            except MemoryBackendError as exc:  # the entry is written: report that, and why rotation waits
                log.warning("archive rotation of %s skipped: %s", rel, exc)
                warnings.append(f"the entry was written, but old entries were not moved to the archive: {exc}")
        changes = Changes(documents=frozenset({rel} | ({self.layout.archive_path} if archived else set())),
                          history=bool(archived))
        warnings += self._warnings(rel, before, after)
        warnings += done.warnings
        return AppendOutcome("written", file_path, rel, entries.tool_message_for("written", file_path), archived,
                             changes, tuple(warnings), flags)

    def _record_append(self, rel: str, text: str, author: str | None, source: str) -> None:
        from core.storage.history import worker as history_worker

        try:
            history_worker.record_append(self.root, rel, text, author=author, source=source)
        except Exception as exc:  # who-wrote-what is a nicety; the entry itself is safe on disk
            log.warning("append to %s not recorded in history: %s", rel, exc)

    def _warnings(self, rel: str, before: str | bytes, after: str) -> list[str]:
        from core.budget import project_append_warnings  # here: only a write needs the budget

        try:
            return list(project_append_warnings(self, rel, before, after))
        except Exception as exc:
            log.warning("load-budget check failed for %s: %s", rel, exc)
            return []

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
        found = _BAD_QUERY_CHAR.search(query)  # one character class: linear, never backtracks
        if found is not None:
            i, code = found.start(), ord(found.group())
            if 0xD800 <= code <= 0xDFFF:
                raise bad(f"holds a lone surrogate U+{code:04X} (at character {i}), which is not valid text")
            name = "a NUL character" if code == 0 else f"the control character U+{code:04X}"
            raise bad(f"holds {name} (at character {i})")

    # -- settings ----------------------------------------------------------------------------------
    def update_settings(self, patch: Mapping[str, Any], *, base: Mapping[str, Any] | None = None) -> Changes:
        """Save a settings patch (``SettingsError`` on bad input, nothing changed) and re-resolve the backend.

        Each key goes where it lives (:func:`core.settings.update_settings`; ``base``: the values the
        change was made against, for the stale-write check). Switching memory on creates the long-term
        file when it is missing (never fatal). The extraction schedule is kept in step by
        :class:`core.store.ProjectStore`, which sits above.
        """
        from core.settings.model import update_settings_read

        before = self.settings
        read = update_settings_read(self.root, patch, base=base)
        self.settings, self.settings_store = read.settings, read.store
        self.settings_error = None
        changes = Changes(settings=True)
        if (self.settings.memory_backend, self.settings.memory_backend_config) != (
                before.memory_backend, before.memory_backend_config):
            self._replace_backend(resolve_memory_backend(self.settings, self.root, self.registry))
        if self.settings.memory_enabled and not before.memory_enabled:
            try:
                if self.writable() is None and not self.exists():
                    changes = changes | self.create_document()
            except Exception as exc:  # non-fatal: the setting is saved; the file can be created later
                log.warning("memory file not created (non-fatal): %s", exc)
        return changes

    # -- history -----------------------------------------------------------------------------------
    @property
    def backend_history(self) -> bool:
        """Whether the backend keeps the history itself (``postgres``: in its database) instead of ``core.storage.history.versions``."""
        return callable(getattr(self.backend, "list_versions", None)) and \
            callable(getattr(self.backend, "get_version", None))

    def list_versions(self, path: str | None = None, limit: int | None = None) -> list[Version]:
        """Stored versions, newest first (of one document when ``path`` is given), from where the backend keeps them."""
        if self.backend_history:
            return list(self.backend.list_versions(path, limit))  # type: ignore[attr-defined]
        from core.storage.history import versions as history

        return history.list_versions(self.root, path, limit)

    def get_version(self, version_id: int) -> tuple[Version, str] | None:
        """One stored version and its text, or ``None`` (an id that cannot be one is ``None`` too, never an error)."""
        if isinstance(version_id, bool) or not isinstance(version_id, int) or not 0 < version_id <= _MAX_VERSION_ID:
            return None
        if self.backend_history:
            found = self.backend.get_version(version_id)  # type: ignore[attr-defined]
            if found is not None and not isinstance(found[1], str):
                raise MemoryBackendError(f'backend "{self.backend.id}" returned {type(found[1]).__name__} as the '
                                         f"text of version {version_id}", "READ_FAILED", self.backend.id)
            return found
        from core.storage.history import versions as history

        return history.get_version(self.root, version_id)

    def restore(self, version_id: int, *, author: str | None = None, writer: Writer | None = None) -> WriteResult:
        """Restore a stored version of a memory document to its own path, through the backend.

        The write keeps the content it replaces (source ``restore``) where the backend keeps history.
        History rows are untrusted (a shared database, a copied ``history.db``): only a memory document
        of this project's layout is ever written.
        """
        found = self.get_version(version_id)
        if found is None:
            raise MemoryBackendError(f"no version {version_id} in history", "NOT_FOUND", self.backend.id)
        version, content = found
        if not isinstance(version.path, str) or not self.layout.is_document(version.path):
            raise MemoryBackendError(
                f"version {version_id} is of {version.path!r}, which is not a memory document of this project; "
                "memdesk restores memory documents only", "INVALID_CONFIG", self.backend.id)
        return self.write(version.path, content, source="restore", author=author, writer=writer)


# -- a small per-process cache for the seed-named wrappers ------------------------------------------
_cache: dict[tuple[int, str, int], tuple[str, Project]] = {}
_cache_lock = threading.Lock()


def _config_stamp(root: Path) -> str:
    try:  # untrusted: a FIFO or device is never waited on, and the size is capped (fileio.read_bytes)
        data = fileio.read_bytes(root / CONFIG_PATH, max_size=fileio.MAX_FILE_SIZE) or b""
    except MemoryBackendError as exc:
        data = f"unreadable: {exc.code}".encode()
    layered = "L" if (root / ".fusion" / "memory").is_dir() else "S"
    from core.settings.store.stamp import local_stamp  # memdesk's own settings and Fusion's database too

    return layered + fileio.sha256_hex(data) + local_stamp(root)


def open_project(root: str | os.PathLike[str], registry: MemoryBackendRegistry | None = None) -> Project:
    """The one :class:`Project` of ``root`` in this process (issue 19: one project model, so one backend, per root).

    The GUI's session, each server and the seed-named functions (``read_working_memory(root)`` …) all
    get the same object. When the project's settings or layout changed since (its stamp), the same
    project reloads them and re-resolves its backend instead of a second model being made. A project
    with its own ``registry`` (a test's, a plugin host's) is shared only with callers giving the same one.
    """
    real = Path(root).expanduser().resolve()
    key = (os.getpid(), str(real), id(registry) if registry is not None else 0)
    stamp = _config_stamp(real)
    with _cache_lock:
        hit = _cache.get(key)
    if hit is not None and not hit[1].closed:
        if hit[0] != stamp:
            hit[1].reload()
            with _cache_lock:
                _cache[key] = (stamp, hit[1])
        return hit[1]
    project = Project(real, registry)
    with _cache_lock:
        raced = _cache.get(key)
        if raced is not None and raced is not hit and not raced[1].closed:  # another thread made it meanwhile
            winner = raced[1]
        else:
            _cache[key] = (stamp, project)
            winner = project
    if winner is not project:
        project.close()
    return winner


def adopted(project: Project) -> bool:
    """Whether ``project`` is the one :func:`open_project` hands out for its root."""
    with _cache_lock:
        return any(hit[1] is project for hit in _cache.values())


def forget_project(root: str | os.PathLike[str]) -> None:
    """Drop (and close) the shared projects of ``root``: the next :func:`open_project` builds a new one."""
    real = str(Path(root).expanduser().resolve())
    with _cache_lock:
        keys = [k for k in _cache if k[0] == os.getpid() and k[1] == real]
        hits = [_cache.pop(k) for k in keys]
    for hit in hits:
        hit[1].close()
