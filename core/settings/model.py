"""Project settings: one pydantic model over two places (design §3b).

Fusion's memory settings (:class:`core.settings.schema.FusionMemorySettings`) live where Fusion reads
them, in the project's settings store (:mod:`core.settings.store`: Fusion's API, ``.fusion/fusion.db``,
or ``.fusion/config.json`` when there is no Fusion store); memdesk's own (its backend and config, history
retention, the budget's readers) in ``.fusion/memdesk/settings.json``. Unknown keys are kept as they are:
a change sends only the changed keys, ``None`` deleting one. Fusion's ``memoryBackendType`` is read as
memdesk's backend when memdesk has none of its own.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import (
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
)

from core.errors import SettingsError
from core.settings.fusion_keys import check_fusion_value
from core.settings.schema import (  # noqa: F401 (the seed contract's names, re-exported)
    DEFAULT_INSIGHT_SCHEDULE,
    DEFAULT_MIN_INTERVAL_MS,
    MAX_MIN_INTERVAL_MS,
    FusionMemorySettings,
    validate_cron,
)
from core.settings.store import SettingsStore, StoreInfo, detect_store
from core.settings.store.config_json import ConfigFile  # noqa: F401 (moved there; kept importable here)
from core.settings.store.own import OWN_PATH, legacy_own_values, move_legacy_keys, patch_own, read_own

log = logging.getLogger(__name__)

CONFIG_PATH = ".fusion/config.json"
# Bounds of the numeric settings: what the code can compute with (dates, SQLite integers), with room
# to spare; a bigger value is refused with SettingsError naming the bound.
MAX_HISTORY_RETENTION_DAYS = 36_500  # a hundred years
MAX_HISTORY_MIN_VERSIONS = 10_000
LEGACY_BACKEND_KEY = "memoryBackendType"


class ProjectSettings(FusionMemorySettings):
    """The memory settings of one project: Fusion's (in its store) and memdesk's own (in memdesk's state)."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore", validate_assignment=True)

    memory_backend: StrictStr = Field(
        "file",
        alias="memoryBackend",
        min_length=1,
        title="Memory backend",
        description="Where memory lives and how it is searched (the id of a registered backend).",
    )
    memory_backend_config: dict[str, Any] = Field(
        default_factory=dict,
        alias="memoryBackendConfig",
        title="Backend settings",
        description="Settings of the chosen backend; their form comes from the backend's own model.",
    )
    history_retention_days: StrictInt = Field(
        90,
        alias="historyRetentionDays",
        ge=0,
        le=MAX_HISTORY_RETENTION_DAYS,
        title="Keep history for",
        description="Days to keep previous versions of memory files (0: no age limit). The newest "
        "versions below the minimum are kept whatever their age.",
        json_schema_extra={"unit": "days", "group": "History (memdesk's own)"},
    )
    history_min_versions: StrictInt = Field(
        20,
        alias="historyMinVersions",
        ge=1,
        le=MAX_HISTORY_MIN_VERSIONS,
        title="Always keep",
        description="Number of most recent versions of each file kept regardless of age.",
        json_schema_extra={"unit": "versions", "group": "History (memdesk's own)"},
    )

    # Load budget (docs/budget.md): which consumers read which document; a memdesk key Fusion ignores.
    memdesk_budget_consumers: dict[StrictStr, list[StrictStr]] = Field(
        default_factory=dict,
        alias="memdeskBudgetConsumers",
        title="Who reads each document",
        description="Per document path, the ids of the agents whose load limits the budget meter checks "
        "(a document not listed uses the defaults: Fusion for Fusion's files).",
    )

    @field_validator("memory_backend")
    @classmethod
    def _check_backend(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the backend id must not be blank")
        return value


FIELD_ALIASES: dict[str, str] = {
    name: (field.alias or name) for name, field in ProjectSettings.model_fields.items()
}
ALIAS_TO_FIELD: dict[str, str] = {alias: name for name, alias in FIELD_ALIASES.items()}


def _error_to_settings_error(exc: ValidationError) -> SettingsError:
    err = exc.errors()[0]
    loc = err.get("loc") or ()
    key = str(loc[0]) if loc else "settings"
    key = FIELD_ALIASES.get(key, key)
    reason = str(err.get("msg", "invalid value"))
    if reason.startswith("Value error, "):
        reason = reason[len("Value error, "):]
    value = err.get("input")
    shown = json.dumps(value) if isinstance(value, str | int | float | bool | type(None)) else type(value).__name__
    return SettingsError(f"invalid setting {key} = {shown}: {reason}", field=key, reason=reason)


def raw_setting(settings: ProjectSettings | Mapping[str, Any] | None, alias: str, name: str) -> Any:
    """One setting as given, unvalidated: the field ``name`` of a model, the value under ``alias`` (else
    ``name``) of a mapping, ``None`` without settings."""
    if settings is None:
        return None
    if isinstance(settings, ProjectSettings):
        return getattr(settings, name)
    return settings.get(alias, settings.get(name))


def coerce_settings(settings: ProjectSettings | Mapping[str, Any] | None) -> ProjectSettings:
    """Return a :class:`ProjectSettings` from a model, a (partial) camelCase/snake_case mapping or ``None``."""
    if settings is None:
        return ProjectSettings()
    if isinstance(settings, ProjectSettings):
        return settings
    data = dict(settings)
    if "memoryBackend" not in data and "memory_backend" not in data and data.get(LEGACY_BACKEND_KEY):
        data["memoryBackend"] = data[LEGACY_BACKEND_KEY]
    data = {k: v for k, v in data.items() if v is not None}
    try:
        return ProjectSettings.model_validate(data)
    except ValidationError as exc:
        raise _error_to_settings_error(exc) from exc




# -- where each key lives ---------------------------------------------------------------------------
#: memdesk's own settings: in ``.fusion/memdesk/settings.json``, never in Fusion's store.
OWN_KEYS: frozenset[str] = frozenset(
    {"memoryBackend", "memoryBackendConfig", "historyRetentionDays", "historyMinVersions", "memdeskBudgetConsumers"})
#: Fusion's settings memdesk knows: in the project's settings store.
FUSION_KEYS: frozenset[str] = frozenset(ALIAS_TO_FIELD) - OWN_KEYS


@dataclass(frozen=True)
class SettingsRead:
    """The settings of a project, the store they came from, and the raw objects they were made of."""

    settings: ProjectSettings
    store: StoreInfo
    fusion_raw: dict[str, Any]  # the store's whole object, unknown keys included
    own_raw: dict[str, Any]


def _combined(store_kind: str, fusion_raw: Mapping[str, Any], own: Mapping[str, Any],
              legacy: Mapping[str, Any]) -> dict[str, Any]:
    data = {k: fusion_raw[k] for k in FUSION_KEYS if k in fusion_raw}
    if store_kind == "config-json":  # keys an earlier memdesk left there count until they are moved
        data.update({k: fusion_raw[k] for k in OWN_KEYS if k in fusion_raw})
    data.update(legacy)
    data.update({k: own[k] for k in OWN_KEYS if k in own})
    return data


def read_settings(root: Path | str, store: SettingsStore | None = None) -> SettingsRead:
    """Read the project's settings from its store and memdesk's own file. Raises :class:`SettingsError`.

    An invalid value already stored (say, out of its bounds) is named with where it is and how to set it back.
    """
    store = store or detect_store(root)
    fusion_raw = store.read()
    own = read_own(root)
    legacy = legacy_own_values(root, OWN_KEYS) if store.info.kind == "fusion-db" else {}
    try:
        settings = coerce_settings(_combined(store.info.kind, fusion_raw, own, legacy))
    except SettingsError as exc:
        if exc.field is None:
            raise
        where = OWN_PATH if exc.field in own else store.info.path or store.info.plain_name
        raise SettingsError(f"{where}: {exc}; set it back with `memdesk settings set {exc.field} VALUE` "
                            f"or `memdesk settings unset {exc.field}`", field=exc.field, reason=exc.reason) from exc
    return SettingsRead(settings, store.info, fusion_raw, own)


def load_settings(root: Path | str) -> ProjectSettings:
    """Load the project's settings (defaults for missing keys). Raises :class:`SettingsError`."""
    return read_settings(root).settings


def _normalise_patch(patch: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in patch.items():
        if key in ALIAS_TO_FIELD:
            out[key] = value
        elif key in FIELD_ALIASES:
            out[FIELD_ALIASES[key]] = value
        else:  # one of Fusion's other project settings, checked by its JSON type (core.settings.fusion_keys)
            check_fusion_value(key, value)
            out[key] = value
    return out


def update_settings(root: Path | str, patch: Mapping[str, Any], *, base: Mapping[str, Any] | None = None,
                    store: SettingsStore | None = None) -> ProjectSettings:
    """Apply ``patch`` (camelCase or snake_case keys; ``None`` deletes a key) where each key lives.

    Fusion's keys go to the project's settings store, memdesk's own to ``.fusion/memdesk/settings.json``.
    Invalid values raise :class:`SettingsError` naming the field, and nothing is changed. ``base``: the
    values (camelCase) the change was made against; a key that moved since to another value is a
    conflict (:class:`SettingsError` at that field), keys that did not are applied to the fresh values.
    """
    return update_settings_read(root, patch, base=base, store=store).settings


def update_settings_read(root: Path | str, patch: Mapping[str, Any], *, base: Mapping[str, Any] | None = None,
                         store: SettingsStore | None = None) -> SettingsRead:
    """:func:`update_settings`, returning the fresh :class:`SettingsRead`."""
    changes = _normalise_patch(patch)
    for key, value in changes.items():
        if value is None:
            continue
        try:
            ProjectSettings.model_validate({key: value})
        except ValidationError as exc:
            raise _error_to_settings_error(exc) from exc
    store = store or detect_store(root)
    fusion_raw = store.read()
    own = read_own(root)
    legacy = legacy_own_values(root, OWN_KEYS) if store.info.kind == "fusion-db" else {}
    combined = _combined(store.info.kind, fusion_raw, own, legacy)
    if "memoryBackend" not in combined and combined.get(LEGACY_BACKEND_KEY):
        combined["memoryBackend"] = combined[LEGACY_BACKEND_KEY]
    if base is not None:
        _check_stale({**ProjectSettings().model_dump(by_alias=True), **fusion_raw, **combined}, base, changes)
    fusion_patch = {k: v for k, v in changes.items() if k not in OWN_KEYS}  # modelled or checked by fusion_keys
    own_patch = {k: v for k, v in changes.items() if k in OWN_KEYS}
    merged = dict(combined)
    for key, value in changes.items():
        if value is None:
            merged.pop(key, None)
            if key == "memoryBackend" and fusion_raw.get(LEGACY_BACKEND_KEY):
                merged[key] = fusion_raw[LEGACY_BACKEND_KEY]
        else:
            merged[key] = value
    coerce_settings(merged)  # a combination the model refuses (a bad value left elsewhere) changes nothing
    if store.info.kind == "config-json":
        move_legacy_keys(root, OWN_KEYS)
    elif store.info.kind == "fusion-db" and legacy_own_values(root, OWN_KEYS):
        patch_own(root, {k: v for k, v in legacy.items() if k not in own})
        if not fusion_patch:
            store.refresh_copy()  # type: ignore[attr-defined]
    if fusion_patch:
        store.patch(fusion_patch)
    if own_patch:
        patch_own(root, own_patch)
    return read_settings(root, store)


def _check_stale(now: Mapping[str, Any], base: Mapping[str, Any], changes: Mapping[str, Any]) -> None:
    for key, value in changes.items():
        if key in base and now.get(key) != base[key] and now.get(key) != value:
            raise SettingsError(
                f"{key} was changed elsewhere to {json.dumps(now.get(key))} since this form was loaded "
                f"(it was {json.dumps(base[key])}); nothing was saved — review it and apply again",
                field=key, reason=f"changed elsewhere to {json.dumps(now.get(key))}")
