"""Pluggable memory backends: the contract, the registry and the built-in ``file``/``readonly`` backends."""

from core.backends.base import (
    CAPABILITIES,
    MemoryBackend,
    MemoryCapability,
    get_backend_capabilities,
    require_capability,
)
from core.backends.file import FileMemoryBackend, ReadOnlyMemoryBackend
from core.backends.registry import (
    ENTRY_POINT_GROUP,
    MemoryBackendFactory,
    MemoryBackendRegistry,
    default_registry,
    resolve_memory_backend,
)
from core.errors import MemoryBackendError


def __getattr__(name: str) -> object:
    # BackendSettings is a pydantic model, made on first use; the search types and BackendInfo live in
    # light modules of their own, imported on first use (see core.backends.base).
    if name in ("BackendSettings", "BackendInfo", "MemorySearchOptions", "MemorySearchResult"):
        from core.backends import base

        return getattr(base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "CAPABILITIES",
    "ENTRY_POINT_GROUP",
    "BackendInfo",
    "BackendSettings",
    "FileMemoryBackend",
    "MemoryBackend",
    "MemoryBackendError",
    "MemoryBackendFactory",
    "MemoryBackendRegistry",
    "MemoryCapability",
    "MemorySearchOptions",
    "MemorySearchResult",
    "ReadOnlyMemoryBackend",
    "default_registry",
    "get_backend_capabilities",
    "require_capability",
    "resolve_memory_backend",
]
