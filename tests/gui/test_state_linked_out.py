"""The app on a project whose ``.fusion/memdesk`` (memdesk's own state) is a link out of it (issue 19 item 1).

The window opens and says why the settings are the defaults; a save, which must keep the previous
version in ``history.db`` under that folder first, is refused in one line naming it; nothing outside the
project changes, and the app keeps working (the text typed is still in the editor, to save once fixed).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QLabel

from gui.main_window import MainWindow
from gui.recent import RecentProjects
from tests.core.hostile import snapshot

MEMORY = ".fusion/memory.md"


def test_a_state_folder_linked_out_is_refused_and_the_app_keeps_working(qtbot, tmp_path: Path, sample_project: Path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "settings.json").write_text('{"memoryBackend": "readonly"}\n', encoding="utf-8")
    state = sample_project / ".fusion" / "memdesk"
    if state.exists():
        shutil.rmtree(state)
    state.symlink_to(outside)
    before, memory = snapshot(outside), (sample_project / MEMORY).read_bytes()

    window = MainWindow(sample_project, recent=RecentProjects(QSettings(str(tmp_path / "r.ini"),
                                                                       QSettings.Format.IniFormat)))
    errors: list[str] = []
    window.show_error = errors.append  # type: ignore[method-assign]
    window.confirm_discard = lambda: "discard"  # type: ignore[method-assign]
    qtbot.addWidget(window)
    window.show()
    shown = " ".join(label.text() for label in window.findChildren(QLabel) if label.isVisible())
    assert "'.fusion/memdesk' is a symbolic link" in shown and "leaves the project root" in shown

    qtbot.keyClicks(window.editor.text_edit, "typed while the state folder leads out ")
    window.actions_by_name["save"].trigger()

    def banner() -> str:
        return next((label.text() for label in window.findChildren(QLabel)
                     if label.isVisible() and label.text().startswith("Not saved")), "")

    qtbot.waitUntil(lambda: bool(banner()), timeout=20_000)
    assert "'.fusion/memdesk' is a symbolic link" in banner() and "\n" not in banner()
    assert errors == []  # one place says it: the banner over the editor
    assert (sample_project / MEMORY).read_bytes() == memory  # the previous version could not be kept: not saved
    assert window.isWindowModified()  # the operator's text is still there
    assert window.editor.text_edit.toPlainText().startswith("typed while the state folder leads out ")
    assert snapshot(outside) == before and os.readlink(state) == str(outside)
    window.close()
