"""Backend registry (built-ins plus the ``memdesk.backends`` entry-point group) and resolution."""

from __future__ import annotations

import builtins
import importlib
import importlib.util
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.backends.base import MemoryBackend
from core.backends.plugin import PluginBackend, make_factory, safe_text
from core.documents.layout import detect_layout
from core.errors import MemoryBackendError
from core.logs import get_logger

if TYPE_CHECKING:
    from core.backends.info import BackendInfo
    from core.settings.model import ProjectSettings

log = get_logger(__name__)

ENTRY_POINT_GROUP = "memdesk.backends"
FALLBACK_BACKEND_ID = "file"
#: What a layered project with no backend key uses (current Fusion's default).
LAYERED_DEFAULT_BACKEND_ID = "qmd"

#: A backend class, or any callable taking the config mapping and returning a backend.
MemoryBackendFactory = Callable[[Mapping[str, Any]], MemoryBackend]


class MemoryBackendRegistry:
    """Maps backend ids to factories; creates and initializes backends on demand."""

    def __init__(self) -> None:
        self._factories: dict[str, MemoryBackendFactory] = {}
        #: Registers the plugins when first needed: scanning the installed packages' entry points
        #: costs more than an append on a built-in backend, which never needs them.
        self._deferred: Callable[[MemoryBackendRegistry], object] | None = None
        self._builtin_ids: frozenset[str] = frozenset()

    def _load_deferred(self) -> None:
        loader, self._deferred = self._deferred, None
        if loader is not None:
            loader(self)

    def register(self, factory: MemoryBackendFactory | type, *, replace: bool = True) -> str:
        """Register ``factory`` under its backend's id and return the id.

        ``factory`` is a :class:`MemoryBackend` subclass, a callable returning one, or a plain class
        written to the seed's contract (``id``, ``read()``, ``write(content)``), which is wrapped.
        """
        factory = make_factory(factory)
        backend_id = getattr(factory, "id", None)
        if not isinstance(backend_id, str):
            try:
                backend_id = factory({}).id
            except Exception as exc:
                raise MemoryBackendError(f"cannot tell the id of backend factory {factory!r}: {safe_text(exc)}",
                                         "INVALID_CONFIG", "") from exc
            if not isinstance(backend_id, str):
                raise MemoryBackendError(f"backend factory {factory!r} made a backend without a text id",
                                         "INVALID_CONFIG", "")
        if not replace or backend_id not in self._builtin_ids:
            self._load_deferred()
        if not replace and backend_id in self._factories:
            raise MemoryBackendError(f'backend "{backend_id}" is already registered', "INVALID_CONFIG", backend_id)
        self._factories[backend_id] = factory
        return backend_id

    def unregister(self, backend_id: str) -> bool:
        """Remove a backend; True when it was registered."""
        self._load_deferred()
        return self._factories.pop(backend_id, None) is not None

    def has(self, backend_id: str) -> bool:
        """Return whether ``backend_id`` is registered."""
        if backend_id not in self._builtin_ids:
            self._load_deferred()
        return backend_id in self._factories

    def list(self) -> list[str]:
        """Return registered backend ids in registration order."""
        self._load_deferred()
        return list(self._factories)

    def info(self, backend_id: str) -> BackendInfo:
        """Return the picker's description of a backend (built without initializing it)."""
        factory = self._factory(backend_id)
        describe = getattr(factory, "describe", None)
        if callable(describe):
            return describe()
        return type(factory({})).describe()

    def infos(self) -> builtins.list[BackendInfo]:
        """Return :meth:`info` for every registered backend that can describe itself."""
        self._load_deferred()
        out = []
        for backend_id in self._factories:
            try:
                out.append(self.info(backend_id))
            except Exception as exc:  # a broken plugin must not hide the others
                log.warning("backend %s cannot describe itself: %s", backend_id, exc)
        return out

    def create(self, backend_id: str, config: Mapping[str, Any] | None, root: str | Path) -> MemoryBackend:
        """Create and initialize a backend. Raises :class:`MemoryBackendError`."""
        factory = self._factory(backend_id)
        cfg = {"id": backend_id, **dict(config or {})}
        try:
            backend = factory(cfg)
            if not isinstance(backend, MemoryBackend):
                backend = PluginBackend(backend, cfg)
            backend.initialize(cfg, root)
        except MemoryBackendError:
            raise
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 (a plugin's SystemExit must not end memdesk)
            raise MemoryBackendError(
                f'backend "{backend_id}" failed to initialize: {safe_text(exc)}', "BACKEND_UNAVAILABLE",
                backend_id, exc if isinstance(exc, Exception) else None,
            ) from exc
        return backend

    def _factory(self, backend_id: str) -> MemoryBackendFactory:
        if backend_id not in self._builtin_ids:
            self._load_deferred()
        try:
            return self._factories[backend_id]
        except KeyError:
            known = ", ".join(self._factories) or "none"
            raise MemoryBackendError(
                f'no memory backend "{backend_id}" is registered (registered: {known})', "NOT_FOUND", backend_id
            ) from None


def register_builtin_backends(registry: MemoryBackendRegistry) -> None:
    """Register memdesk's own backends."""
    from core.backends.file import FileMemoryBackend, QmdMemoryBackend, ReadOnlyMemoryBackend

    registry.register(FileMemoryBackend)
    registry.register(ReadOnlyMemoryBackend)
    registry.register(QmdMemoryBackend)
    for backend_id, module, name in _OPTIONAL_BUILTINS:
        if importlib.util.find_spec(module) is not None:
            registry.register(_LazyBackend(backend_id, module, name))


class _LazyBackend:
    """A built-in backend registered by id and imported when first created or described.

    ``memdesk show`` on the file backend then never imports the sqlite and search code.
    """

    def __init__(self, backend_id: str, module: str, name: str) -> None:
        self.id = backend_id
        self._module, self._name = module, name

    def cls(self) -> type[MemoryBackend]:
        """The backend class (imported now)."""
        return getattr(importlib.import_module(self._module), self._name)

    def __call__(self, config: Mapping[str, Any]) -> MemoryBackend:
        return self.cls()(config)

    def describe(self) -> BackendInfo:
        """The picker's description of the backend."""
        return self.cls().describe()


# Built-ins that live in their own module (added by later features); skipped when absent.
_OPTIONAL_BUILTINS: list[tuple[str, str, str]] = [
    ("sqlite", "core.backends.sqlite", "SqliteMemoryBackend"),
    ("hybrid", "core.backends.hybrid", "HybridMemoryBackend"),
    ("postgres", "core.backends.postgres", "PostgresMemoryBackend"),
]


def entry_points(*, group: str) -> Any:
    """The installed entry points of ``group`` (``importlib.metadata`` imported only when asked)."""
    from importlib.metadata import entry_points as installed

    return installed(group=group)


def load_entry_point_backends(registry: MemoryBackendRegistry) -> list[str]:
    """Register third-party backends from the ``memdesk.backends`` entry-point group.

    A plugin cannot replace a built-in backend of a registry made by :func:`default_registry`: those
    are created without scanning the plugins, so a replacement would apply only some of the time.
    """
    loaded = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            factory = ep.load()
            backend_id = getattr(factory, "id", None)
            if backend_id in registry._builtin_ids:
                log.warning("memory backend plugin %s (%s) is ignored: %r is a built-in backend", ep.name,
                            ep.value, backend_id)
                continue
            loaded.append(registry.register(factory))
        except Exception as exc:
            log.warning("cannot load memory backend plugin %s (%s): %s", ep.name, ep.value, exc)
    return loaded


def default_registry() -> MemoryBackendRegistry:
    """Return a registry with the built-in backends and every installed plugin."""
    registry = MemoryBackendRegistry()
    register_builtin_backends(registry)
    registry._builtin_ids = frozenset(registry._factories)
    registry._deferred = load_entry_point_backends
    return registry


def resolve_memory_backend(
    settings: ProjectSettings | Mapping[str, Any] | None,
    root: str | Path,
    registry: MemoryBackendRegistry | None = None,
) -> MemoryBackend:
    """Create the configured backend, or fall back to ``file`` keeping the reason on ``fallback_reason``."""
    registry = registry or default_registry()
    try:
        # Settings already read (a ProjectSettings, or the light settings of core.cli.light) are used
        # as they are: validating them again would import pydantic for nothing.
        if settings is None or isinstance(settings, Mapping):
            from core.settings.model import coerce_settings

            s: Any = coerce_settings(settings)
        else:
            s = settings
        configured, config = s.memory_backend, s.memory_backend_config
        if "memory_backend" not in s.model_fields_set and detect_layout(root) == "layered":
            configured = LAYERED_DEFAULT_BACKEND_ID  # current Fusion's default; the key is never rewritten
    except Exception as exc:
        configured, config = "(invalid settings)", {}
        reason = f"settings are invalid: {exc}"
    else:
        unbound = _unconfirmed_binding(root, configured, config)
        if unbound is not None:  # a project's settings never choose the team memory it joins by themselves
            return _read_only(registry, root, unbound)
        try:
            return registry.create(configured, config, root)
        except MemoryBackendError as exc:
            reason = safe_text(exc)
    log.warning('memory backend "%s" unavailable, falling back to "file": %s', configured, reason)
    if not registry.has(FALLBACK_BACKEND_ID):
        from core.backends.file import FileMemoryBackend

        registry.register(FileMemoryBackend)
    backend = registry.create(FALLBACK_BACKEND_ID, {}, root)
    backend.fallback_reason = f'Configured backend "{configured}" is unavailable: {reason}'
    return backend


def _unconfirmed_binding(root: str | Path, backend_id: str, config: Any) -> str | None:
    """Why a team backend's binding (connection + project key) is not usable yet (see :mod:`core.settings.bindings`)."""
    if not isinstance(config, Mapping) or not config.get("connection"):
        return None  # not a team backend: nothing to confirm (and core.settings.bindings is not even imported)
    from core.settings.bindings import binding_reason

    return binding_reason(root, backend_id, config)


def _read_only(registry: MemoryBackendRegistry, root: str | Path, reason: str) -> MemoryBackend:
    """The project's files, read-only, with ``reason`` as the fallback reason the banners show."""
    from core.backends.file import ReadOnlyMemoryBackend

    log.warning("memory opened read-only: %s", reason)
    backend = ReadOnlyMemoryBackend()
    backend.initialize({}, root)
    backend.fallback_reason = reason
    return backend
