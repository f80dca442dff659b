"""The one door for every write (issue 19): what → where → lock once → read once → screen → write → record → report.

Every change to a memory document goes through :func:`run`, whatever its source (the operator's
save, an agent's append over HTTP or MCP, a restore, a prune, an extraction, a mirror import…):

1. **what**: the target must be a memory document of this project by the layout's rules
   (:meth:`core.documents.layout.Layout.is_document`) or one of memdesk's named state files
   (:data:`STATE_FILES`). Anything else is refused, whoever named it: a person, a client, a database
   row or a change notification.
2. **where**: the path is resolved once and must stay inside the project, links out refused
   (:func:`core.storage.fileio.check_writable`): not a regular file, or one with other hard links, is refused too.
3. **lock** the document once (:func:`core.storage.docio.document_lock`, reentrant for the layers below) and
   **read** it once under that lock.
4. **screen**: ``project.screen(WriteRequest)`` decides (the firewall of issue 20 installs its screen;
   :data:`PASS_ALL` by default). ``hold`` and ``refuse`` write nothing; ``skip`` writes nothing.
5. **write** once: an atomic replace or an ``O_APPEND``, through the document's backend.
6. **record**: the previous version goes to history (source and author) before a replacement; an
   append is recorded as an event with its author.
7. **report**: a :class:`Outcome` with ``status`` (``written`` | ``held`` | ``refused`` |
   ``skipped_empty`` | ``skipped_duplicate``), the flags and the new bytes.

A screen that raises fails open for the operator and memdesk itself (the write goes on, with a
warning) and closed for everyone else (refused, naming the error).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from core.errors import MemoryBackendError
from core.frozen import Record
from core.logs import get_logger
from core.storage.statefiles import project_paths
from core.storage.writers import MEMDESK, OPERATOR, WRITER_KINDS, Writer, WriterKind  # noqa: F401 (callers import them here)

if TYPE_CHECKING:
    from typing import Protocol

    from core.documents.layout import Layout
    from core.storage.noticed import Project as NoticingProject

    class _Backend(Protocol):
        """What a write asks of the project's backend (:class:`core.backends.base.MemoryBackend`, above storage)."""

        @property
        def id(self) -> str: ...

        def require_writable(self) -> None: ...

        def read_document_bytes(self, relpath: str) -> bytes | None: ...

        def write_document(self, relpath: str, content: str, *, expected_hash: str | None = None,
                           source: str = "write", author: str | None = None) -> None: ...

        def append_document(self, relpath: str, build: Callable[[str], str | None], *,
                            author: str | None = None, source: str = "append") -> str | None: ...

    class Project(NoticingProject, Protocol):
        """The project a write goes to (:class:`core.project.model.Project`, above storage): what this asks of it
        beyond what noting its writes does (root, layout, backend_history)."""

        @property
        def backend(self) -> _Backend: ...

        def _check_creatable(self, rel: str, current: str | bytes | None) -> None: ...

log = get_logger(__name__)

Op = Literal["append", "replace"]
Status = Literal["written", "held", "refused", "skipped_empty", "skipped_duplicate"]
FlagKind = Literal["secret", "injection", "near-duplicate", "contradiction"]
Action = Literal["write", "hold", "refuse", "skip"]

#: After an append, what the document holds is noted for the next open (core.storage.noticed) up to this many characters;
#: a larger document is noted at its next save (hashing a MiB per append would cost more than the append).
NOTE_APPENDS_UP_TO = 256 * 1024

#: memdesk's own named state files a write may target besides the memory documents (project-relative): the
#: project's single files of :data:`core.storage.statefiles.REGISTRY`, whose door (:func:`core.storage.statefiles.write`) writes them.
STATE_FILES: frozenset[str] = project_paths()


class WriteRequest(Record):
    """One write as the screen sees it, after the lock and the read."""

    __slots__ = _fields = ("path", "op", "text", "writer", "source", "current")
    path: str  # project-relative POSIX path of the target document
    op: Op
    text: str  # append: the new entry's text; replace: the whole new content
    writer: Writer
    source: str  # "append", "save", "merge", "restore", "mirror-import", "prune-apply", "extraction", ...
    current: str | None  # the document's text as read under the lock (None when absent)

    def __init__(self, path: str, op: Op, text: str, writer: Writer, source: str, current: str | None) -> None:
        self._set(path=path, op=op, text=text, writer=writer, source=source, current=current)


class Flag(Record):
    """One finding of the screen: the rule, its kind, and where in the request's text (1-based line, span)."""

    __slots__ = _fields = ("rule", "kind", "line", "span", "message")
    rule: str
    kind: FlagKind
    line: int
    span: tuple[int, int]
    message: str

    def __init__(self, rule: str, kind: FlagKind, line: int, span: tuple[int, int], message: str) -> None:
        self._set(rule=rule, kind=kind, line=line, span=span, message=message)

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "kind": self.kind, "line": self.line, "span": list(self.span),
                "message": self.message}


class ScreenVerdict(Record):
    """What the screen decided: ``write`` (with flags as warnings), ``hold`` (inbox id), ``refuse`` or ``skip``."""

    __slots__ = _fields = ("action", "flags", "inbox_id", "reason")
    action: Action
    flags: tuple[Flag, ...]
    inbox_id: str | None
    reason: str | None

    def __init__(self, action: Action, flags: tuple[Flag, ...] = (), inbox_id: str | None = None,
                 reason: str | None = None) -> None:
        self._set(action=action, flags=flags, inbox_id=inbox_id, reason=reason)


Screen = Callable[[WriteRequest], ScreenVerdict]

_WRITE = ScreenVerdict("write")


def PASS_ALL(request: WriteRequest) -> ScreenVerdict:  # noqa: N802 - the contract's name
    """The default screen: every write passes."""
    return _WRITE


class WriteRefused(MemoryBackendError):
    """A write the pipeline or its screen refused: nothing changed. ``status`` is ``refused``."""

    status = "refused"

    def __init__(self, message: str, backend_id: str = "", flags: tuple[Flag, ...] = ()) -> None:
        super().__init__(message, "INVALID_CONFIG", backend_id)
        self.flags = flags


class Outcome(Record):
    """What :func:`run` did."""

    __slots__ = _fields = ("status", "path", "changed", "before", "added", "after", "data", "flags", "inbox_id",
                           "reason", "warnings")
    _hidden = ("data",)
    status: Status
    path: str
    changed: bool
    before: str | None  # the document as read under the lock
    added: str | None  # append: the bytes appended (as text)
    after: str | None  # append: the document with them, when already at hand (else ``before + added``)
    data: bytes  # replace: the document's new bytes
    flags: tuple[Flag, ...]
    inbox_id: str | None
    reason: str | None
    warnings: tuple[str, ...]

    def __init__(self, status: Status, path: str, changed: bool = False, before: str | None = None,
                 added: str | None = None, after: str | None = None, data: bytes = b"",
                 flags: tuple[Flag, ...] = (), inbox_id: str | None = None, reason: str | None = None,
                 warnings: tuple[str, ...] = ()) -> None:
        self._set(status=status, path=path, changed=changed, before=before, added=added, after=after, data=data,
                  flags=flags, inbox_id=inbox_id, reason=reason, warnings=warnings)

    def flags_json(self) -> list[dict[str, Any]]:
        return [f.to_json() for f in self.flags]


def writer_for(source: str, author: str | None) -> Writer:
    """The writer a caller that names none means, from its source (``http-*``, ``mcp-*``, ``cli-*``…)."""
    head = source.split("-", 1)[0]
    if head == "http":
        return Writer("token", author)
    if head == "mcp":
        return Writer("mcp", author)
    if head == "cli":
        return Writer("cli", author)
    if source in {"rotate", "create", "move", "mirror-import", "schedule", "audit", "proposal"}:
        return Writer("memdesk", author)
    return Writer("operator", author)


# -- stages -----------------------------------------------------------------------------------------
def is_document(layout: Layout, rel: object) -> bool:
    """Whether ``rel`` (from anywhere: a person, a client, a row, a notification) names a memory document."""
    return isinstance(rel, str) and 0 < len(rel) <= 1024 and "\x00" not in rel and layout.is_document(rel)


def check_document(layout: Layout, rel: object, backend_id: str = "file", *, state: bool = False) -> str:
    """Stage "what" on a layout: ``rel`` when it is a memory document (or, with ``state``, a named state file).

    Refused (:class:`WriteRefused`, one line naming the path) otherwise.
    """
    if is_document(layout, rel) or (state and rel in STATE_FILES):
        return rel  # type: ignore[return-value]
    raise WriteRefused(
        f"{_shown(rel)} is not a memory document of this project (by its layout's rules) nor one of memdesk's state "
        "files; memdesk writes nothing else, so nothing was written", backend_id)


def is_memory_path(rel: object) -> bool:
    """Whether ``rel`` is a memory document of either layout (for data shared between hosts whose layouts differ)."""
    from core.documents.layout import ARCHIVE, LAYERED_DIR, SEED_INSIGHTS, SEED_MEMORY, Layout

    if not isinstance(rel, str) or not 0 < len(rel) <= 1024 or "\x00" in rel:
        return False
    return rel in {SEED_MEMORY, SEED_INSIGHTS, ARCHIVE, f"{LAYERED_DIR}/memory-insights.md"} or \
        Layout.is_layered_memory(rel)


def check_memory_path(rel: object, backend_id: str = "file") -> str:
    """Stage "what" for a row or a notification of a shared database: a memory document of either layout.

    Refused (:class:`WriteRefused`, one line naming the path) otherwise: ``.env``, ``src/evil.py``,
    ``.fusion/config.json`` or memdesk's own state are never read, imported, mirrored or written.
    """
    if is_memory_path(rel):
        return rel  # type: ignore[return-value]
    raise WriteRefused(f"{_shown(rel)} is not a memory document (by either layout's rules); memdesk reads and "
                       "writes nothing else there, so nothing was written", backend_id)


def _shown(rel: object) -> str:
    shown = rel if isinstance(rel, str) and rel.isprintable() else repr(rel)
    return shown if len(shown) <= 200 else shown[:200] + "..."


def check_what(project: Project, rel: str, *, state: bool = False) -> None:
    """Stage "what": refuse (``WriteRefused``) a path that is not a memory document of the project.

    ``state=True`` (memdesk's own writers only) also admits the named :data:`STATE_FILES`; a path
    from a person, a client, a row or a notification never names one.
    """
    check_document(project.layout, rel, project.backend.id, state=state)


def check_where(project: Project, rel: str) -> Path:
    """Stage "where": inside the project, no link out, a regular file with one link (or absent); the real target."""
    from core.storage import docio, fileio

    try:
        return fileio.check_writable(project.root, rel, project.backend.id)
    except NotADirectoryError as exc:  # a file stands where a folder belongs
        raise MemoryBackendError(docio.not_a_folder(project.root / rel, rel) + "; nothing was written",
                                 "WRITE_FAILED", project.backend.id, exc) from exc
    except (RuntimeError, OSError) as exc:  # a symlink loop
        raise MemoryBackendError(f"{rel} cannot be resolved ({exc}); replace it with a regular file; nothing "
                                 "was written", "INVALID_CONFIG", project.backend.id, exc) from exc


def _plain_file(backend: Any, rel: str) -> bool:
    """Whether ``rel`` is a plain file the backend writes with the default file layer (no hook of its own)."""
    check = getattr(backend, "writes_plain_file", None)
    return bool(check(rel)) if callable(check) else False


def _note_written(project: Project, rel: str, text: str) -> None:
    """Stage "record", for a later open: what the document now holds (core.storage.noticed; never fails a write)."""
    try:
        from core.storage.noticed import note_written

        note_written(project, rel, text)
    except Exception as exc:
        log.warning("what memdesk wrote to %s was not noted: %s", rel, exc)


def _record_appended(project: Project, rel: str, event: str, author: str | None, source: str,
                     text: str | None) -> None:
    """Stage "record" of an append: its event and the note, one history commit (never fails a write)."""
    try:
        from core.storage.noticed import record_appended

        record_appended(project, rel, event, author=author, source=source, text=text)
    except Exception as exc:  # who wrote what is a record; the entry itself is safe on disk
        log.warning("append to %s not recorded in history: %s", rel, exc)


def _screen(project: Project, request: WriteRequest) -> ScreenVerdict:
    screen = getattr(project, "screen", None) or PASS_ALL
    try:
        verdict = screen(request)
        if not isinstance(verdict, ScreenVerdict):
            raise TypeError(f"the screen returned {type(verdict).__name__}, not a ScreenVerdict")
        return verdict
    except Exception as exc:
        log.warning("the write screen failed on %s: %s", request.path, exc)
        if request.writer.agent:  # fail closed for agents and other programs
            return ScreenVerdict("refuse", reason=f"the write screen failed ({exc}); the write was refused")
        return ScreenVerdict("write", reason=f"the write screen failed ({exc}); written unscreened")


def _unwritten(verdict: ScreenVerdict, request: WriteRequest, backend_id: str) -> Outcome | None:
    """The outcome of a verdict that writes nothing (``None`` for ``write``); raises on ``refuse``."""
    if verdict.action == "write":
        return None
    if verdict.action == "refuse":
        raise WriteRefused(f"{request.path}: {verdict.reason or 'refused by the write screen'}; nothing was written",
                           backend_id, verdict.flags)
    if verdict.action == "hold":
        return Outcome("held", request.path, before=request.current, flags=verdict.flags,
                       inbox_id=verdict.inbox_id, reason=verdict.reason)
    return Outcome("skipped_duplicate", request.path, before=request.current, flags=verdict.flags,
                   reason=verdict.reason)


def _warning(verdict: ScreenVerdict) -> tuple[str, ...]:
    return (verdict.reason,) if verdict.action == "write" and verdict.reason else ()


# -- the two operations -----------------------------------------------------------------------------
def replace(project: Project, rel: str, content: str, *, writer: Writer, source: str,
            expected_hash: str | None = None, author: str | None = None, data: bytes | None = None) -> Outcome:
    """Replace ``rel`` with ``content`` through every stage; ``CONFLICT`` when ``expected_hash`` is stale.

    ``data``: ``content`` as UTF-8 when the caller has it (a MiB is encoded once a save, not three times)."""
    from core.storage import docio, fileio

    backend = project.backend
    check_what(project, rel)
    target = check_where(project, rel)
    data = content.encode("utf-8") if data is None else data
    if not (project.root / rel).exists():  # a refusal creates nothing, not even the lock
        project._check_creatable(rel, None)
    plain = _plain_file(backend, rel)
    if plain:
        backend.require_writable()
    with docio.document_lock(project.root, rel, backend.id):
        # Read once, under the lock: a plain file straight from the target resolved above.
        raw = fileio.read_bytes(target, backend.id) if plain else backend.read_document_bytes(rel)
        if expected_hash is not None and fileio.sha256_hex(raw or b"") != expected_hash:
            raise MemoryBackendError(f"{rel} changed on disk since it was loaded; reload or merge before saving",
                                     "CONFLICT", backend.id)
        if raw == data:
            return Outcome("written", rel, False, before=content, data=data)
        current = None if raw is None else fileio.decode_utf8(raw, rel, backend.id)
        project._check_creatable(rel, current)
        request = WriteRequest(rel, "replace", content, writer, source, current)
        verdict = _screen(project, request)
        skipped = _unwritten(verdict, request, backend.id)
        if skipped is not None:
            return skipped
        who = author if author is not None else writer.name
        if plain:  # resolved, checked, locked and read once: the file layer writes what was read
            from core.storage import saving

            noted = bool(content) and bool(raw) and not project.backend_history  # raw: a version is kept
            saving.replace_text(project.root, rel, content, source=source, backend_id=backend.id, author=who,
                                held=(target, raw), note_seen=noted, data=data)  # noted in the commit keeping the old
        else:
            noted = False
            backend.write_document(rel, content, expected_hash=expected_hash, source=source, author=who)
    if not noted:
        _note_written(project, rel, content)
    else:
        from core.storage.noticed import remember_written

        remember_written(project.root, rel, content)
    return Outcome("written", rel, True, before=current, data=data, flags=verdict.flags, warnings=_warning(verdict))


def append(project: Project, rel: str, entry: str, build: Callable[[str], str | None], *, writer: Writer,
           source: str, author: str | None = None, event: str | None = None) -> Outcome:
    """Append to ``rel`` through every stage: ``build(current)`` gives the bytes to add (``None``: a duplicate).

    ``entry`` is the entry's text as the screen sees it. The bytes go on with ``O_APPEND`` for a
    plain file (writers that do not take memdesk's lock are never overwritten). ``event``: the text to
    record as the append's event in history (with ``author`` and ``source``), in the same commit as the
    note of what the document now holds.
    """
    from core.storage import docio, plain_append

    backend = project.backend
    check_what(project, rel)
    target = check_where(project, rel)
    verdicts: list[ScreenVerdict] = []
    befores: list[str] = []

    def screened(current: str) -> str | None:
        befores.append(current)
        extra = build(current)
        if not extra:
            return None
        request = WriteRequest(rel, "append", entry, writer, source, current)
        verdict = _screen(project, request)
        verdicts.append(verdict)
        if verdict.action != "write":
            return None
        return extra

    with docio.document_lock(project.root, rel, backend.id):
        # A plain file: on the target resolved above, one open and one read (often from memory), O(entry).
        fast = plain_append.append_for(backend, rel, target, screened)
        added: str | None = fast if fast is None or isinstance(fast, str) else backend.append_document(
            rel, screened, author=author if author is not None else writer.name, source=source)
        # The text the fast path kept is the document as written: one MiB's copy, not a second one below.
        after = (plain_append.kept_text(target, fast, len(befores[-1]) + len(fast))
                 if isinstance(fast, str) and fast and befores else None)
    before = befores[-1] if befores else ""
    verdict = verdicts[-1] if verdicts else _WRITE
    if not added:
        if not verdicts:
            return Outcome("skipped_duplicate", rel, before=before)
        request = WriteRequest(rel, "append", entry, writer, source, before)
        return _unwritten(verdict, request, backend.id) or Outcome("skipped_duplicate", rel, before=before)
    small = len(before) + len(added) <= NOTE_APPENDS_UP_TO  # daily notes and the like; a MiB's appends stay O(entry)
    if event is not None:
        _record_appended(project, rel, event, author, source, (after if after is not None else before + added)
                         if small else None)
    elif small:
        _note_written(project, rel, after if after is not None else before + added)
    return Outcome("written", rel, True, before=before, added=added, after=after, flags=verdict.flags,
                   warnings=_warning(verdict))


def remove(project: Project, rel: str, expected: str, *, writer: Writer, source: str,
           author: str | None = None) -> Outcome:
    """Remove the file ``rel`` through every stage (migrate's legacy ``.fusion/memory.md``): what, where, lock,
    read once (it must still hold ``expected``, else ``CONFLICT`` and nothing changes), screen (as a replace
    by nothing), record (its text kept in history with ``source``), then the name removed."""
    from core.storage import docio, fileio
    from core.storage.history import versions as history

    backend = project.backend
    check_what(project, rel)
    target = check_where(project, rel)
    with docio.document_lock(project.root, rel, backend.id):
        raw = fileio.read_bytes(target, backend.id)
        current = None if raw is None else fileio.decode_utf8(raw, rel, backend.id)
        if current is None:
            return Outcome("written", rel, False)
        if current != expected:
            raise MemoryBackendError(f"{rel} changed since it was read; nothing was removed", "CONFLICT", backend.id)
        request = WriteRequest(rel, "replace", "", writer, source, current)
        verdict = _screen(project, request)
        skipped = _unwritten(verdict, request, backend.id)
        if skipped is not None:
            return skipped
        history.record_version(project.root, rel, current, source, author=author if author is not None
                               else writer.name)
        if fileio.read_bytes(target, backend.id) != raw:  # an agent's ``>>`` (no lock) while history recorded it
            raise MemoryBackendError(f"{rel} changed while it was being removed; nothing was removed", "CONFLICT",
                                     backend.id)
        fileio.remove_file(fileio.resolve_in_root(project.root, rel))  # the name: a link's target is never removed
    return Outcome("written", rel, True, before=current, flags=verdict.flags, warnings=_warning(verdict))
