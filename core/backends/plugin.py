"""Third-party backends as their authors write them: plain classes, seed-style ``write(self, content)``.

A plugin is untrusted code memdesk calls; this module is what keeps the rest of memdesk from having
to care how it was written: :class:`PluginBackend` wraps a class that does not derive from
:class:`~core.backends.base.MemoryBackend` (its ``write`` gets only the keywords it declares, through
:func:`~core.backends.base.call_write`), and :func:`safe_text` prints any exception, even one whose
``str()`` raises.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from core.backends.base import CAPABILITIES, MemoryBackend, call_write
from core.errors import MemoryBackendError

if TYPE_CHECKING:
    from core.backends.info import BackendInfo
    from core.search.types import MemorySearchOptions

__all__ = ["PluginBackend", "make_factory", "safe_text"]

def safe_text(exc: BaseException) -> str:
    """``"Type: message"`` for any exception, on one line; never raises."""
    try:
        message = str(exc)
    except BaseException:  # noqa: BLE001 (a plugin's exception may fail to print)
        message = "(its message cannot be shown)"
    if not isinstance(message, str):
        message = "(its message cannot be shown)"
    name = type(exc).__name__
    text = f"{name}: {message}" if message and not isinstance(exc, MemoryBackendError) else (message or name)
    return " ".join(text.split())


def _construct(cls: Callable[..., Any], config: Mapping[str, Any]) -> Any:
    """Call ``cls(config)`` or ``cls()``, whichever its signature takes."""
    import inspect  # here: only a plugin needs it, and it costs a `memdesk append` process ~5 ms (ast, dis)

    try:
        params = [p for p in inspect.signature(cls).parameters.values()
                  if p.kind not in (inspect.Parameter.VAR_KEYWORD,)]
    except (TypeError, ValueError):
        return cls(config)
    takes_arg = any(p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                               inspect.Parameter.VAR_POSITIONAL) for p in params)
    return cls(config) if takes_arg else cls()


class PluginBackend(MemoryBackend):
    """A :class:`MemoryBackend` around an object that only has the seed's methods."""

    id = "plugin"
    name = "Plugin"

    def __init__(self, inner: Any, config: Mapping[str, Any] | None = None) -> None:
        super().__init__(config)
        self.inner = inner
        # Instance attributes shadow the class ones, so the rest of memdesk sees the plugin's identity.
        self.id = str(getattr(inner, "id", "plugin"))  # type: ignore[misc]
        self.name = str(getattr(inner, "name", self.id))  # type: ignore[misc]
        self.version = str(getattr(inner, "version", "0"))  # type: ignore[misc]
        self.description = str(getattr(inner, "description", ""))  # type: ignore[misc]
        self.memory_path = getattr(inner, "memory_path", None)  # type: ignore[misc]
        declared = getattr(inner, "capabilities", None)
        if callable(getattr(inner, "has_capability", None)):
            self.capabilities = frozenset(c for c in CAPABILITIES if inner.has_capability(c))  # type: ignore[misc]
        elif isinstance(declared, set | frozenset | list | tuple):
            self.capabilities = frozenset(str(c) for c in declared)  # type: ignore[misc]
        else:
            self.capabilities = frozenset({"read", "write"})  # type: ignore[misc]

    def on_initialize(self) -> None:
        """Hand the config and root to the plugin's own ``initialize``."""
        init = getattr(self.inner, "initialize", None)
        if callable(init):
            init(dict(self.config), self.root)

    def read(self) -> str:
        """The plugin's ``read()``."""
        self.require_initialized()
        return self.inner.read()

    def write(self, content: str, *, expected_hash: str | None = None, source: str = "write",
              author: str | None = None) -> None:
        """The plugin's ``write``, given only the keywords it declares."""
        self.require_initialized()
        call_write(self.inner, content, expected_hash=expected_hash, source=source, author=author)

    def search(self, query: str, options: MemorySearchOptions | None = None) -> list[Any]:
        """The plugin's ``search`` when it has the capability."""
        if not self.has_capability("search") or not callable(getattr(self.inner, "search", None)):
            return super().search(query, options)
        return self.inner.search(query, options)

    def flush(self) -> None:
        """The plugin's ``flush()``, when it has one."""
        if callable(getattr(self.inner, "flush", None)):
            self.inner.flush()

    def shutdown(self) -> None:
        """The plugin's ``shutdown()``, when it has one."""
        super().shutdown()
        if callable(getattr(self.inner, "shutdown", None)):
            self.inner.shutdown()


class _PluginFactory:
    """A registry factory for a plain plugin class: builds the class and wraps it."""

    def __init__(self, cls: Any) -> None:
        self.cls = cls
        self.id = str(cls.id)

    def __call__(self, config: Mapping[str, Any]) -> MemoryBackend:
        return PluginBackend(_construct(self.cls, config), config)

    def describe(self) -> BackendInfo:
        """The picker's view, without initializing the plugin."""
        from core.backends.base import BackendSettings  # here: it imports pydantic
        from core.backends.info import BackendInfo

        caps = PluginBackend(_construct(self.cls, {})).capabilities
        model = getattr(self.cls, "settings_model", BackendSettings)
        return BackendInfo(self.id, str(getattr(self.cls, "name", self.id)), str(getattr(self.cls, "version", "0")),
                           str(getattr(self.cls, "description", "")), frozenset(caps),
                           model if isinstance(model, type) else BackendSettings)


def make_factory(factory: Any) -> Callable[[Mapping[str, Any]], MemoryBackend]:
    """The registry's factory for ``factory``: a MemoryBackend class or callable as it is; a plain class
    with the seed's ``read``/``write`` wrapped in :class:`PluginBackend`."""
    if isinstance(factory, type) and issubclass(factory, MemoryBackend):
        return factory
    if isinstance(factory, type):
        missing = [m for m in ("read", "write") if not callable(getattr(factory, m, None))]
        if missing or not isinstance(getattr(factory, "id", None), str):
            what = ", ".join(missing + ([] if isinstance(getattr(factory, "id", None), str) else ["id"]))
            raise MemoryBackendError(f"{factory.__name__} is not a memory backend (it lacks {what})",
                                     "INVALID_CONFIG", str(getattr(factory, "id", "")))
        return _PluginFactory(factory)
    return factory

