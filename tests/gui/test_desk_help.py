"""Reveal in file manager, Copy path, About, Help's documents and ``memdesk --version``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QGuiApplication

from core.version import memdesk_version
from gui.reveal import reveal, reveal_commands
from gui.widgets.about_dialog import DOCS, AboutDialog, doc_path
from gui.widgets.shortcuts_dialog import ShortcutsDialog
from tests.gui.desk_window import DREAMS

ALT_SHIFT = Qt.KeyboardModifier.AltModifier | Qt.KeyboardModifier.ShiftModifier


def _active(qtbot, desk):
    desk.activateWindow()
    qtbot.waitUntil(desk.isActiveWindow, timeout=3000)
    desk.editor.text_edit.setFocus()


def test_copy_path_and_relative_path(qtbot, desk, layered_project):
    desk.open_document(DREAMS)
    _active(qtbot, desk)
    qtbot.keyClick(desk.editor.text_edit, Qt.Key.Key_C, ALT_SHIFT)
    assert QGuiApplication.clipboard().text() == str(layered_project / DREAMS)
    qtbot.keyClick(desk.editor.text_edit, Qt.Key.Key_C, ALT_SHIFT | Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == DREAMS
    assert desk.status.currentMessage() == f"Copied {DREAMS}"


def test_reveal_asks_the_file_manager_to_select_the_file(qtbot, desk, layered_project):
    launched: list[list[str]] = []
    desk.desk.launch = lambda args: launched.append(args) or True
    _active(qtbot, desk)
    qtbot.keyClick(desk.editor.text_edit, Qt.Key.Key_R, ALT_SHIFT)
    target = layered_project / ".fusion/memory/MEMORY.md"
    if reveal_commands(target):  # dbus-send is there: FileManager1.ShowItems with the file's URI
        assert launched and launched[0][-2] == f"array:string:{QUrl.fromLocalFile(str(target)).toString()}"
        assert desk.status.currentMessage() == f"Shown in the file manager: {target}"


def test_reveal_falls_back_to_opening_the_folder(tmp_path: Path):
    opened: list[QUrl] = []
    file = tmp_path / "MEMORY.md"
    file.write_text("x")
    said = reveal(file, launch=lambda args: False, open_url=lambda url: opened.append(url) or True)
    assert opened == [QUrl.fromLocalFile(str(tmp_path))] and said == f"Opened the folder {tmp_path}"
    assert reveal_commands(file, "darwin") == [["open", "-R", str(file)]]
    assert reveal_commands(file, "win32") == [["explorer", f"/select,{file}"]]


def test_about_names_the_version_and_links_the_docs(qtbot, desk, layered_project):
    dialog = AboutDialog(layered_project, desk)
    qtbot.addWidget(dialog)
    assert dialog.text.text().startswith(f"memdesk {memdesk_version()}\n")
    assert f"Project: {layered_project}" in dialog.text.text()
    for title, rel in DOCS:
        assert doc_path(rel) is not None, rel
        assert title in dialog.links.text()


def test_help_opens_a_document(qtbot, desk):
    opened: list[QUrl] = []
    desk.desk.open_url = lambda url: opened.append(url) or True
    desk.actions_by_name["doc:1"].trigger()
    assert opened == [QUrl.fromLocalFile(str(doc_path("docs/servers.md")))]


def test_the_actions_are_listed(desk):
    rows = ShortcutsDialog(desk).rows
    assert ("File", "Reveal in file manager", "Alt+Shift+R") in rows
    assert ("File", "Copy path", "Alt+Shift+C") in rows


def test_memdesk_version_prints_the_version_without_a_display():
    out = subprocess.run([sys.executable, "-m", "gui.main", "--version"], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin"}, timeout=60, cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0 and out.stdout == f"memdesk {memdesk_version()}\n"
    assert memdesk_version() == "0.1.0"
