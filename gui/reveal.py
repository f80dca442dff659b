"""Reveal a file in the system's file manager, selected where the platform allows it.

macOS ``open -R``; Windows ``explorer /select,``; Linux the freedesktop ``FileManager1.ShowItems``
D-Bus call (Files, Dolphin, Nemo, Caja… answer it), else the folder opened with the default
handler. ``launch`` (a list of arguments → whether it started) is injectable for tests.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices

Launcher = Callable[[list[str]], bool]


def _spawn(args: list[str]) -> bool:
    try:
        subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    except OSError:
        return False
    return True


def reveal_commands(path: Path, platform: str | None = None) -> list[list[str]]:
    """The commands that would show ``path`` selected, in the order to try them."""
    platform = platform or sys.platform
    if platform == "darwin":
        return [["open", "-R", str(path)]]
    if platform.startswith("win"):
        return [["explorer", f"/select,{path}"]]
    uri = QUrl.fromLocalFile(str(path)).toString()
    commands = []
    if shutil.which("dbus-send"):
        commands.append(["dbus-send", "--session", "--dest=org.freedesktop.FileManager1", "--type=method_call",
                         "/org/freedesktop/FileManager1", "org.freedesktop.FileManager1.ShowItems",
                         f"array:string:{uri}", "string:"])
    return commands


def reveal(path: Path, launch: Launcher = _spawn, open_url: Callable[[QUrl], bool] = QDesktopServices.openUrl,
           platform: str | None = None) -> str:
    """Show ``path`` in the file manager; return what was done, for the status bar."""
    target = path if path.exists() else path.parent
    for command in reveal_commands(target, platform):
        if launch(command):
            return f"Shown in the file manager: {target}"
    folder = target if target.is_dir() else target.parent
    if open_url(QUrl.fromLocalFile(str(folder))):
        return f"Opened the folder {folder}"
    return f"Could not open a file manager; the file is {target}"
