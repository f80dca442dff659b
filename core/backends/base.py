"""The memory backend contract: the abstract backend, capabilities, search types and negotiation."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from core.documents.layout import SEED_MEMORY, Layout
from core.errors import MemoryBackendError
from core.storage.fileio import content_hash

if TYPE_CHECKING:
    from pydantic import BaseModel

    from core.backends.info import BackendInfo
    from core.search.types import MemorySearchOptions, MemorySearchResult

#: Names of the contract kept in light modules of their own and re-exported here on first use: the
#: search types (a keyword search needs them, not pydantic) and the picker's BackendInfo (an append
#: needs neither, and each dataclass costs a short command a share of its start).
_LAZY = {"MemorySearchOptions": "core.search.types", "MemorySearchResult": "core.search.types",
         "SearchMode": "core.search.types", "BackendInfo": "core.backends.info"}

MemoryCapability = Literal["read", "write", "search", "insights", "transactions"]
CAPABILITIES: tuple[str, ...] = ("read", "write", "search", "insights", "transactions")

# pydantic is imported when a settings model is first needed, not with this module: importing it
# costs more than a whole ``memdesk append`` on the file backend, whose settings have no fields.
_backend_settings: type | None = None


def _base_settings_model() -> type[BaseModel]:
    """:class:`BackendSettings`, defined (and pydantic imported) on first use."""
    global _backend_settings
    if _backend_settings is None:
        from pydantic import BaseModel, ConfigDict

        class BackendSettings(BaseModel):
            """Base of every backend's settings model; the picker generates its form from the JSON schema."""

            model_config = ConfigDict(extra="ignore", populate_by_name=True)

        BackendSettings.__module__ = __name__
        _backend_settings = BackendSettings
    return _backend_settings


def __getattr__(name: str) -> Any:
    if name == "BackendSettings":
        return _base_settings_model()
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _DefaultSettingsModel:
    """``MemoryBackend.settings_model`` until a subclass sets its own: :class:`BackendSettings`, made on first use."""

    def __get__(self, obj: object, owner: type | None = None) -> type[BaseModel]:
        return _base_settings_model()


def _own_settings_model(cls: type) -> bool:
    """Whether ``cls`` (or a base below :class:`MemoryBackend`) sets a settings model of its own."""
    return any("settings_model" in vars(c) for c in cls.__mro__ if c is not MemoryBackend)


#: Text a backend takes in without memdesk writing it (an agent's ``>>`` to a mirror file, another host's
#: change) is shown to this screen once it is in: ``screen(root, path, text, before, origin)``. The firewall
#: installs it (:mod:`core.firewall.imports`); it reports, never stops the import (the text is already there).
ImportScreen = Callable[[Path, str, str, str | None, str], None]
_import_screen: list[ImportScreen] = []


def install_import_screen(screen: ImportScreen) -> None:
    """Install the screen of taken-in text (one per process; the last installed wins)."""
    _import_screen[:] = [screen]


def screen_import(root: Path | None, path: str, text: str, before: str | None, origin: str) -> None:
    """Show ``text`` (taken into ``path`` of the project at ``root``; ``before``: the text it was added to) to the
    installed screen; never raises (the import stands whatever the screen says)."""
    if not text or root is None or not _import_screen:
        return
    try:
        _import_screen[0](root, path, text, before, origin)
    except Exception as exc:  # a report, never a reason to lose or repeat the agent's text
        import logging

        logging.getLogger(__name__).warning("the firewall did not screen the text imported into %s: %s", path, exc)


class MemoryBackend(ABC):
    """A place where project memory lives. Construct cheaply; do real work in :meth:`initialize`."""

    id: ClassVar[str]
    name: ClassVar[str]
    version: ClassVar[str] = "1.0.0"
    description: ClassVar[str] = ""
    capabilities: ClassVar[frozenset[str]] = frozenset({"read", "write"})
    settings_model: ClassVar[type[BaseModel]] = _DefaultSettingsModel()  # type: ignore[assignment]
    #: Project-relative path of the file agents and the editor see for this backend (None: no file).
    #: :meth:`initialize` replaces the seed path by the layout's long-term file in a layered project.
    memory_path: str | None = ".fusion/memory.md"
    #: True when the backend's primary document is a plain file (appends go straight to it with
    #: ``O_APPEND``); False when the backend keeps it itself (appends re-read and replace it).
    file_canonical: ClassVar[bool] = False

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        self.config: dict[str, Any] = dict(config or {})
        self.root: Path | None = None
        self._settings: BaseModel | None = None
        self._initialized = False
        #: Set by :func:`resolve_memory_backend` when this backend replaced the configured one.
        self.fallback_reason: str | None = None

    @property
    def settings(self) -> BaseModel:
        """The validated settings (an empty :class:`BackendSettings`, made on first use, for a backend without any)."""
        if self._settings is None:
            self._settings = self.settings_model()
        return self._settings

    @settings.setter
    def settings(self, value: BaseModel) -> None:
        self._settings = value

    # -- lifecycle -------------------------------------------------------------------------------
    def initialize(self, config: Mapping[str, Any] | None, root: str | Path) -> None:
        """Validate ``config`` against :attr:`settings_model` and bind the backend to ``root``."""
        raw = {k: v for k, v in dict(config or {}).items() if k != "id"}
        if _own_settings_model(type(self)):
            self._validate_settings(raw)
        else:  # BackendSettings has no fields and ignores extra keys: nothing can fail, nothing to keep
            self._settings = None
        root_p = Path(root)
        if not root_p.is_dir():
            raise MemoryBackendError(f"project root {root_p} is not a folder", "BACKEND_UNAVAILABLE", self.id)
        self.root = root_p
        self.config = raw
        layout_path = Layout(root_p).memory_path
        #: The document served by :meth:`read`/:meth:`write`: the layout's long-term file.
        self.primary_path = layout_path
        if self.memory_path == SEED_MEMORY:
            self.memory_path = layout_path
        self.on_initialize()
        self._initialized = True

    def _validate_settings(self, raw: dict[str, Any]) -> None:
        from pydantic import ValidationError

        try:
            self.settings = self.settings_model.model_validate(raw)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err.get("loc", ())) or "config"
            raise MemoryBackendError(
                f'invalid setting "{where}" for backend "{self.id}": {err.get("msg")}',
                "INVALID_CONFIG",
                self.id,
                exc,
            ) from exc

    def on_initialize(self) -> None:
        """Hook for subclasses: open resources after settings are validated and root is set."""

    def has_capability(self, capability: str) -> bool:
        """Return whether this backend supports ``capability``."""
        return capability in self.capabilities

    @abstractmethod
    def read(self) -> str:
        """Return the memory content; ``""`` when there is none. Raises :class:`MemoryBackendError`."""

    @abstractmethod
    def write(self, content: str, *, expected_hash: str | None = None, source: str = "write") -> None:
        """Replace the memory content. ``expected_hash`` guards against lost updates (``CONFLICT``)."""

    # -- documents (design §3a) -----------------------------------------------------------------
    def is_primary(self, relpath: str) -> bool:
        """Whether ``relpath`` is the document this backend serves through :meth:`read`/:meth:`write`."""
        return relpath == getattr(self, "primary_path", self.memory_path)

    def read_document(self, relpath: str) -> str | None:
        """Return one document's text (``None`` when it does not exist).

        The primary document of a backend that keeps it itself comes from :meth:`read`; files
        (the project's other documents, and a file-canonical backend's own) are read from disk.
        """
        root = self.require_initialized()
        if self.is_primary(relpath) and not self.file_canonical:
            text = self.read()
            if not isinstance(text, str):
                raise MemoryBackendError(f'backend "{self.id}" returned {type(text).__name__}, not text',
                                         "READ_FAILED", self.id)
            return text
        from core.storage import docio  # late: docio sits above the backends' base

        return docio.read_document(root, relpath, self.id)

    def read_document_bytes(self, relpath: str) -> bytes | None:
        """One document's UTF-8 bytes before a replacement (``None`` when it does not exist).

        A document read from disk is read, not decoded: the replacement reads it again under the
        document's lock and checks it there, so a save decodes it once at most. What a backend keeps
        itself (or reads its own way) is its text, encoded.
        """
        if type(self).read_document is MemoryBackend.read_document and (
                self.file_canonical or not self.is_primary(relpath)):
            from core.storage import docio

            return docio.read_raw(self.require_initialized(), relpath, self.id)
        text = self.read_document(relpath)
        if text is not None and not isinstance(text, str):
            raise MemoryBackendError(f'backend "{self.id}" returned {type(text).__name__} for {relpath}',
                                     "READ_FAILED", self.id)
        return None if text is None else text.encode("utf-8", "surrogatepass")

    def writes_plain_file(self, relpath: str) -> bool:
        """Whether ``relpath`` is a plain file written by the default file layer, with no hook of this backend.

        The write pipeline (:mod:`core.storage.pipeline`) then resolves, checks, locks and reads it once and has
        the file layer replace what it read, instead of the backend doing it all again.
        """
        kind = type(self)
        if kind.write_document is not MemoryBackend.write_document or \
                kind.read_document is not MemoryBackend.read_document or \
                kind.read_document_bytes is not MemoryBackend.read_document_bytes:
            return False
        if self.is_primary(relpath):
            return bool(self.file_canonical) and bool(getattr(kind.write, "plain_file_write", False))
        return True

    def appends_plain_file(self, relpath: str) -> bool:
        """Whether :meth:`append_document` appends to ``relpath`` as a plain file with the default file layer
        (no hook of this backend), so the pipeline may do it on the target it resolved (:mod:`core.storage.plain_append`)."""
        if type(self).append_document is not MemoryBackend.append_document:
            return False
        return not (self.is_primary(relpath) and not self.file_canonical)

    def write_document(self, relpath: str, content: str, *, expected_hash: str | None = None,
                       source: str = "write", author: str | None = None) -> None:
        """Replace one document (history first). Refused with ``READ_ONLY`` without the write capability."""
        root = self.require_initialized()
        self.require_writable()
        if self.is_primary(relpath):
            call_write(self, content, expected_hash=expected_hash, source=source, author=author)
            return
        from core.storage import docio

        docio.replace_document(root, relpath, content, expected_hash=expected_hash, source=source,
                               author=author, backend_id=self.id)

    def append_document(self, relpath: str, build: Callable[[str], str | None], *,
                        author: str | None = None, source: str = "append") -> str | None:
        """Append to one document under its lock: ``build(current)`` gives the text to add (``None``: none).

        Returns what was appended. A plain file gets the bytes with ``O_APPEND`` (writers that do
        not take memdesk's lock are never overwritten); a document the backend keeps itself is
        re-read and replaced with an ``expected_hash`` guard.
        """
        root = self.require_initialized()
        self.require_writable()
        from core.storage import docio

        if self.is_primary(relpath) and not self.file_canonical:
            with docio.document_lock(root, relpath):
                current = self.read_document(relpath) or ""
                extra = build(current)
                if extra:
                    self.write_document(relpath, current + extra, expected_hash=content_hash(current),
                                        source=source, author=author)
                return extra
        extra = docio.append_document(root, relpath, build, backend_id=self.id)
        if extra:
            self.on_document_appended(relpath)
        return extra

    def on_document_appended(self, relpath: str) -> None:
        """Hook: a file document was appended to outside :meth:`write` (indexes may need a refresh)."""

    def require_writable(self) -> None:
        """Raise ``READ_ONLY`` unless this backend can write."""
        if not self.has_capability("write"):
            raise MemoryBackendError(
                f'The "{self.id}" backend cannot write memory; switch the backend to "file" to edit it.',
                "READ_ONLY", self.id)

    def search(self, query: str, options: MemorySearchOptions | None = None) -> list[MemorySearchResult]:
        """Search the memory; backends without the ``search`` capability raise ``CAPABILITY_UNSUPPORTED``."""
        require_capability(self, "search")
        raise NotImplementedError

    def flush(self) -> None:
        """Persist buffered writes (nothing to do for backends that write through)."""

    def shutdown(self) -> None:
        """Release resources; the backend must be initialized again before use."""
        self.flush()
        self._initialized = False

    # -- helpers ---------------------------------------------------------------------------------
    @property
    def initialized(self) -> bool:
        """Whether :meth:`initialize` succeeded and :meth:`shutdown` has not been called since."""
        return self._initialized

    def require_initialized(self) -> Path:
        """Return the project root, or raise ``NOT_INITIALIZED``."""
        if not self._initialized or self.root is None:
            raise MemoryBackendError(
                "Backend not initialized. Call initialize() first.", "NOT_INITIALIZED", self.id
            )
        return self.root

    def status_note(self) -> str | None:
        """A short note for the picker (for example "keyword-only"); ``None`` when nothing to say."""
        return None

    @classmethod
    def describe(cls) -> BackendInfo:
        """Return the picker's view of this backend class."""
        from core.backends.info import BackendInfo

        inst = cls()
        return BackendInfo(
            cls.id, cls.name, cls.version, cls.description, get_backend_capabilities(inst),
            cls.settings_model, inst.status_note(),
        )


def require_capability(backend: MemoryBackend, capability: str) -> None:
    """Raise ``CAPABILITY_UNSUPPORTED`` unless ``backend`` supports ``capability``."""
    if not backend.has_capability(capability):
        raise MemoryBackendError(
            f'Backend "{backend.id}" does not support required capability: {capability}',
            "CAPABILITY_UNSUPPORTED",
            backend.id,
        )


def get_backend_capabilities(backend: MemoryBackend) -> frozenset[str]:
    """Return the effective capability set of ``backend``, in :data:`CAPABILITIES` order semantics."""
    return frozenset(c for c in CAPABILITIES if backend.has_capability(c))


def _write_extras(backend_type: type[MemoryBackend]) -> frozenset[str]:
    """The optional keywords a backend's ``write`` accepts (the seed contract is ``write(content)``)."""
    cached = _EXTRAS.get(backend_type)
    if cached is None:
        import inspect  # here: it costs a `memdesk append` process, which never calls this, ~5 ms (ast, dis)

        params: Mapping[str, inspect.Parameter]
        try:
            params = inspect.signature(backend_type.write).parameters
        except (TypeError, ValueError):
            params = {}
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            cached = frozenset({"expected_hash", "source", "author"})
        else:
            cached = frozenset(k for k in ("expected_hash", "source", "author") if k in params)
        _EXTRAS[backend_type] = cached
    return cached


_EXTRAS: dict[type, frozenset[str]] = {}


def call_write(backend: MemoryBackend, content: str, *, expected_hash: str | None = None,
               source: str = "write", author: str | None = None) -> None:
    """Call ``backend.write`` with only the extras it declares; a stale base on a backend that cannot
    check it is checked here first."""
    extras = _write_extras(type(backend))
    kwargs: dict[str, Any] = {}
    if "source" in extras:
        kwargs["source"] = source
    if "author" in extras and author is not None:
        kwargs["author"] = author
    if expected_hash is not None:
        if "expected_hash" in extras:
            kwargs["expected_hash"] = expected_hash
        elif content_hash(backend.read() or "") != expected_hash:
            raise MemoryBackendError("the memory changed since it was loaded; reload or merge before saving",
                                     "CONFLICT", backend.id)
    backend.write(content, **kwargs)
