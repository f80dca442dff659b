"""Every memory setting of current Fusion, as a pydantic model: keys, defaults, ranges, enums, help, groups.

Read from Fusion's code (Runfusion/Fusion, ``packages/core/src/config/settings-schema.ts``
``DEFAULT_PROJECT_SETTINGS`` / ``DEFAULT_GLOBAL_SETTINGS`` at 00982d1c, the doc comments of
``ProjectSettings`` in ``packages/core/src/types.ts``, the dashboard's backup section and the checks
of ``PUT /api/settings`` in ``packages/dashboard/src/routes/register-settings-memory-routes.ts``):

| key | default | group |
|---|---|---|
| ``memoryEnabled`` | true | Memory |
| ``memoryBackendType`` | unset (Fusion: ``qmd``; seed-era: ``file``) | Memory |
| ``insightExtractionEnabled`` / ``…Schedule`` / ``…MinIntervalMs`` | false / ``0 2 * * *`` / 86400000 | Insights |
| ``memoryDreamsEnabled`` / ``memoryDreamsSchedule`` | false / ``0 4 * * *`` | Dreams |
| ``memoryAutoSummarizeEnabled`` / ``…ThresholdChars`` / ``…Schedule`` | false / 50000 / ``0 3 * * *`` | Auto-summarize |
| ``memoryBackupEnabled`` / ``…Schedule`` / ``…Retention`` / ``…Dir`` / ``…Scope`` | false / ``0 3 * * *`` / 14 / ``.fusion/backups/memory`` / ``all`` | Backups |
| ``agentMemoryInclusionMode`` (Fusion keeps it per user) | ``full`` | Agents |

Fusion checks a backup retention with ``validateBackupRetention`` (1–100) and a backup folder with
``validateBackupDir`` (relative, no ``..``); schedules are 5-field cron expressions.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, field_validator

DEFAULT_INSIGHT_SCHEDULE = "0 2 * * *"
DEFAULT_MIN_INTERVAL_MS = 86_400_000
MAX_MIN_INTERVAL_MS = 3650 * 86_400_000  # ten years
MAX_SUMMARIZE_THRESHOLD_CHARS = 100_000_000

CRON_KEYS = ("insightExtractionSchedule", "memoryDreamsSchedule", "memoryAutoSummarizeSchedule",
             "memoryBackupSchedule")


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


def _group(name: str, **extra: Any) -> dict[str, Any]:
    return {"group": name, **extra}


class FusionMemorySettings(BaseModel):
    """The memory settings Fusion defines and reads (they live in Fusion's store)."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore", validate_assignment=True)

    memory_enabled: StrictBool = Field(
        True, alias="memoryEnabled", title="Memory enabled",
        description="When on, agents consult and update the project memory. When off, no memory "
        "instructions reach the agents; the files stay readable.", json_schema_extra=_group("Memory"))
    memory_backend_type: StrictStr | None = Field(
        None, alias="memoryBackendType", title="Fusion's memory backend",
        description="The backend Fusion itself uses (qmd, file, readonly or a registered one); empty: "
        "Fusion's default (qmd in current Fusion, file in seed-era Fusion).", json_schema_extra=_group("Memory"))

    insight_extraction_enabled: StrictBool = Field(
        False, alias="insightExtractionEnabled", title="Insight extraction",
        description="When on, an AI periodically distils insights (patterns, principles, pitfalls) from "
        "the working memory.", json_schema_extra=_group("Insights"))
    insight_extraction_schedule: StrictStr = Field(
        DEFAULT_INSIGHT_SCHEDULE, alias="insightExtractionSchedule", title="Extraction schedule",
        description="When extraction runs, as a 5-field cron expression (minute hour day month weekday).",
        json_schema_extra=_group("Insights", cron=True))
    insight_extraction_min_interval_ms: StrictInt = Field(
        DEFAULT_MIN_INTERVAL_MS, alias="insightExtractionMinIntervalMs", ge=0, le=MAX_MIN_INTERVAL_MS,
        title="Minimum interval", description="Least time between two extractions (pick the unit beside the "
        "number; the setting is kept in ms); a run also needs the memory to have grown enough.", json_schema_extra=_group("Insights", unit="ms"))

    memory_dreams_enabled: StrictBool = Field(
        False, alias="memoryDreamsEnabled", title="Dreams",
        description="When on, daily notes are periodically synthesized into DREAMS.md and durable lessons "
        "promoted into MEMORY.md.", json_schema_extra=_group("Dreams"))
    memory_dreams_schedule: StrictStr = Field(
        "0 4 * * *", alias="memoryDreamsSchedule", title="Dreams schedule",
        description="When dream processing runs (cron); used while dreams are on.",
        json_schema_extra=_group("Dreams", cron=True))

    memory_auto_summarize_enabled: StrictBool = Field(
        False, alias="memoryAutoSummarizeEnabled", title="Auto-summarize",
        description="When on, an AI compresses the working memory once it grows past the threshold.",
        json_schema_extra=_group("Auto-summarize"))
    memory_auto_summarize_threshold_chars: StrictInt = Field(
        50_000, alias="memoryAutoSummarizeThresholdChars", ge=1, le=MAX_SUMMARIZE_THRESHOLD_CHARS,
        title="Summarize above", description="Size of the working memory, in characters, that triggers "
        "a summary (used while auto-summarize is on).", json_schema_extra=_group("Auto-summarize", unit="chars"))
    memory_auto_summarize_schedule: StrictStr = Field(
        "0 3 * * *", alias="memoryAutoSummarizeSchedule", title="Auto-summarize schedule",
        description="When the size check runs (cron); by default an hour after insight extraction.",
        json_schema_extra=_group("Auto-summarize", cron=True))

    memory_backup_enabled: StrictBool = Field(
        False, alias="memoryBackupEnabled", title="Memory backups",
        description="When on, Fusion takes scheduled snapshots of the memory files.",
        json_schema_extra=_group("Backups"))
    memory_backup_schedule: StrictStr = Field(
        "0 3 * * *", alias="memoryBackupSchedule", title="Backup schedule",
        description="When a memory backup is taken (cron).", json_schema_extra=_group("Backups", cron=True))
    memory_backup_retention: StrictInt = Field(
        14, alias="memoryBackupRetention", ge=1, le=100, title="Backups kept",
        description="Number of memory backups kept; the oldest go first.",
        json_schema_extra=_group("Backups", unit="backups"))
    memory_backup_dir: StrictStr = Field(
        ".fusion/backups/memory", alias="memoryBackupDir", min_length=1, title="Backup folder",
        description="Folder for memory backups, relative to the project root.",
        json_schema_extra=_group("Backups"))
    memory_backup_scope: Literal["all", "project", "agents"] = Field(
        "all", alias="memoryBackupScope", title="Backup scope",
        description="What a backup holds: all (project and agents' memory), project memory only, or the "
        "agents' memory only.", json_schema_extra=_group("Backups"))

    agent_memory_inclusion_mode: Literal["full", "index", "off"] = Field(
        "full", alias="agentMemoryInclusionMode", title="Agent memory in prompts",
        description="full: each agent's curated memory goes into its prompts; index: a compact index, "
        "fetched on demand with the memory tools; off: no agent-memory section. Fusion keeps this per user.",
        json_schema_extra=_group("Agents"))

    @field_validator("insight_extraction_schedule", "memory_dreams_schedule", "memory_auto_summarize_schedule",
                     "memory_backup_schedule")
    @classmethod
    def _check_cron(cls, value: str) -> str:
        return validate_cron(value)

    @field_validator("memory_backup_dir")
    @classmethod
    def _check_backup_dir(cls, value: str) -> str:
        parts = value.replace("\\", "/").split("/")
        if value.startswith(("/", "\\")) or (len(value) > 1 and value[1] == ":") or ".." in parts:
            raise ValueError("the backup folder must be a path relative to the project root, without '..'")
        return value
