"""BackendsView: the picker lists every backend with badges, builds forms from models, persists choices."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import Field
from PySide6.QtCore import Qt

from core.backends import BackendSettings, FileMemoryBackend, default_registry
from gui.models import BackendListModel
from gui.session import ProjectSession
from gui.views.backends_view import BackendsView

CONFIG = ".fusion/config.json"
OWN = ".fusion/memdesk/settings.json"


class TunedSettings(BackendSettings):
    path: str = Field(".fusion/memdesk/tuned.db", title="Database file", description="Relative to the project.")
    limit: int = Field(20, ge=1, le=500, title="Result limit", description="Most hits returned.")
    mode: Literal["keyword", "semantic"] = Field("keyword", title="Search mode")
    mirror: bool = Field(True, title="Mirror to file")
    flush_ms: int = Field(60_000, ge=1_000, title="Flush interval", json_schema_extra={"unit": "ms"})


class TunedBackend(FileMemoryBackend):
    id = "tuned"
    name = "Tuned File"
    version = "2.1.0"
    description = "A file backend with settings, for the picker tests."
    capabilities = frozenset({"read", "write", "search"})
    settings_model = TunedSettings

    def status_note(self) -> str | None:
        return "keyword-only"


def make_view(qtbot, root: Path, registry=None) -> BackendsView:
    view = BackendsView(ProjectSession(root, registry=registry))
    qtbot.addWidget(view)
    view.resize(1280, 800)
    view.show()
    return view


def registry_with_tuned():
    registry = default_registry()
    registry.register(TunedBackend)
    return registry


def test_lists_file_and_readonly_with_badges_and_marks_the_active_one(qtbot, sample_project: Path) -> None:
    view = make_view(qtbot, sample_project)
    ids = [info.id for info in view.model.infos]
    assert ids[:2] == ["file", "readonly"]
    file_row, ro_row = view.model.row_of("file"), view.model.row_of("readonly")
    assert view.model.index(file_row).data(BackendListModel.ActiveRole) is True
    assert view.model.index(ro_row).data(BackendListModel.ActiveRole) is False
    assert view.selected().id == "file"
    assert view.badges.present() == ["read", "write"]
    assert "In use" in view.state.text()
    view.select(ro_row)
    assert view.title.text() == "Read-Only"
    assert view.badges.present() == ["read"]
    assert view.badges.chips["write"].property("present") is False
    assert "refuses every write" in view.description.text()
    assert not view.state.isVisible()
    assert view.no_settings.isVisible()
    assert not view.banner.isVisible()


def test_switching_persists_memory_backend_in_memdesks_own_state(qtbot, sample_project: Path) -> None:
    # Issue 18: memdesk's backend is memdesk's own setting; the keys an earlier memdesk left in Fusion's
    # config.json move out of it, and Fusion's own memoryBackendType stays Fusion's.
    view = make_view(qtbot, sample_project)
    seen = []
    view.backendChosen.connect(seen.append)
    view.select(view.model.row_of("readonly"))
    qtbot.mouseClick(view.use_button, Qt.MouseButton.LeftButton)
    own = json.loads((sample_project / OWN).read_text())
    assert own["memoryBackend"] == "readonly"
    assert own["memoryBackendConfig"] == {}
    settings = json.loads((sample_project / CONFIG).read_text())["settings"]
    assert "memoryBackend" not in settings and "memoryBackendConfig" not in settings
    assert settings["memoryBackendType"] == "file"
    assert settings["worktreeNaming"] == "task-id"
    assert view.session.backend.id == "readonly"
    assert seen == ["readonly"]
    assert view.model.index(view.model.row_of("readonly")).data(BackendListModel.ActiveRole) is True
    assert "Read-Only" in view.status.text()


def test_form_is_generated_from_the_backend_settings_model(qtbot, sample_project: Path) -> None:
    view = make_view(qtbot, sample_project, registry_with_tuned())
    view.select(view.model.row_of("tuned"))
    assert view.note.text() == "keyword-only"
    assert view.badges.present() == ["read", "write", "search"]
    form = view.form
    assert form is not None and form.keys() == ["path", "limit", "mode", "mirror", "flush_ms"]
    assert form.labels["limit"].text() == "Result limit"
    assert form.editor("limit").spin.maximum() == 500
    assert form.editor("mode").combo.count() == 2
    assert (form.editor("flush_ms").number.value(), form.editor("flush_ms").unit.currentText()) == (1, "minutes")
    form.editor("mode").combo.setCurrentIndex(1)
    form.editor("mode").changed.emit()
    form.editor("mirror").box.click()
    form.editor("flush_ms").set_duration(5, "minutes")
    qtbot.mouseClick(view.use_button, Qt.MouseButton.LeftButton)
    settings = json.loads((sample_project / OWN).read_text())
    assert settings["memoryBackend"] == "tuned"
    assert settings["memoryBackendConfig"] == {"path": ".fusion/memdesk/tuned.db", "limit": 20, "mode": "semantic",
                                               "mirror": False, "flush_ms": 300_000}
    assert view.session.backend.id == "tuned"
    assert view.use_button.text() == "Save settings"
    assert view.form.editor("mode").value() == "semantic"


def test_invalid_backend_setting_is_marked_and_not_saved(qtbot, sample_project: Path) -> None:
    view = make_view(qtbot, sample_project, registry_with_tuned())
    before = (sample_project / CONFIG).read_bytes()
    view.select(view.model.row_of("tuned"))
    view.form.editor("flush_ms").set_duration(0, "seconds")
    assert "greater than or equal to 1000" in view.form.field_error("flush_ms")
    assert view.use_selected() is False
    assert (sample_project / CONFIG).read_bytes() == before
    qtbot.mouseClick(view.revert_button, Qt.MouseButton.LeftButton)
    assert view.form.field_error("flush_ms") == ""


def test_fallback_banner_for_an_unknown_configured_backend(qtbot, sample_project: Path) -> None:
    path = sample_project / CONFIG
    doc = json.loads(path.read_text())
    doc["settings"].update(memoryBackend="qdrant", memoryBackendType="qdrant")
    path.write_text(json.dumps(doc))
    view = make_view(qtbot, sample_project)
    assert view.banner.isVisible()
    assert '"qdrant"' in view.banner.text()
    assert 'using the "File System" backend (file)' in view.banner.text()
    assert view.selected().id == "file"
    qtbot.mouseClick(view.use_button, Qt.MouseButton.LeftButton)
    assert json.loads((sample_project / OWN).read_text())["memoryBackend"] == "file"
    assert "memoryBackend" not in json.loads(path.read_text())["settings"]
    assert not view.banner.isVisible()


def test_screenshot(qtbot, sample_project: Path, screenshot) -> None:
    view = make_view(qtbot, sample_project)
    sqlite = view.model.row_of("sqlite")
    view.select(sqlite if sqlite >= 0 else view.model.row_of("readonly"))
    screenshot(view, "backends")


def test_an_untouched_layered_project_shows_qmd_in_use_and_nothing_unavailable(qtbot, layered_project):
    """Issue 22: "File System — configured, but unavailable" beside "QMD in use" on current Fusion."""
    from gui.models import BackendListModel
    from gui.session import ProjectSession
    from gui.views.backends_view import BackendsView

    session = ProjectSession(layered_project)
    view = BackendsView(session)
    qtbot.addWidget(view)
    assert session.backend.id == "qmd" and session.backend.fallback_reason is None
    model = view.model
    marks = {model.infos[r].id: (model.index(r).data(BackendListModel.ActiveRole),
                                 model.index(r).data(BackendListModel.ConfiguredRole)) for r in range(model.rowCount())}
    assert marks["qmd"][0] and not any(configured for _active, configured in marks.values())
    assert view.selected().id == "qmd" and view.banner.text() == ""
    session.close()
