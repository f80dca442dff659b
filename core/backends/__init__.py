"""Pluggable memory backends: the contract, the registry and the built-in ``file``/``readonly`` backends."""

from core.backends.base import (
    CAPABILITIES,
    BackendInfo,
    BackendSettings,
    MemoryBackend,
    MemoryCapability,
    MemorySearchOptions,
    MemorySearchResult,
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
