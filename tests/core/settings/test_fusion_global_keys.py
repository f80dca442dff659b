"""Fusion's global settings taken in a change made through ``PUT /api/settings/global`` only
(core/settings/fusion_global_keys.py), and sent to a running Fusion's own global route (design §3b).

Keys and types read from Runfusion/Fusion ``packages/core/src/config/settings-schema.ts`` at 00982d1c
(``DEFAULT_GLOBAL_SETTINGS``), plus ``autoReloadOnVersionChange`` (the ``GlobalSettings`` interface of
``packages/core/src/types.ts``; the switch of ``app/hooks/useAppSettings.ts`` at a1cac3a6).
"""

from __future__ import annotations

import pytest

from core.errors import SettingsError
from core.settings import read_settings, update_settings
from core.settings.fusion_global_keys import GLOBAL_KEY_TYPES, global_scope, in_global_scope
from core.settings.fusion_keys import GLOBAL_ONLY_KEYS, PROJECT_KEY_TYPES
from tests.core.settings.test_settings_fusion_api import connected, current, fusion_server  # noqa: F401


def test_every_global_key_of_fusion_has_a_type_and_none_is_a_project_key():
    assert set(GLOBAL_KEY_TYPES) == GLOBAL_ONLY_KEYS | {"autoReloadOnVersionChange"}
    assert not set(GLOBAL_KEY_TYPES) & set(PROJECT_KEY_TYPES)
    assert GLOBAL_KEY_TYPES["autoReloadOnVersionChange"] == "boolean"
    assert GLOBAL_KEY_TYPES["themeMode"] == "string" and GLOBAL_KEY_TYPES["daemonPort"] == "number"
    assert GLOBAL_KEY_TYPES["planningGlobalFallbackThinkingLevel"] == "string"
    assert GLOBAL_KEY_TYPES["remoteAccess"] == "object" and GLOBAL_KEY_TYPES["ntfyEvents"] == "array"


def test_a_global_key_goes_to_fusions_global_route_only_in_the_global_scope(connected):  # noqa: F811
    root, fusion = connected
    fusion.state.requests.clear()
    with pytest.raises(SettingsError) as info:  # a project change (PUT /api/settings, memdesk settings set)
        update_settings(root, {"autoReloadOnVersionChange": False})
    assert info.value.field == "autoReloadOnVersionChange" and "/api/settings/global" in str(info.value)
    assert not in_global_scope()
    with global_scope():
        with pytest.raises(SettingsError) as info:
            update_settings(root, {"autoReloadOnVersionChange": "off"})
        assert "is a boolean" in str(info.value)
        assert not [r for r in fusion.state.requests if r[0] == "PUT"]
        update_settings(root, {"autoReloadOnVersionChange": False, "themeMode": "dark"})
    assert not in_global_scope()
    assert [(p, b) for m, p, b in fusion.state.requests if m == "PUT"] == [
        ("/api/settings/global", {"autoReloadOnVersionChange": False, "themeMode": "dark"})]
    assert read_settings(root).fusion_raw["themeMode"] == "dark"
