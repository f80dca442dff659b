"""Settings: defaults, both config.json shapes, unknown keys kept, null-as-delete, field-named errors."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import SettingsError
from core.settings import CONFIG_PATH, ProjectSettings, load_settings, update_settings
from core.settings.store.own import OWN_PATH


def write_config(root, doc) -> bytes:
    path = root / CONFIG_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path.read_bytes()


def read_config(root):
    return json.loads((root / CONFIG_PATH).read_text())


def test_defaults_when_no_config(project):
    s = load_settings(project)
    assert s.memory_enabled is True
    assert s.memory_backend == "file"
    assert s.memory_backend_config == {}
    # seed 000 §4.3 invariant 8: insights defaults
    assert s.insight_extraction_enabled is False
    assert s.insight_extraction_schedule == "0 2 * * *"
    assert s.insight_extraction_min_interval_ms == 86_400_000


def test_every_field_has_title_and_description():
    schema = ProjectSettings.model_json_schema(by_alias=True)
    for key, prop in schema["properties"].items():
        assert prop.get("title") and prop.get("description"), key


def test_flat_shape_is_read_and_written_back_flat(project):
    write_config(project, {"memoryEnabled": False, "somethingElse": [1, 2]})
    assert load_settings(project).memory_enabled is False
    update_settings(project, {"insightExtractionEnabled": True})
    assert read_config(project) == {"memoryEnabled": False, "somethingElse": [1, 2],
                                    "insightExtractionEnabled": True}


def test_nested_fusion_shape_is_kept_with_unknown_keys(project):
    write_config(project, {"nextId": 7, "settings": {"maxConcurrent": 2, "memoryEnabled": True}})
    update_settings(project, {"memory_enabled": False})
    assert read_config(project) == {"nextId": 7, "settings": {"maxConcurrent": 2, "memoryEnabled": False}}


def test_fusion_backend_key_is_read_and_memdesk_backend_goes_to_memdesk_state(project):
    # Issue 18: memdesk's backend choice is memdesk's own setting, never written into Fusion's store;
    # Fusion's memoryBackendType stays Fusion's (read as memdesk's backend while memdesk has none).
    write_config(project, {"memoryBackendType": "readonly"})
    assert load_settings(project).memory_backend == "readonly"
    update_settings(project, {"memoryBackend": "file"})
    assert read_config(project) == {"memoryBackendType": "readonly"}
    assert json.loads((project / OWN_PATH).read_text()) == {"memoryBackend": "file"}
    assert load_settings(project).memory_backend == "file"
    update_settings(project, {"memoryBackend": None})
    assert json.loads((project / OWN_PATH).read_text()) == {}
    assert load_settings(project).memory_backend == "readonly"


def test_memdesk_keys_an_earlier_memdesk_left_in_config_json_move_once_kept_in_history(project):
    write_config(project, {"memoryEnabled": False, "historyRetentionDays": 30, "memoryBackend": "sqlite",
                           "maxConcurrent": 2})
    assert load_settings(project).history_retention_days == 30  # read from there until moved
    update_settings(project, {"insightExtractionEnabled": True})
    assert read_config(project) == {"memoryEnabled": False, "maxConcurrent": 2, "insightExtractionEnabled": True}
    assert json.loads((project / OWN_PATH).read_text()) == {"historyRetentionDays": 30, "memoryBackend": "sqlite"}
    from core.storage.history import versions as history

    old = [v for v in history.list_versions(project, CONFIG_PATH)]
    assert old and "historyRetentionDays" in history.get_version(project, old[-1].id)[1]
    s = load_settings(project)
    assert (s.history_retention_days, s.memory_backend, s.memory_enabled) == (30, "sqlite", False)


def test_a_memdesk_only_setting_never_creates_config_json(project):
    # Issue 18 "tried as a new user would": choosing budget readers created Fusion's config.json, mode 0600.
    update_settings(project, {"memdeskBudgetConsumers": {".fusion/memory.md": ["fusion"]}})
    assert not (project / CONFIG_PATH).exists()
    assert json.loads((project / OWN_PATH).read_text()) == {"memdeskBudgetConsumers": {".fusion/memory.md": ["fusion"]}}


def test_a_config_json_memdesk_creates_is_not_private(project):
    update_settings(project, {"memoryEnabled": False})
    assert (project / CONFIG_PATH).stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    import os

    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_null_deletes_the_key_back_to_default(project):
    write_config(project, {"memoryEnabled": False, "other": 1})
    s = update_settings(project, {"memoryEnabled": None})
    assert s.memory_enabled is True
    assert read_config(project) == {"other": 1}


@pytest.mark.parametrize(
    ("patch", "field", "words"),
    [
        ({"insightExtractionSchedule": "every day"}, "insightExtractionSchedule", "cron"),
        ({"insightExtractionSchedule": "61 * * * *"}, "insightExtractionSchedule", "not a valid cron"),
        ({"insightExtractionMinIntervalMs": -5}, "insightExtractionMinIntervalMs", "greater than or equal"),
        ({"memoryBackend": 3}, "memoryBackend", "string"),
        ({"memoryBackend": "  "}, "memoryBackend", "blank"),
        ({"memoryEnabled": "yes"}, "memoryEnabled", "boolean"),
        ({"noSuchSetting": 1}, "noSuchSetting", "unknown setting"),
    ],
)
def test_invalid_values_name_the_field_and_leave_the_file(project, patch, field, words):
    before = write_config(project, {"nextId": 1, "settings": {"memoryEnabled": True}})
    with pytest.raises(SettingsError) as info:
        update_settings(project, patch)
    assert info.value.field == field
    assert field in str(info.value) and words in str(info.value)
    assert (project / CONFIG_PATH).read_bytes() == before


def test_malformed_config_raises_and_is_never_overwritten(project):
    path = project / CONFIG_PATH
    path.parent.mkdir(parents=True)
    path.write_text('{"memoryEnabled": tru')
    with pytest.raises(SettingsError, match="not valid JSON"):
        load_settings(project)
    with pytest.raises(SettingsError):
        update_settings(project, {"memoryEnabled": False})
    assert path.read_text() == '{"memoryEnabled": tru'


@settings(deadline=None, max_examples=60)
@given(st.dictionaries(st.sampled_from(["memoryEnabled", "memoryBackend", "insightExtractionSchedule",
                                        "insightExtractionMinIntervalMs", "bogus"]),
                       st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20))))
def test_update_never_raises_anything_but_settings_error(tmp_path_factory, patch):
    root = tmp_path_factory.mktemp("p")
    try:
        update_settings(root, patch)
    except SettingsError:
        assert not (root / CONFIG_PATH).exists()
