"""Light and dark: the system's scheme followed, the View ▸ Theme choice applied and remembered."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt, QThreadPool
from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from gui.main_window import MainWindow
from gui.recent import RecentProjects
from gui.theme import ThemeManager
from gui.widgets.colors import is_dark


@pytest.fixture
def restore_app(qapp):
    """Put the application's palette and stylesheet back as they were."""
    palette, sheet = QApplication.palette(), qapp.styleSheet()
    yield qapp
    QGuiApplication.styleHints().unsetColorScheme()
    qapp.setPalette(palette)
    qapp.setStyleSheet(sheet)


def _window_colour() -> str:
    return QApplication.palette().color(QPalette.ColorRole.Window).name()


def test_dark_is_applied_and_remembered(restore_app, tmp_path: Path) -> None:
    ini = QSettings(str(tmp_path / "theme.ini"), QSettings.Format.IniFormat)
    theme = ThemeManager(ini, system_scheme=lambda: Qt.ColorScheme.Light)
    seen: list[bool] = []
    theme.changed.connect(seen.append)
    assert theme.mode == "system" and not theme.apply()
    theme.set_mode("dark")
    assert seen == [False, True] and is_dark() and _window_colour() == "#1f2328"
    assert "#memoryText { background: #161a1f" in restore_app.styleSheet().replace("QPlainTextEdit", "")
    again = ThemeManager(QSettings(str(tmp_path / "theme.ini"), QSettings.Format.IniFormat))
    assert again.mode == "dark"  # read back from the settings file
    theme.set_mode("light")
    assert not is_dark() and seen[-1] is False
    with pytest.raises(ValueError, match="unknown theme"):
        theme.set_mode("purple")


def test_system_mode_follows_the_desktop(restore_app) -> None:
    scheme = {"now": Qt.ColorScheme.Light}
    theme = ThemeManager(persist=False, system_scheme=lambda: scheme["now"])
    assert theme.apply() is False
    scheme["now"] = Qt.ColorScheme.Dark
    QGuiApplication.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Dark)  # the desktop switched
    assert theme.dark is True and is_dark()
    theme.set_mode("light", remember=False)
    QGuiApplication.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    assert theme.dark is False  # an explicit choice wins over the desktop


def test_view_menu_switches_the_editor_to_dark(qtbot, restore_app, tmp_path: Path, sample_project: Path) -> None:
    theme = ThemeManager(QSettings(str(tmp_path / "t.ini"), QSettings.Format.IniFormat),
                         system_scheme=lambda: Qt.ColorScheme.Light)
    window = MainWindow(sample_project, recent=RecentProjects(persist=False), theme=theme)
    window.confirm_discard = lambda: "discard"
    qtbot.addWidget(window)
    window.show()
    editor = window.editor
    assert window.actions_by_name["theme:system"].isChecked()
    light_heading = editor.highlighter.heading.foreground().color().name()
    window.actions_by_name["theme:dark"].trigger()
    assert window.actions_by_name["theme:dark"].isChecked()
    assert editor.highlighter.dark and editor.highlighter.heading.foreground().color().name() == "#79b8ff"
    assert light_heading != "#79b8ff"
    heading = editor.text_edit.document().findBlockByNumber(0)
    editor.buffer.format_visible()
    assert heading.layout().formats()[0].format.foreground().color().name() == "#79b8ff"  # recoloured
    editor.preview.render_now()
    assert "color:#79b8ff" in editor.preview.browser.toHtml()  # preview-dark.css
    background = editor.text_edit.grab().toImage().pixelColor(editor.text_edit.width() - 40, 10)
    assert background.lightness() < 60
    window.close()
    QThreadPool.globalInstance().waitForDone(5000)
