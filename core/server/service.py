"""What the HTTP API and the MCP server both do, over the project model: one function per operation.

Every read and write goes through :class:`core.project.Project`, so agents' writes get the same guards
as the operator's (lock, seed 002's append guards, the size limit, history, ``CONFLICT`` on a stale
base, path confinement). Nothing here runs a command or opens a network connection.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.backends import default_registry
from core.backends.base import MemorySearchOptions
from core.backends.registry import MemoryBackendRegistry
from core.errors import MemoryBackendError
from core.insights.audit import generate_memory_audit
from core.project.model import Project, open_project
from core.server import models
from core.server.access import Access
from core.server.memo import FactsMemo, TextFacts
from core.storage.fileio import content_hash

log = logging.getLogger(__name__)

__all__ = ["ProjectNotServed", "ServedProjects", "append", "audit", "backend_info", "file_window", "files",
           "insights", "read_file", "search", "stats", "write_file", "write_insights"]


class ProjectNotServed(LookupError):
    """``?project=`` named a project this server does not serve."""


def _config_stamp(root: Path | str) -> tuple[object, ...]:
    """What a cached :class:`Project` depends on: its settings file and which layout the folder has.

    Two ``os.stat`` on plain strings (no :class:`Path` built per request: this runs on every request)."""
    base = os.fspath(root)
    try:
        st = os.stat(base + _CONFIG_REL)
        config: object = (st.st_ino, st.st_mtime_ns, st.st_size)
    except OSError:
        config = None
    try:
        os.stat(base + _LAYERED_REL)
        layered: object = True
    except OSError:
        layered = None
    return config, layered


_CONFIG_REL = os.sep + os.path.join(".fusion", "config.json")
_LAYERED_REL = os.sep + os.path.join(".fusion", "memory")


@dataclass(frozen=True)
class ServedProject:
    """One project a server serves: the key clients name it by, and its folder."""

    key: str
    root: Path


class ServedProjects:
    """The projects one server serves, each selectable by its key (folder name) or its path.

    The :class:`Project` of each is cached and rebuilt when ``.fusion/config.json`` changes, so an
    operator who switches the backend (to ``readonly``, say) is obeyed at the next request.
    """

    def __init__(self, roots: Iterable[str | os.PathLike[str]], registry: MemoryBackendRegistry | None = None):
        self.registry = registry or default_registry()
        self._shared = registry is None  # the process's one model per folder (a given registry: its own)
        self.served: list[ServedProject] = []
        for raw in roots:
            root = Path(raw).expanduser().resolve()
            if not root.is_dir():
                raise ValueError(f"project folder {str(raw)!r} does not exist or is not a folder")
            if any(s.root == root for s in self.served):
                continue
            key, n = root.name or "project", 2
            while any(s.key == key for s in self.served):
                key, n = f"{root.name}-{n}", n + 1
            self.served.append(ServedProject(key, root))
        if not self.served:
            raise ValueError("no project to serve")
        self._cache: dict[Path, tuple[tuple[object, ...], Project]] = {}
        self._lock = threading.Lock()

    def find(self, selector: str | None) -> ServedProject:
        """The served project named by ``selector`` (its key or its folder); the first when ``None``."""
        if selector is None or selector == "":
            return self.served[0]
        for s in self.served:
            if selector == s.key:
                return s
        try:
            wanted = Path(selector).expanduser().resolve()
        except (OSError, RuntimeError, ValueError):
            wanted = None
        for s in self.served:
            if wanted == s.root:
                return s
        raise ProjectNotServed(f"project {selector!r} is not served here; served: "
                               + ", ".join(s.key for s in self.served))

    def cached(self, selector: str | None = None) -> Project | None:
        """The project model of ``selector`` when the cached one is current (no I/O beyond two stats)."""
        return self.cached_for(self.find(selector))

    def cached_for(self, served: ServedProject) -> Project | None:
        """:meth:`cached` of a project already found (a request's selector is resolved once)."""
        stamp = _config_stamp(served.root)
        with self._lock:
            hit = self._cache.get(served.root)
        return hit[1] if hit is not None and hit[0] == stamp and not getattr(hit[1], "closed", False) else None

    def get(self, selector: str | None = None) -> Project:
        """The (cached) project model of the project named by ``selector``."""
        hit = self.cached(selector)
        if hit is not None:
            return hit
        served = self.find(selector)
        stamp = _config_stamp(served.root)
        # The process's one model of this folder (issue 19): a changed config reloads it, never a second one.
        project = open_project(served.root, None if self._shared else self.registry)
        with self._lock:
            self._cache[served.root] = (stamp, project)
        return project

    def key_of(self, project: Project) -> str:
        """The key of a served project's model."""
        for s in self.served:  # the model was built from the resolved root: no path resolution per request
            if s.root == project.root:
                return s.key
        root = Path(project.root).resolve()
        return next(s.key for s in self.served if s.root == root)


# -- reads -----------------------------------------------------------------------------------------
def files(project: Project) -> models.FilesResponse:
    """Every document of the project."""
    return models.FilesResponse(files=[models.FileInfo.model_validate(d.to_json()) for d in project.documents()])


def read_file(project: Project, path: str | None) -> models.FileResponse:
    """One whole document; ``NOT_FOUND`` when it is a valid document name that does not exist yet."""
    rel = project.resolve_path(path)
    ticket = _facts_memo.ticket()  # before the read: a read that ends after a newer one is not taken for a change
    return finish_read(project, path, rel, project.read(rel), ticket)


def finish_read(project: Project, path: str | None, rel: str, text: str, ticket: int | None = None
                ) -> models.FileResponse:
    """:func:`read_file` after the read: ``text`` is document ``rel``'s text as just read (``ticket``: see
    :meth:`FactsMemo.ticket`)."""
    if text == "" and path is not None and not project.exists(rel):
        raise MemoryBackendError(f"memory document {rel!r} does not exist yet", "NOT_FOUND", project.backend.id)
    facts = text_facts(project, rel, text, ticket)
    return models.FileResponse(path=rel, content=text, hash=facts.hash, size=facts.size, total_lines=facts.lines)


def read_unchanged(project: Project, path: str | None) -> tuple[str, TextFacts | None]:
    """For the event loop: read document ``path``'s bytes (one local file read, no lock, nothing decoded) and give
    its facts when they cost little: its bytes are the ones this process last served (kept as they are), or those
    bytes with more after them (an append: only the tail is decoded and worked out, the change noticed by a
    hand-off to the noticer's thread; the whole text is not built).

    Returns ``(rel, facts)``; ``facts`` is ``None`` otherwise (a first serve checks state files, a rewrite
    hashes the whole MiB, a missing document or one that is not UTF-8 is answered as a read answers it:
    :func:`read_file` then runs in the thread pool)."""
    rel = project.resolve_path(path)
    ticket = _facts_memo.ticket()
    data = project.read_bytes(rel)
    if not data:
        return rel, None
    key = _facts_key(project, rel)
    facts = _facts_memo.same_bytes(key, data, ticket)
    if facts is None:
        facts = _facts_memo.grow_bytes(key, data,
                                       lambda before, after: _notice(project, rel, before, after, grown=True), ticket)
    return rel, facts


def _facts_key(project: Project, rel: str) -> tuple[str, str]:
    return (str(project.root), rel)


_facts_memo = FactsMemo()


def text_facts(project: Project, rel: str, text: str, ticket: int | None = None) -> TextFacts:
    """Hash, UTF-8 size, line count and JSON literal of a document's text (remembered per document,
    grown by the tail when the text only grew)."""
    def changed(before: str | None) -> None:
        if before is None:
            _check_seen(project, rel, text)  # first serve in this process: a change made while memdesk was not running
        else:
            _notice(project, rel, before, text)

    return _facts_memo.facts(_facts_key(project, rel), text, changed, ticket)


def _check_seen(project: Project, rel: str, text: str) -> None:
    from core.storage.noticed import check_seen

    try:
        check_seen(project, rel, text)
    except Exception as exc:  # a safety net: the read is served either way
        log.warning("what %s held when memdesk last wrote it was not compared: %s", rel, exc)


def _notice(project: Project, rel: str, before: str | TextFacts, after: str | TextFacts, *,
            grown: bool | None = None) -> None:
    """The served text changed since it was last served: keep the version before when no memdesk write did
    (another program's change; core.storage.noticed skips what memdesk's own writes recorded). Appends are joined
    and recorded within a second (:mod:`core.server.noticing`), so a read does not wait on history. ``grown``:
    the caller knows ``after`` is ``before`` with more after it (else the noticer compares them)."""
    from core.server.noticing import notice

    try:
        notice(project, rel, before, after, grown=grown)
    except Exception as exc:  # a safety net: the read is served either way
        log.warning("an outside change of %s was not recorded: %s", rel, exc)


@dataclass(frozen=True)
class Window:
    """A line window of a document, and the hash and UTF-8 size of the whole document (for ``memory_write``)."""

    path: str
    content: str
    start_line: int
    end_line: int
    total_lines: int
    hash: str
    size: int = 0


def _line_offset(text: str, line: int) -> int:
    """Where 1-based ``line`` starts in ``text`` (``len(text) + 1`` past the last line)."""
    pos = 0
    for _ in range(line - 1):
        nl = text.find("\n", pos)
        if nl < 0:
            return len(text) + 1
        pos = nl + 1
    return pos


def file_window(project: Project, path: str | None, start_line: int = 1, line_count: int | None = None) -> Window:
    """Lines ``start_line`` .. ``start_line + line_count - 1`` (1-based) of a document; all when no count.

    Only the window's lines are scanned (a 120-line window of a 1 MiB document does not split it all);
    the line count comes from the document's remembered facts."""
    doc = read_file(project, path)
    text = doc.content
    total = doc.total_lines if doc.total_lines is not None else text.count("\n") + 1
    start = max(1, int(start_line))
    first = min(start - 1, total)
    last = total if line_count is None else min(first + max(1, int(line_count)), total)
    begin = _line_offset(text, first + 1)
    if begin > len(text):
        content = ""
    else:
        stop = begin
        for _ in range(last - first):
            nl = text.find("\n", stop)
            if nl < 0:
                stop = len(text) + 1
                break
            stop = nl + 1
        content = text[begin:stop - 1] if last > first else ""
    return Window(doc.path, content, start, last, total, doc.hash, doc.size or 0)


def note_read(key: str, root: Path, path: str, digest: str, size: int, start: int, end: int, total: int, *,
              client: str | None, token: str | None, via: str) -> None:
    """Put one read on record (:mod:`core.storage.readlog`): returns at once; no text is kept."""
    from core.storage import readlog

    readlog.record(readlog.ReadEvent(readlog.now(), str(root), key, path, digest, size, start, end, total,
                                     client, token, via))


def insights(project: Project) -> models.InsightsResponse:
    """The insights document; ``content`` ``None`` when there is none."""
    text = project.read_insights()
    return models.InsightsResponse(content=text, exists=text is not None,
                                   hash=None if text is None else content_hash(text))


def stats(project: Project) -> models.StatsResponse:
    """Sizes (characters) of working memory and insights."""
    working = project.read()
    text = project.read_insights()
    return models.StatsResponse(working_memory_size=len(working), insights_size=len(text or ""),
                                insights_exists=text is not None)


def audit(project: Project) -> models.AuditResponse:
    """The audit report of the project's memory (reads only; the report is not written)."""
    # generate_memory_audit is imported with this module, not here: importing insights imports croniter, whose
    # import runs platform.architecture(), which starts the `file` program, and no request may run a program.
    return models.AuditResponse.model_validate(generate_memory_audit(project.root).to_json())


def backend_info(project: Project, registry: MemoryBackendRegistry) -> models.BackendResponse:
    """The backend in use, Fusion's capability flags and the registered backends."""
    backend = project.backend
    reason = project.writable()
    writable = backend.has_capability("write") and reason is None
    caps = models.BackendCapabilities(
        readable=backend.has_capability("read"), writable=writable,
        # Every memdesk write is atomic and refuses a stale base (CONFLICT) when given expectedHash.
        supports_atomic_write=writable, has_conflict_resolution=writable, persistent=True)
    return models.BackendResponse(
        current_backend=backend.id, capabilities=caps,
        # None when config.json names no backend (the layout's default then applies: file, or qmd if layered).
        configured_backend=project.settings.memory_backend if "memory_backend" in project.settings.model_fields_set
        else None,
        capability_list=sorted(c for c in ("read", "write", "search", "insights", "transactions")
                              if backend.has_capability(c)),
        available_backends=[i.id for i in registry.infos()], fallback_reason=project.fallback_reason,
        writable_reason=reason)


def for_scope(info: models.BackendResponse, who: Access) -> models.BackendResponse:
    """``info`` as the caller may use it: a token that may not replace documents (``read`` or ``append`` scope)
    is told the backend is not writable, and why. Fusion's Memory view reads ``capabilities.writable`` to show its
    read-only banner and a read-only editor (``components/MemoryView.tsx`` at 745971a8); with ``true`` it offered
    a Save that memdesk then refused with 403."""
    if not info.capabilities.writable or who.can("write"):
        return info
    caps = info.capabilities.model_copy(update={"writable": False, "supports_atomic_write": False,
                                                "has_conflict_resolution": False})
    reason = (f"token {who.name!r} has scope {who.describe()}: it may not replace documents" if who.name
              else f"scope {who.describe()}: documents may not be replaced")
    return info.model_copy(update={"capabilities": caps, "writable_reason": reason})


def _plain(snippet: str) -> str:
    """The snippet without the search view's «highlight» marks (agents get the text as it is in the file)."""
    from core.search.snippet import MARKS

    return snippet.replace(MARKS[0], "").replace(MARKS[1], "")


def search(project: Project, query: str, *, limit: int = 5, mode: str = "keyword",
           derived: bool = False, include_superseded: bool = False) -> models.SearchResponse:
    """Search the project; without ``derived`` a backend that cannot search raises ``CAPABILITY_UNSUPPORTED``.

    Entries marked ``[superseded DATE]`` are left out unless ``include_superseded`` (as ``memdesk search``)."""
    asked = limit if include_superseded else limit * 2 + 10  # ask for more, then leave superseded entries out
    hits = project.search(query, MemorySearchOptions(limit=asked, mode=mode), derived_ok=derived)  # type: ignore[arg-type]
    if not include_superseded:
        from core.firewall.search_filter import without_superseded

        hits = without_superseded(project.root, hits, project.read)[:limit]
    out = []
    for h in hits:
        start = h.line_number
        out.append(models.SearchHit(
            path=h.file or project.memory_path, line_start=start,
            line_end=None if start is None else start + h.content.count("\n"),
            snippet=_plain(h.content), score=h.score, backend=project.backend.id, section=h.section))
    return models.SearchResponse(query=query, results=out)


# -- writes ----------------------------------------------------------------------------------------
def _add_current_hash(project: Project, relpath: str, exc: MemoryBackendError) -> None:
    """Attach the document's current hash to a ``CONFLICT`` so the client can merge and retry."""
    if exc.code == "CONFLICT":
        try:
            exc.current_hash = content_hash(project.read(relpath))  # type: ignore[attr-defined]
        except MemoryBackendError:
            pass


def write_file(project: Project, path: str | None, content: str, *, expected_hash: str | None,
               author: str | None, source: str, writer: Any = None) -> models.WriteResponse:
    """Replace one document (history first); ``CONFLICT`` carries the current hash. ``writer`` (a
    :class:`core.storage.pipeline.Writer`) says who writes when ``source`` alone does not (``edit`` by an MCP client)."""
    rel = project.resolve_path(path)
    try:
        result = project.write(rel, content, expected_hash=expected_hash, source=source, author=author,
                               writer=writer)
    except MemoryBackendError as exc:
        _add_current_hash(project, rel, exc)
        raise
    return models.WriteResponse(path=result.path, hash=result.hash, changed=result.changed, size=result.size,
                                warnings=list(result.warnings), status=result.status, inboxId=result.inbox_id,
                                flags=list(result.flags))


def write_insights(project: Project, content: str, *, expected_hash: str | None, author: str | None,
                   source: str) -> models.WriteResponse:
    """Replace the insights document."""
    try:
        result = project.write_insights(content, expected_hash=expected_hash, source=source, author=author)
    except MemoryBackendError as exc:
        _add_current_hash(project, project.insights_path, exc)
        raise
    return models.WriteResponse(path=result.path, hash=result.hash, changed=result.changed, size=result.size,
                                warnings=list(result.warnings))


def append(project: Project, content: str, *, layer: str | None = None, agent: str | None = None,
           path: str | None = None, author: str | None, source: str) -> models.AppendResponse:
    """Append one entry with seed 002's guards; the status and message are the tool's."""
    outcome = project.append(content, layer=layer, agent=agent, path=path, author=author,  # type: ignore[arg-type]
                             source=source)  # layer: the route's model allows only the two layers
    return models.AppendResponse(status=outcome.status, message=outcome.message, path=outcome.path,
                                 archivedEntries=outcome.archived_entries, warnings=list(outcome.warnings),
                                 inboxId=outcome.inbox_id, flags=list(outcome.flags))
