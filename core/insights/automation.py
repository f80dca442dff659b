"""The scheduled insight-extraction automation: its definition, its stored record, and its next runs.

``create_insight_extraction_automation`` is Fusion's ``createInsightExtractionAutomation`` (same
``ScheduledTaskCreateInput`` shape and prompt, pointed at ``.fusion/memory.md``). memdesk has no
automation store of its own, so ``sync_insight_extraction_automation`` keeps the schedule records in
``.fusion/memdesk/automations.json`` (a JSON list), written through ``core.storage.fileio``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from croniter import croniter

from core.errors import MemoryBackendError, SettingsError
from core.insights._text import iso_timestamp, to_utc
from core.insights.extraction import PRUNE_GUIDELINES
from core.insights.model import DEFAULT_INSIGHT_SCHEDULE, INSIGHT_EXTRACTION_SCHEDULE_NAME
from core.settings.model import ProjectSettings, raw_setting, validate_cron
from core.storage import fileio, statefiles

__all__ = [
    "AUTOMATIONS_PATH",
    "INSIGHT_EXTRACTION_STEP_ID",
    "create_insight_extraction_automation",
    "next_run_times",
    "read_automations",
    "sync_insight_extraction_automation",
]

AUTOMATIONS_PATH = f"{fileio.MEMDESK_DIR}/automations.json"
INSIGHT_EXTRACTION_STEP_ID = "memory-insight-extraction"
_STEP_TIMEOUT_MS = 120_000

_AUTOMATION_PROMPT = (
    """You are the Memory Insight Extraction and Pruning agent. Your job is to analyze the project's working memory, extract long-term insights, and prune working memory to only durable items.

## Instructions

1. Read the working memory file at `.fusion/memory.md` using your file reading tools
2. Read the existing insights file at `.fusion/memory-insights.md` (it may not exist yet)
3. Analyze the working memory content and identify:
   a) **New insights** that should be preserved in long-term memory
   b) **Durable content** that should remain in working memory
   c) **Transient content** that can be pruned (one-time observations, task-specific notes, outdated entries)

## Insight Extraction Guidelines

Focus on extracting:
- **Patterns**: Recurring themes or approaches that work well
- **Principles**: Key decisions and their rationale
- **Conventions**: Project-specific standards or practices
- **Pitfalls**: Known issues to avoid
- **Context**: Important background information

Do NOT duplicate insights already in the existing insights file.

## Working Memory Pruning Guidelines

"""
    + PRUNE_GUIDELINES
    + """
## Output Format

Return ONLY a JSON object with this exact structure (no markdown fences, no extra text):

```json
{
  "summary": "Brief summary of what was extracted and pruned",
  "insights": [
    {
      "category": "pattern|principle|convention|pitfall|context",
      "content": "The insight text",
      "source": "Optional reference to what triggered this insight"
    }
  ],
  "prunedMemory": "## Architecture\\n\\nDurable architecture notes...\\n\\n## Conventions\\n\\nDurable conventions...\\n\\n## Pitfalls\\n\\nDurable pitfalls..."
}
```

**Important:** The `prunedMemory` field is OPTIONAL. Only include it if:
1. There is substantial transient content to prune (more than ~20% can be removed)
2. You can preserve at least 2 of the 3 core sections (Architecture, Conventions, Pitfalls)

If no new insights are found AND nothing substantial can be pruned, return:
```json
{"summary": "No new insights found, no pruning needed", "insights": [], "prunedMemory": null}
```

If the working memory file does not exist or is empty, return:
```json
{"summary": "No working memory to analyze", "insights": []}
```"""
)


def _schedule_of(settings: ProjectSettings | Mapping[str, Any] | None) -> str:
    # The raw value, so that an invalid schedule reaches our own error message.
    value = raw_setting(settings, "insightExtractionSchedule", "insight_extraction_schedule")
    return DEFAULT_INSIGHT_SCHEDULE if value is None else value


def create_insight_extraction_automation(
    settings: ProjectSettings | Mapping[str, Any] | None,
    model_provider: str | None = None,
    model_id: str | None = None,
) -> dict[str, Any]:
    """Return Fusion's schedule definition (camelCase) running the extraction-and-prune prompt."""
    step: dict[str, Any] = {
        "id": INSIGHT_EXTRACTION_STEP_ID,
        "type": "ai-prompt",
        "name": "Extract Memory Insights and Prune",
        "prompt": _AUTOMATION_PROMPT,
    }
    if model_provider and model_id:
        step["modelProvider"] = model_provider
        step["modelId"] = model_id
    step["timeoutMs"] = _STEP_TIMEOUT_MS
    return {
        "name": INSIGHT_EXTRACTION_SCHEDULE_NAME,
        "description": "Extracts insights from working memory and prunes transient content",
        "scheduleType": "custom",
        "cronExpression": _schedule_of(settings),
        "command": "",
        "enabled": True,
        "steps": [step],
    }


def _load(root: Path | str) -> tuple[list[dict[str, Any]], str]:
    try:
        text = fileio.read_text(fileio.resolve_in_root(root, AUTOMATIONS_PATH)) or ""
    except MemoryBackendError as exc:
        raise SettingsError(f"cannot read {AUTOMATIONS_PATH}: {exc}") from exc
    if not text.strip():
        return [], text
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsError(
            f"{AUTOMATIONS_PATH} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "fix or remove it — memdesk will not overwrite it"
        ) from exc
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise SettingsError(f"{AUTOMATIONS_PATH} must hold a JSON list of schedule objects")
    return data, text


def read_automations(root: Path | str) -> list[dict[str, Any]]:
    """Return the stored schedules (``[]`` when none); a malformed file raises :class:`SettingsError`."""
    return _load(root)[0]


def _save(root: Path | str, schedules: list[dict[str, Any]], loaded_text: str) -> None:
    text = json.dumps(schedules, indent=2, ensure_ascii=False) + "\n"
    statefiles.write("automations", root, text, expected_hash=fileio.content_hash(loaded_text), source="automation")


def sync_insight_extraction_automation(
    root: Path | str, settings: ProjectSettings | Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """Create, update or delete the stored extraction schedule to match ``settings``.

    Returns the stored schedule, or ``None`` when extraction is disabled (any stored one is
    deleted). An invalid cron raises :class:`SettingsError` ("Invalid insight extraction schedule: …")
    and nothing is written. Read, changed and written under the file's lock: every scheduled run and the app's
    settings sync it, so two at once would refuse each other (``CONFLICT``).
    """
    with statefiles.lock("automations", root):
        return _sync(root, settings)


def _sync(root: Path | str, settings: ProjectSettings | Mapping[str, Any] | None) -> dict[str, Any] | None:
    schedules, loaded_text = _load(root)
    existing = next((s for s in schedules if s.get("name") == INSIGHT_EXTRACTION_SCHEDULE_NAME), None)
    if not raw_setting(settings, "insightExtractionEnabled", "insight_extraction_enabled"):
        if existing is not None:
            _save(root, [s for s in schedules if s is not existing], loaded_text)
        return None

    schedule = _schedule_of(settings)
    try:
        validate_cron(schedule)
    except (TypeError, ValueError, AttributeError) as exc:
        raise SettingsError(
            f"Invalid insight extraction schedule: {schedule}", field="insightExtractionSchedule", reason=str(exc)
        ) from exc
    definition = create_insight_extraction_automation(settings)
    now = iso_timestamp()
    if existing is not None:
        existing.update(
            scheduleType="custom",
            cronExpression=schedule,
            command=definition["command"],
            steps=definition["steps"],
            enabled=True,
            updatedAt=now,
        )
        record = existing
    else:
        record = {"id": uuid.uuid4().hex, **definition, "createdAt": now, "updatedAt": now}
        schedules.append(record)
    _save(root, schedules, loaded_text)
    return record


def next_run_times(cron: str, n: int = 3, start: datetime | None = None) -> list[datetime]:
    """Return the next ``n`` run times (UTC) of a 5-field cron expression after ``start`` (default now)."""
    validate_cron(cron)
    base = to_utc(start) if start is not None else datetime.now(UTC)
    it = croniter(cron, base)
    return [it.get_next(datetime) for _ in range(n)]
