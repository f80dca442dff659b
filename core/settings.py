"""Project settings: one pydantic model over ``.fusion/config.json`` (flat or Fusion's nested shape).

Unknown keys in ``config.json`` are preserved untouched; the file keeps the shape it was found in.
Fusion shipped the backend key as ``memoryBackendType``: it is read when ``memoryBackend`` is
absent, and both are written.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
)

from core import fileio, saving
from core.errors import MemoryBackendError, SettingsError

log = logging.getLogger(__name__)

CONFIG_PATH = ".fusion/config.json"
DEFAULT_INSIGHT_SCHEDULE = "0 2 * * *"
DEFAULT_MIN_INTERVAL_MS = 86_400_000
# Bounds of the numeric settings: what the code can compute with (dates, SQLite integers), with room
# to spare; a bigger value is refused with SettingsError naming the bound.
MAX_MIN_INTERVAL_MS = 3650 * 86_400_000  # ten years
MAX_HISTORY_RETENTION_DAYS = 36_500  # a hundred years
MAX_HISTORY_MIN_VERSIONS = 10_000
LEGACY_BACKEND_KEY = "memoryBackendType"


def validate_cron(expr: str) -> str:
    """Return ``expr`` if it is a valid 5-field cron expression, else raise ``ValueError``."""
    fields = expr.split()
    if len(fields) != 5:
        raise ValueError(f"a cron schedule has 5 fields (minute hour day month weekday); {expr!r} has {len(fields)}")
    if expr == DEFAULT_INSIGHT_SCHEDULE:
        return expr
    from croniter import croniter  # here: importing it costs more than a read-only command's own work

    if not croniter.is_valid(expr):
        raise ValueError(f"{expr!r} is not a valid cron schedule")
    return expr


class ProjectSettings(BaseModel):
    """The memory settings of one project, as stored in ``.fusion/config.json``."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore", validate_assignment=True)

    memory_enabled: StrictBool = Field(
        True,
        alias="memoryEnabled",
        title="Memory enabled",
        description="When on, agents consult and update the project memory. When off, no memory "
        "instructions reach the agents; the file stays readable.",
    )
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
    insight_extraction_enabled: StrictBool = Field(
        False,
        alias="insightExtractionEnabled",
        title="Insight extraction",
        description="When on, an AI periodically distils insights from the working memory.",
    )
    insight_extraction_schedule: StrictStr = Field(
        DEFAULT_INSIGHT_SCHEDULE,
        alias="insightExtractionSchedule",
        title="Extraction schedule",
        description="When extraction runs, as a 5-field cron expression (minute hour day month weekday).",
    )
    insight_extraction_min_interval_ms: StrictInt = Field(
        DEFAULT_MIN_INTERVAL_MS,
        alias="insightExtractionMinIntervalMs",
        ge=0,
        le=MAX_MIN_INTERVAL_MS,
        title="Minimum interval",
        description="Least time between two extractions, in milliseconds.",
        json_schema_extra={"unit": "ms"},
    )

    history_retention_days: StrictInt = Field(
        90,
        alias="historyRetentionDays",
        ge=0,
        le=MAX_HISTORY_RETENTION_DAYS,
        title="Keep history for",
        description="Days to keep previous versions of memory files (0: no age limit). The newest "
        "versions below the minimum are kept whatever their age.",
        json_schema_extra={"unit": "days"},
    )
    history_min_versions: StrictInt = Field(
        20,
        alias="historyMinVersions",
        ge=1,
        le=MAX_HISTORY_MIN_VERSIONS,
        title="Always keep",
        description="Number of most recent versions of each file kept regardless of age.",
        json_schema_extra={"unit": "versions"},
    )

    # Load budget (docs/budget.md): which consumers read which document; a memdesk key Fusion ignores.
    memdesk_budget_consumers: dict[StrictStr, list[StrictStr]] = Field(
        default_factory=dict,
        alias="memdeskBudgetConsumers",
        title="Who reads each document",
        description="Per document path, the ids of the agents whose load limits the budget meter checks "
        "(a document not listed uses the defaults: Fusion for Fusion's files).",
    )

    @field_validator("insight_extraction_schedule")
    @classmethod
    def _check_cron(cls, value: str) -> str:
        return validate_cron(value)

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


class ConfigFile:
    """The raw ``config.json`` of a project: its settings dict and the shape to write back."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.path = self.root / CONFIG_PATH
        self.document: dict[str, Any] = {}
        self.nested = False
        self.text: str = ""
        self._load()

    def _load(self) -> None:
        try:
            text = fileio.read_in_root(self.root, CONFIG_PATH)
        except MemoryBackendError as exc:
            raise SettingsError(f"cannot read {CONFIG_PATH}: {exc}", field=None) from exc
        if text is None or not text.strip():
            self.text = text or ""
            return
        self.text = text
        try:
            doc = json.loads(text)
        except RecursionError as exc:
            raise SettingsError(f"{CONFIG_PATH} is nested too deeply to read; fix or remove it — memdesk will "
                                "not overwrite it") from exc
        except json.JSONDecodeError as exc:
            raise SettingsError(
                f"{CONFIG_PATH} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                "fix or remove it — memdesk will not overwrite it",
            ) from exc
        if not isinstance(doc, dict):
            raise SettingsError(f"{CONFIG_PATH} must hold a JSON object, not {type(doc).__name__}")
        self.document = doc
        if isinstance(doc.get("settings"), dict) and ("nextId" in doc or len(doc) <= 2):
            self.nested = True
        elif "settings" in doc and "nextId" in doc:
            raise SettingsError(f'{CONFIG_PATH}: "settings" must be a JSON object')

    @property
    def settings(self) -> dict[str, Any]:
        """The settings mapping (the nested ``settings`` object, or the whole flat document)."""
        if self.nested:
            return self.document["settings"]
        return self.document

    def save(self, settings: dict[str, Any], source: str = "settings") -> None:
        """Write ``settings`` back in the shape found, atomically, keeping every other key."""
        doc = dict(self.document)
        if self.nested:
            doc["settings"] = settings
        else:
            doc = settings
        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        try:
            saving.replace_text(self.root, CONFIG_PATH, text, expected_hash=fileio.content_hash(self.text),
                                source=source)
        except MemoryBackendError as exc:
            raise SettingsError(f"cannot save {CONFIG_PATH}: {exc}") from exc


def load_settings(root: Path | str) -> ProjectSettings:
    """Load the project's settings (defaults for missing keys). Raises :class:`SettingsError`.

    An invalid value already in the file (say, out of its bounds) is named with the way to set it back.
    """
    try:
        return coerce_settings(ConfigFile(root).settings)
    except SettingsError as exc:
        if exc.field is None:
            raise
        raise SettingsError(f"{CONFIG_PATH}: {exc}; set it back with `memdesk settings set {exc.field} VALUE` "
                            f"or `memdesk settings unset {exc.field}`", field=exc.field, reason=exc.reason) from exc


def _normalise_patch(patch: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in patch.items():
        if key in ALIAS_TO_FIELD:
            out[key] = value
        elif key in FIELD_ALIASES:
            out[FIELD_ALIASES[key]] = value
        elif key == LEGACY_BACKEND_KEY:
            out["memoryBackend"] = value
        else:
            known = ", ".join(sorted(ALIAS_TO_FIELD))
            raise SettingsError(f"unknown setting {key!r}; known settings: {known}", field=key,
                                reason="unknown setting")
    return out


def update_settings(root: Path | str, patch: Mapping[str, Any]) -> ProjectSettings:
    """Apply ``patch`` (camelCase or snake_case keys; ``None`` deletes a key) and save.

    Invalid values raise :class:`SettingsError` naming the field, and the file is left as it was.
    """
    cfg = ConfigFile(root)
    raw = dict(cfg.settings)
    for key, value in _normalise_patch(patch).items():
        if value is None:
            raw.pop(key, None)
            if key == "memoryBackend":
                raw.pop(LEGACY_BACKEND_KEY, None)
            continue
        try:
            ProjectSettings.model_validate({key: value})
        except ValidationError as exc:
            raise _error_to_settings_error(exc) from exc
        raw[key] = value
        if key == "memoryBackend":
            raw[LEGACY_BACKEND_KEY] = value
    merged = coerce_settings(raw)
    cfg.save(raw)
    return merged
