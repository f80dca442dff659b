"""Where a project's settings live, detected and always named (design §3b; issue 18).

:func:`detect_store` picks the store; :class:`StoreInfo` names it for every surface; memdesk's own
settings are kept apart in :mod:`core.settings.store.own`. Names are imported on first use, so a command
that only needs :mod:`core.settings.store.connections` pays for nothing else.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SettingsStore", "StoreInfo", "StoreKind", "StoreReadOnlyError", "apply_patch", "detect_store"]


def __getattr__(name: str) -> Any:
    if name == "detect_store":
        from core.settings.store.detect import detect_store

        return detect_store
    if name in __all__:
        from core.settings.store import base

        return getattr(base, name)
    raise AttributeError(name)
