"""ProvidersDialog: the user's own providers (never the project's), the default, and the unattended-prune opt-in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from core.settings.user_config import load_user_config, user_config_path
from gui.session import ProjectSession
from gui.widgets.extraction_dialog import ExtractionDialog
from gui.widgets.providers_dialog import ProvidersDialog


@pytest.fixture
def dialog(qtbot, user_config_dir: Path) -> ProvidersDialog:
    dialog = ProvidersDialog()
    qtbot.addWidget(dialog)
    dialog.confirm = lambda _question: True
    dialog.show()
    return dialog


def names(dialog: ProvidersDialog) -> list[str]:
    return [dialog.list.item(i).text() for i in range(dialog.list.count())]


def add_openai(qtbot, dialog: ProvidersDialog, name: str = "work-llm", env: str = "WORK_API_KEY") -> None:
    qtbot.mouseClick(dialog.add_button, Qt.MouseButton.LeftButton)
    form = dialog.form
    qtbot.keyClicks(form.name_edit, name)
    qtbot.keyClicks(form.base_url_edit, "https://llm.example.com/v1/")
    qtbot.keyClicks(form.model_edit, "gpt-4o-mini")
    qtbot.keyClicks(form.key_env_edit, env)
    form.timeout_spin.setValue(45)
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)


def test_starts_with_the_built_in_offline_provider_read_only(dialog: ProvidersDialog, user_config_dir: Path) -> None:
    assert names(dialog) == ["offline — rule-based (default)"]
    assert dialog.form.offline and dialog.form.offline_label.isVisible()
    assert not dialog.form.base_url_edit.isVisible() and not dialog.form.command_edit.isVisible()
    assert not dialog.remove_button.isEnabled() and not dialog.save_button.isEnabled()
    assert not dialog.default_button.isEnabled()
    assert not dialog.auto_prune.isChecked()
    note = dialog.findChildren(type(dialog.status))[0].text()
    assert "your own settings" in note and "never in a project" in note and str(user_config_dir) in note
    assert not user_config_path().exists()  # looking writes nothing


def test_add_an_openai_provider_saves_the_key_variable_name_only(qtbot, dialog: ProvidersDialog,
                                                                 sample_project: Path) -> None:
    project_config = (sample_project / ".fusion" / "config.json").read_bytes()
    changed = []
    dialog.providersChanged.connect(lambda: changed.append(1))
    add_openai(qtbot, dialog)
    provider = load_user_config().providers["work-llm"]
    assert (provider.base_url, provider.model, provider.api_key_env, provider.timeout_s) == (
        "https://llm.example.com/v1", "gpt-4o-mini", "WORK_API_KEY", 45)
    assert json.loads(user_config_path().read_text())["providers"]["work-llm"]["apiKeyEnv"] == "WORK_API_KEY"
    assert "offline — rule-based (default)" in names(dialog) and "work-llm — OpenAI-compatible" in names(dialog)
    assert dialog.selected() == "work-llm" and dialog.status.text() == "Saved provider work-llm."
    assert changed == [1]
    assert (sample_project / ".fusion" / "config.json").read_bytes() == project_config


def test_invalid_input_says_why_and_saves_nothing(qtbot, dialog: ProvidersDialog) -> None:
    qtbot.mouseClick(dialog.add_button, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(dialog.form.name_edit, "half")
    qtbot.keyClicks(dialog.form.base_url_edit, "https://llm.example.com/v1")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert "an openai provider needs baseUrl and model" in dialog.form.error.text()
    assert dialog.form.name_edit.text() == "half"  # what was typed stays
    qtbot.keyClicks(dialog.form.model_edit, "m")
    qtbot.keyClicks(dialog.form.key_env_edit, "sk-live-123")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert "is not an environment variable name" in dialog.form.error.text()
    assert not user_config_path().exists()


def test_a_command_provider_keeps_its_arguments(qtbot, dialog: ProvidersDialog) -> None:
    qtbot.mouseClick(dialog.add_button, Qt.MouseButton.LeftButton)
    form = dialog.form
    qtbot.keyClicks(form.name_edit, "local")
    form.kind_combo.setCurrentIndex(form.kind_combo.findData("command"))
    assert form.command_edit.isVisible() and not form.base_url_edit.isVisible()
    qtbot.keyClicks(form.command_edit, "llm -m mistral --system 'be brief'")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert load_user_config().providers["local"].command == ["llm", "-m", "mistral", "--system", "be brief"]
    dialog.select("local")
    assert form.command_edit.text() == "llm -m mistral --system 'be brief'" and form.name_edit.isReadOnly()


def test_default_remove_and_unattended_prunes(qtbot, dialog: ProvidersDialog) -> None:
    add_openai(qtbot, dialog)
    qtbot.mouseClick(dialog.default_button, Qt.MouseButton.LeftButton)
    assert load_user_config().default_provider == "work-llm"
    assert "work-llm — OpenAI-compatible (default)" in names(dialog)
    dialog.auto_prune.click()
    assert load_user_config().auto_apply_prune is True
    dialog.auto_prune.click()
    assert load_user_config().auto_apply_prune is False
    dialog.select("work-llm")
    qtbot.mouseClick(dialog.remove_button, Qt.MouseButton.LeftButton)
    config = load_user_config()
    assert list(config.providers) == ["offline"] and config.default_provider == "offline"
    assert names(dialog) == ["offline — rule-based (default)"]


def test_the_extraction_dialog_offers_the_saved_providers(qtbot, dialog: ProvidersDialog,
                                                          sample_project: Path) -> None:
    add_openai(qtbot, dialog)
    qtbot.mouseClick(dialog.default_button, Qt.MouseButton.LeftButton)
    run = ExtractionDialog(ProjectSession(sample_project))
    qtbot.addWidget(run)
    assert run.selected_provider() == "work-llm"
    assert [run.provider_combo.itemData(i) for i in range(run.provider_combo.count())] == ["work-llm", "offline"]
    assert "gpt-4o-mini at https://llm.example.com/v1 · key from $WORK_API_KEY" in run.provider_detail.text()
    with qtbot.waitSignal(run.providersRequested):
        qtbot.mouseClick(run.providers_button, Qt.MouseButton.LeftButton)


def test_a_broken_config_file_is_reported_and_not_overwritten(qtbot, user_config_dir: Path) -> None:
    user_config_dir.mkdir(parents=True)
    user_config_path().write_text("{ broken")
    dialog = ProvidersDialog()
    qtbot.addWidget(dialog)
    assert "cannot be read" in dialog.banner.label.text() and "not valid JSON" in dialog.banner.label.text()
    assert not dialog.add_button.isEnabled() and not dialog.auto_prune.isEnabled()
    assert user_config_path().read_text() == "{ broken"
