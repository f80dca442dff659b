"""The app's session holds the process's one model of its folder (issue 19, item 4): the seed-named
functions and a server in the same process get that model, and closing the window lets it go."""

from __future__ import annotations

from pathlib import Path

from core.project import open_project
from core.settings import update_settings
from gui.session import ProjectSession


def test_the_session_model_is_the_one_model_and_reloads_in_place(qtbot, sample_project: Path):
    session = ProjectSession(sample_project)
    try:
        assert open_project(sample_project) is session.project
        update_settings(sample_project, {"memoryBackend": "readonly"})
        assert open_project(sample_project) is session.project  # reloaded, not replaced
        assert session.project.backend.id == "readonly"
    finally:
        session.close()
    again = open_project(sample_project)
    assert again is not session.project and not again.closed and session.project.closed
    again.close()
