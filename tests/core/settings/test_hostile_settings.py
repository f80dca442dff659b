"""Numeric settings past what the code can handle (issue 9 item 12): refused, and a bad config is fixable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import SettingsError
from core.settings import CONFIG_PATH, ProjectSettings, update_settings
from core.storage import saving
from core.storage.history import versions as history
from tests.core.hostile import one_line, run_cli

OUT_OF_RANGE = [
    ("historyRetentionDays", 740_000),
    ("historyRetentionDays", 10**12),
    ("historyMinVersions", 2**63),
    ("historyMinVersions", 10**9),
    ("insightExtractionMinIntervalMs", 10**20),
    ("insightExtractionMinIntervalMs", 2**63),
]


@pytest.fixture
def configured(project: Path) -> Path:
    (project / ".fusion").mkdir()
    (project / CONFIG_PATH).write_text('{"memoryEnabled": true}\n')
    (project / ".fusion" / "memory.md").write_text("# Project Memory\n")
    return project


@pytest.mark.parametrize(("key", "value"), OUT_OF_RANGE)
def test_out_of_range_value_is_refused_naming_the_bound(configured, key, value):
    before = (configured / CONFIG_PATH).read_bytes()
    with pytest.raises(SettingsError) as info:
        update_settings(configured, {key: value})
    assert info.value.field == key and "less than or equal to" in str(info.value)
    assert (configured / CONFIG_PATH).read_bytes() == before


def test_every_numeric_setting_has_bounds():
    schema = ProjectSettings.model_json_schema(by_alias=True)["properties"]
    numeric = {k: v for k, v in schema.items() if v.get("type") in ("integer", "number")}
    assert numeric and all("maximum" in v and "minimum" in v for v in numeric.values()), numeric


@pytest.mark.parametrize(("key", "value", "good"), [
    ("historyRetentionDays", 740_000, 90),
    ("historyMinVersions", 2**63, 20),
    ("historyRetentionDays", 10**12, 30),
])
def test_config_already_out_of_range_still_writes_and_can_be_set_back(configured, key, value, good):
    (configured / CONFIG_PATH).write_text(json.dumps({"memoryEnabled": True, key: value}) + "\n")
    # Every replacing write keeps working (the old version still goes to history first).
    saving.replace_text(configured, ".fusion/memory.md", "# Project Memory\n\n- one\n")
    saving.replace_text(configured, ".fusion/memory.md", "# Project Memory\n\n- two\n")
    assert len(history.list_versions(configured, ".fusion/memory.md")) == 2
    result = run_cli("settings", "set", key, str(good), "--project", str(configured))
    assert result.returncode == 0, result.stderr
    # memdesk's own settings move out of config.json into memdesk's state (issue 18).
    assert key not in json.loads((configured / CONFIG_PATH).read_text())
    assert json.loads((configured / ".fusion/memdesk/settings.json").read_text())[key] == good


def test_loading_an_out_of_range_config_is_one_line_that_says_how_to_fix_it(configured):
    (configured / CONFIG_PATH).write_text('{"insightExtractionMinIntervalMs": 100000000000000000000}\n')
    result = run_cli("settings", "get", "--project", str(configured))
    line = one_line(result.stderr)
    assert result.returncode == 2 and "insightExtractionMinIntervalMs" in line and "memdesk settings set" in line
    fixed = run_cli("settings", "set", "insightExtractionMinIntervalMs", "86400000", "--project", str(configured))
    assert fixed.returncode == 0, fixed.stderr
