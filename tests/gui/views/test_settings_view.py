"""SettingsView driven as an operator would: toggles, a cron typed key by key, Apply, Revert."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from gui.session import ProjectSession
from gui.views.settings_view import SettingsView

CONFIG = ".fusion/config.json"
# The offscreen platform warns on every top-level show(); not a defect of the view.


@pytest.fixture
def view(qtbot, sample_project: Path) -> SettingsView:
    session = ProjectSession(sample_project)
    widget = SettingsView(session)
    qtbot.addWidget(widget)
    widget.resize(1280, 800)
    widget.show()
    return widget


def schedule_line(view: SettingsView):
    return view.form.editor("insightExtractionSchedule").line


def test_form_is_generated_from_the_model_without_backend_fields(view: SettingsView) -> None:
    # Every memory setting of current Fusion (issue 18), then memdesk's own.
    assert view.form.keys() == [
        "memoryEnabled", "memoryBackendType", "insightExtractionEnabled", "insightExtractionSchedule",
        "insightExtractionMinIntervalMs", "memoryDreamsEnabled", "memoryDreamsSchedule", "memoryAutoSummarizeEnabled",
        "memoryAutoSummarizeThresholdChars", "memoryAutoSummarizeSchedule", "memoryBackupEnabled",
        "memoryBackupSchedule", "memoryBackupRetention", "memoryBackupDir", "memoryBackupScope",
        "agentMemoryInclusionMode", "historyRetentionDays", "historyMinVersions"]
    assert view.form.labels["memoryEnabled"].text() == "Memory enabled"
    assert "agents consult" in view.form.editor("memoryEnabled").toolTip()
    assert view.form.rows["memoryEnabled"].help.isVisible()
    interval = view.form.editor("insightExtractionMinIntervalMs")
    assert (interval.number.value(), interval.unit.currentText()) == (1, "days")
    assert not view.apply_button.isEnabled()


def test_invalid_cron_is_shown_at_the_field_and_nothing_is_saved(view: SettingsView, qtbot) -> None:
    before = (view.session.root / CONFIG).read_bytes()
    line = schedule_line(view)
    line.selectAll()
    qtbot.keyClicks(line, "0 2 * *")
    error = view.form.rows["insightExtractionSchedule"].error
    assert error.isVisible()
    assert "5 fields" in error.text()
    assert not view.cron_preview.isVisible()
    qtbot.mouseClick(view.apply_button, Qt.MouseButton.LeftButton)
    assert error.isVisible()
    assert "Not saved" in view.status.text()
    assert (view.session.root / CONFIG).read_bytes() == before
    qtbot.keyClicks(line, " 61")
    assert "not a valid cron schedule" in error.text()
    assert (view.session.root / CONFIG).read_bytes() == before


def test_valid_cron_shows_the_next_three_runs_live(view: SettingsView, qtbot) -> None:
    line = schedule_line(view)
    line.selectAll()
    qtbot.keyClicks(line, "30 4 * * 1")
    assert view.cron_preview.isVisible()
    assert len(view.cron_preview.runs) == 3
    assert all(run.weekday() == 0 and (run.hour, run.minute) == (4, 30) for run in view.cron_preview.runs)
    assert view.cron_preview.text().count("04:30 UTC") == 3
    assert not view.form.rows["insightExtractionSchedule"].error.isVisible()


def test_apply_writes_only_changed_keys_keeping_shape_and_unknown_keys(view: SettingsView, qtbot) -> None:
    path = view.session.root / CONFIG
    before = json.loads(path.read_text())
    view.form.editor("memoryEnabled").box.click()
    line = schedule_line(view)
    line.selectAll()
    qtbot.keyClicks(line, "15 3 * * *")
    view.form.editor("insightExtractionMinIntervalMs").set_duration(6, "hours")
    assert view.apply_button.isEnabled()
    qtbot.mouseClick(view.apply_button, Qt.MouseButton.LeftButton)
    after = json.loads(path.read_text())
    assert after["nextId"] == 42
    expected = dict(before["settings"], memoryEnabled=False, insightExtractionSchedule="15 3 * * *",
                    insightExtractionMinIntervalMs=6 * 3_600_000)
    # memdesk's own keys an earlier memdesk left in config.json moved to memdesk's state (issue 18).
    for key in ("memoryBackend", "memoryBackendConfig"):
        expected.pop(key)
    assert after["settings"] == expected
    assert after["settings"]["worktreeNaming"] == "task-id"
    assert view.session.settings.memory_enabled is False
    assert not view.apply_button.isEnabled()
    assert "Saved" in view.status.text()


def test_apply_with_ctrl_return_on_a_flat_config(qtbot, project: Path) -> None:
    (project / ".fusion").mkdir()
    path = project / CONFIG
    path.write_text(json.dumps({"memoryEnabled": True, "custom": [1, 2]}))
    view = SettingsView(ProjectSession(project))
    qtbot.addWidget(view)
    with qtbot.waitActive(view):
        view.show()
        view.activateWindow()
    view.form.editor("insightExtractionEnabled").box.click()
    view.form.editor("insightExtractionEnabled").box.setFocus()
    qtbot.keyClick(view.form.editor("insightExtractionEnabled").box, Qt.Key.Key_Return,
                   Qt.KeyboardModifier.ControlModifier)
    assert json.loads(path.read_text()) == {"memoryEnabled": True, "custom": [1, 2], "insightExtractionEnabled": True}


def test_revert_restores_the_saved_values(view: SettingsView, qtbot) -> None:
    view.form.editor("insightExtractionEnabled").box.click()
    line = schedule_line(view)
    line.selectAll()
    qtbot.keyClicks(line, "bad")
    assert view.revert_button.isEnabled()
    qtbot.mouseClick(view.revert_button, Qt.MouseButton.LeftButton)
    assert view.form.editor("insightExtractionEnabled").value() is True
    assert line.text() == "0 2 * * *"
    assert not view.form.rows["insightExtractionSchedule"].error.isVisible()
    assert not view.apply_button.isEnabled()


def test_settings_error_from_the_session_is_shown_at_its_field(view: SettingsView, qtbot, monkeypatch) -> None:
    from core.errors import SettingsError

    def refuse(patch, base=None):
        raise SettingsError("invalid setting insightExtractionMinIntervalMs = 5: too short",
                            field="insightExtractionMinIntervalMs", reason="too short")

    monkeypatch.setattr(view.session, "update_settings", refuse)
    view.form.editor("insightExtractionMinIntervalMs").set_duration(5, "seconds")
    qtbot.mouseClick(view.apply_button, Qt.MouseButton.LeftButton)
    assert view.form.field_error("insightExtractionMinIntervalMs") == "too short"


def test_malformed_config_shows_a_banner_and_disables_apply(qtbot, project: Path) -> None:
    (project / ".fusion").mkdir()
    path = project / CONFIG
    path.write_text('{"memoryEnabled": tru')
    view = SettingsView(ProjectSession(project))
    qtbot.addWidget(view)
    view.show()
    assert view.banner.isVisible()
    assert "not valid JSON" in view.banner.text()
    view.form.editor("memoryEnabled").box.click()
    assert not view.apply_button.isEnabled()
    view.apply()
    assert path.read_text() == '{"memoryEnabled": tru'


def test_screenshot(view: SettingsView, qtbot, screenshot) -> None:
    line = schedule_line(view)
    line.selectAll()
    qtbot.keyClicks(line, "30 4 * * 1-5")
    screenshot(view, "settings")


def test_minimum_interval_help_does_not_say_milliseconds_beside_a_unit_chooser(view: SettingsView) -> None:
    """Issue 22: "Minimum interval" said milliseconds beside a days selector."""
    interval = view.form.editor("insightExtractionMinIntervalMs")
    help_text = interval.toolTip()
    assert "in milliseconds" not in help_text and "unit" in help_text
    assert interval.value() == 86_400_000  # still kept in ms: one day
