"""``core.settings``: the seed's name (design §3), a thin wrapper over :mod:`core.settings.model`.

The project's settings (``ProjectSettings``, ``load_settings``, ``update_settings``) live in
:mod:`core.settings.model`, beside their stores, the user's config, connections and bindings.
Its names load on first use, so importing a module of this package (``core.settings.store``, say)
does not load the model.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.settings.model import (
        ALIAS_TO_FIELD as ALIAS_TO_FIELD,
    )
    from core.settings.model import (
        CONFIG_PATH as CONFIG_PATH,
    )
    from core.settings.model import (
        DEFAULT_INSIGHT_SCHEDULE as DEFAULT_INSIGHT_SCHEDULE,
    )
    from core.settings.model import (
        DEFAULT_MIN_INTERVAL_MS as DEFAULT_MIN_INTERVAL_MS,
    )
    from core.settings.model import (
        FIELD_ALIASES as FIELD_ALIASES,
    )
    from core.settings.model import (
        FUSION_KEYS as FUSION_KEYS,
    )
    from core.settings.model import (
        LEGACY_BACKEND_KEY as LEGACY_BACKEND_KEY,
    )
    from core.settings.model import (
        MAX_HISTORY_MIN_VERSIONS as MAX_HISTORY_MIN_VERSIONS,
    )
    from core.settings.model import (
        MAX_HISTORY_RETENTION_DAYS as MAX_HISTORY_RETENTION_DAYS,
    )
    from core.settings.model import (
        OWN_KEYS as OWN_KEYS,
    )
    from core.settings.model import (
        ProjectSettings as ProjectSettings,
    )
    from core.settings.model import (
        SettingsRead as SettingsRead,
    )
    from core.settings.model import (
        coerce_settings as coerce_settings,
    )
    from core.settings.model import (
        load_settings as load_settings,
    )
    from core.settings.model import (
        raw_setting as raw_setting,
    )
    from core.settings.model import (
        read_settings as read_settings,
    )
    from core.settings.model import (
        update_settings as update_settings,
    )
    from core.settings.model import (
        update_settings_read as update_settings_read,
    )
    from core.settings.model import (
        validate_cron as validate_cron,
    )

__all__ = [
    "ALIAS_TO_FIELD",
    "CONFIG_PATH",
    "DEFAULT_INSIGHT_SCHEDULE",
    "DEFAULT_MIN_INTERVAL_MS",
    "FIELD_ALIASES",
    "FUSION_KEYS",
    "LEGACY_BACKEND_KEY",
    "MAX_HISTORY_MIN_VERSIONS",
    "MAX_HISTORY_RETENTION_DAYS",
    "OWN_KEYS",
    "ProjectSettings",
    "SettingsRead",
    "coerce_settings",
    "load_settings",
    "raw_setting",
    "read_settings",
    "update_settings",
    "update_settings_read",
    "validate_cron",
]


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    value = getattr(importlib.import_module("core.settings.model"), name)
    globals()[name] = value
    return value
