"""core.insights.automation: the extraction schedule's definition, its stored record, its next runs."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.errors import SettingsError
from core.insights import (
    AUTOMATIONS_PATH,
    INSIGHT_EXTRACTION_SCHEDULE_NAME,
    create_insight_extraction_automation,
    next_run_times,
    read_automations,
    sync_insight_extraction_automation,
)
from core.settings import ProjectSettings


def test_create_has_fusions_shape() -> None:
    automation = create_insight_extraction_automation(None)
    assert list(automation) == ["name", "description", "scheduleType", "cronExpression", "command", "enabled", "steps"]
    assert automation["name"] == INSIGHT_EXTRACTION_SCHEDULE_NAME == "Memory Insight Extraction"
    assert automation["description"] == "Extracts insights from working memory and prunes transient content"
    assert automation["scheduleType"] == "custom"
    assert automation["cronExpression"] == "0 2 * * *"
    assert automation["command"] == ""
    assert automation["enabled"] is True
    (step,) = automation["steps"]
    assert list(step) == ["id", "type", "name", "prompt", "timeoutMs"]
    assert step["id"] == "memory-insight-extraction"
    assert step["type"] == "ai-prompt"
    assert step["name"] == "Extract Memory Insights and Prune"
    assert step["timeoutMs"] == 120_000
    prompt = step["prompt"]
    assert prompt.startswith("You are the Memory Insight Extraction and Pruning agent.")
    assert "1. Read the working memory file at `.fusion/memory.md` using your file reading tools" in prompt
    assert "can replace `.fusion/memory.md`" in prompt
    assert ".fusion/memory/MEMORY.md" not in prompt
    assert '"prunedMemory": "## Architecture\\n\\nDurable architecture notes...' in prompt
    assert prompt.endswith('{"summary": "No working memory to analyze", "insights": []}\n```')


def test_create_uses_settings_and_model_only_when_both_given() -> None:
    automation = create_insight_extraction_automation({"insightExtractionSchedule": "*/5 * * * *"}, "anthropic", "m1")
    step = automation["steps"][0]
    assert automation["cronExpression"] == "*/5 * * * *"
    assert list(step) == ["id", "type", "name", "prompt", "modelProvider", "modelId", "timeoutMs"]
    assert (step["modelProvider"], step["modelId"]) == ("anthropic", "m1")
    only_provider = create_insight_extraction_automation(ProjectSettings(), "anthropic", None)
    assert "modelProvider" not in only_provider["steps"][0]


def test_sync_creates_updates_and_deletes(tmp_path: Path) -> None:
    assert sync_insight_extraction_automation(tmp_path, {"insightExtractionEnabled": False}) is None
    assert not (tmp_path / AUTOMATIONS_PATH).exists()

    created = sync_insight_extraction_automation(tmp_path, {"insightExtractionEnabled": True})
    assert created is not None and created["cronExpression"] == "0 2 * * *"
    stored = json.loads((tmp_path / AUTOMATIONS_PATH).read_text(encoding="utf-8"))
    assert stored == [created] and created["id"]

    other = {"id": "keep-me", "name": "Backup", "cronExpression": "0 3 * * *"}
    stored.insert(0, other)
    (tmp_path / AUTOMATIONS_PATH).write_text(json.dumps(stored), encoding="utf-8")

    updated = sync_insight_extraction_automation(
        tmp_path, ProjectSettings(insight_extraction_enabled=True, insight_extraction_schedule="30 4 * * 1")
    )
    assert updated is not None and updated["id"] == created["id"]
    assert updated["cronExpression"] == "30 4 * * 1"
    assert [s["name"] for s in read_automations(tmp_path)] == ["Backup", INSIGHT_EXTRACTION_SCHEDULE_NAME]

    assert sync_insight_extraction_automation(tmp_path, {"insight_extraction_enabled": False}) is None
    assert read_automations(tmp_path) == [other]


def test_sync_invalid_cron_raises_and_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="^Invalid insight extraction schedule: every day$") as err:
        sync_insight_extraction_automation(
            tmp_path, {"insightExtractionEnabled": True, "insightExtractionSchedule": "every day"}
        )
    assert isinstance(err.value, ValueError)
    assert not (tmp_path / AUTOMATIONS_PATH).exists()


def test_sync_disabled_ignores_the_schedule(tmp_path: Path) -> None:
    settings = {"insightExtractionEnabled": False, "insightExtractionSchedule": "bad"}
    assert sync_insight_extraction_automation(tmp_path, settings) is None


def test_sync_refuses_a_malformed_store(tmp_path: Path) -> None:
    path = tmp_path / AUTOMATIONS_PATH
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(SettingsError, match="not valid JSON"):
        sync_insight_extraction_automation(tmp_path, {"insightExtractionEnabled": True})
    assert path.read_text(encoding="utf-8") == "{not json"


def test_next_run_times() -> None:
    start = datetime(2024, 6, 15, 12, 0, tzinfo=UTC)
    runs = next_run_times("0 2 * * *", 3, start)
    assert runs == [datetime(2024, 6, d, 2, 0, tzinfo=UTC) for d in (16, 17, 18)]
    assert len(next_run_times("*/15 * * * *")) == 3
    with pytest.raises(ValueError):
        next_run_times("61 * * * *")
