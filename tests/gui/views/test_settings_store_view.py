"""Settings where the agents read them (issue 18), driven as an operator would: the store named in the
Settings view and the status bar, memory switched off by keyboard landing in Fusion's own row, a change
made by Fusion showing in the open window within 2 s (editor read-only, status bar, next runs), and two
writers never silently overwriting each other.

Fusion's side is its SQL as read in its code (Runfusion/Fusion ``packages/core/src/store.ts`` ``readConfig``
/ ``writeConfig``, ``packages/core/src/db.ts`` ``bumpLastModified``; fixture made at ``4579e38bd``).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import stat
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt, QThreadPool
from PySide6.QtWidgets import QApplication

from gui.main_window import MainWindow
from gui.recent import RecentProjects

REPO = Path(__file__).resolve().parents[3]
SEED_DB = REPO / "tests" / "data" / "fusion-seed-db"
REAL_MEMORY = REPO / "tests" / "data" / "fusion-real" / ".fusion" / "memory.md"
DB = ".fusion/fusion.db"


@pytest.fixture
def seed(tmp_path: Path, user_config_dir: Path) -> Path:
    root = tmp_path / "seed"
    shutil.copytree(SEED_DB, root)
    for path in [root, *root.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    shutil.copy(REAL_MEMORY, root / ".fusion" / "memory.md")
    return root


@pytest.fixture
def window(qtbot, tmp_path: Path):
    made: list[MainWindow] = []

    def make(root: Path) -> MainWindow:
        win = MainWindow(root, recent=RecentProjects(QSettings(str(tmp_path / "r.ini"), QSettings.Format.IniFormat)))
        win.confirm_discard = lambda: "discard"  # type: ignore[assignment]
        qtbot.addWidget(win)
        win.resize(1400, 900)
        win.show()
        made.append(win)
        return win

    yield make
    for win in made:
        win.close()
    QThreadPool.globalInstance().waitForDone(5000)


def fusion_settings(root: Path) -> dict:
    """Fusion's ``readConfig``: ``SELECT * FROM config WHERE id = 1``, ``settings`` parsed."""
    conn = sqlite3.connect(root / DB)
    try:
        return json.loads(conn.execute("SELECT * FROM config WHERE id = 1").fetchone()[3])
    finally:
        conn.close()


def fusion_writes(root: Path, patch: dict) -> None:
    """Fusion's ``updateSettings`` → ``writeConfig`` (INSERT OR REPLACE) → ``bumpLastModified``."""
    conn = sqlite3.connect(root / DB, isolation_level=None, timeout=5)
    try:
        row = conn.execute("SELECT nextId, nextWorkflowStepId, settings, workflowSteps FROM config WHERE id = 1").fetchone()
        settings = {**json.loads(row[2]), **patch}
        conn.execute("INSERT OR REPLACE INTO config (id, nextId, nextWorkflowStepId, settings, workflowSteps, updatedAt) "
                     "VALUES (1, ?, ?, ?, ?, ?)", (row[0], row[1], json.dumps(settings, separators=(",", ":")), row[3],
                                                   "2026-12-01T10:00:00.000Z"))
        current = int(conn.execute("SELECT value FROM __meta WHERE key = 'lastModified'").fetchone()[0])
        conn.execute("UPDATE __meta SET value = ? WHERE key = 'lastModified'",
                     (str(max(int(time.time() * 1000), current + 1)),))
    finally:
        conn.close()


def test_the_settings_view_and_status_bar_name_fusions_database(qtbot, window, seed: Path):
    win = window(seed)
    view = win.show_view("settings")
    assert "Fusion's settings live in <b>Fusion's database .fusion/fusion.db</b>" in view.heading.text()
    assert ".fusion/memdesk/settings.json" in view.heading.text()
    assert win.status.store_label.toolTip().startswith("Fusion's settings of this project live in Fusion's database")
    assert "Settings: Fusion's database .fusion/fusion.db" in win.status.store_label._full
    assert list(view.form.groups) == ["Memory", "Insights", "Dreams", "Auto-summarize", "Backups", "Agents",
                                      "History (memdesk's own)"]
    assert view.form.editor("insightExtractionSchedule").value() == "30 3 * * 1-5"
    assert set(view.cron_previews) == {"insightExtractionSchedule", "memoryDreamsSchedule",
                                       "memoryAutoSummarizeSchedule", "memoryBackupSchedule"}


def test_switching_memory_off_by_keyboard_is_what_fusion_reads(qtbot, window, seed: Path):
    win = window(seed)
    view = win.show_view("settings")
    win.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is win)
    box = view.form.editor("memoryEnabled").box
    box.setFocus()
    qtbot.keyClick(box, Qt.Key.Key_Space)
    qtbot.keyClick(box, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert fusion_settings(seed)["memoryEnabled"] is False
    assert fusion_settings(seed)["taskPrefix"] == "FN"
    assert view.status.text() == "Saved memoryEnabled to Fusion's database .fusion/fusion.db."
    assert win.status.memory_label.text() == "Memory off"
    assert win.editor.text_edit.isReadOnly()


def test_a_change_fusion_makes_shows_within_two_seconds_everywhere(qtbot, window, seed: Path):
    win = window(seed)
    view = win.show_view("settings")
    assert not win.editor.text_edit.isReadOnly()
    fusion_writes(seed, {"memoryEnabled": False, "insightExtractionSchedule": "45 6 * * *"})
    started = time.monotonic()
    qtbot.waitUntil(lambda: win.status.memory_label.text() == "Memory off", timeout=2000)
    qtbot.waitUntil(lambda: win.editor.text_edit.isReadOnly(), timeout=2000)
    assert time.monotonic() - started < 2.5
    assert "switched off" in win.editor.read_only_banner.text()
    assert view.form.editor("memoryEnabled").value() is False
    assert view.form.editor("insightExtractionSchedule").value() == "45 6 * * *"
    assert view.cron_preview.text().count("06:45 UTC") == 3  # the schedule's next runs follow
    fusion_writes(seed, {"memoryEnabled": True})
    qtbot.waitUntil(lambda: not win.editor.text_edit.isReadOnly(), timeout=2000)
    assert win.status.memory_label.text() == "Memory on"


def test_a_stale_apply_takes_fresh_values_for_other_keys_and_is_a_conflict_for_the_same_key(qtbot, window, seed: Path):
    win = window(seed)
    win.session._settings_watch.stop()  # the operator's form stays on the values it loaded
    view = win.show_view("settings")
    view.form.editor("memoryDreamsEnabled").box.click()
    fusion_writes(seed, {"maxConcurrent": 5, "memoryBackupEnabled": True})  # other keys moved elsewhere
    qtbot.mouseClick(view.apply_button, Qt.MouseButton.LeftButton)
    row = fusion_settings(seed)
    assert row["memoryDreamsEnabled"] is True and row["memoryBackupEnabled"] is True and row["maxConcurrent"] == 5
    line = view.form.editor("insightExtractionSchedule").line
    line.selectAll()
    qtbot.keyClicks(line, "0 1 * * *")
    fusion_writes(seed, {"insightExtractionSchedule": "0 9 * * *"})  # the same key moved elsewhere
    qtbot.mouseClick(view.apply_button, Qt.MouseButton.LeftButton)
    assert fusion_settings(seed)["insightExtractionSchedule"] == "0 9 * * *"  # not silently overwritten
    assert "changed elsewhere" in view.form.field_error("insightExtractionSchedule")
    assert "Not saved" in view.status.text()


def test_fusion_stopped_makes_fusions_fields_read_only_with_the_reason(qtbot, window, tmp_path: Path,
                                                                       user_config_dir: Path):
    from core.settings.store.connections import save_connection

    root = tmp_path / "current"
    shutil.copytree(REPO / "tests" / "data" / "fusion-layered", root)
    save_connection(root, "http://127.0.0.1:9", "token")  # the discard port: nothing answers
    win = window(root)
    view = win.show_view("settings")
    assert "Fusion's settings are read-only here" in view.banner.text()
    assert "start Fusion to change its settings" in view.banner.text()
    assert not view.form.editor("memoryEnabled").isEnabled()
    assert view.form.editor("historyRetentionDays").isEnabled()  # memdesk's own stay editable
    assert win.status.store_label._full.startswith("🔒 Settings: Fusion, not running")


def test_screenshot_of_the_settings_view_naming_its_store(qtbot, window, seed: Path, screenshot):
    win = window(seed)
    win.show_view("settings")
    win.resize(1280, 860)
    screenshot(win, "settings-store")


def test_a_running_fusion_refusal_is_shown_at_its_field_and_its_changes_show_live(qtbot, window, tmp_path: Path,
                                                                                  user_config_dir: Path, monkeypatch):
    from core.settings.store.connections import save_connection
    from tests.core import fusion_contract_server as srv

    root = tmp_path / "current"
    shutil.copytree(REPO / "tests" / "data" / "fusion-layered", root)
    running = srv.start_fusion(srv.FusionState())
    try:
        running.state.projects["proj_1"] = {"path": str(root.resolve()), "settings": {"memoryEnabled": True}}
        save_connection(root, running.url, running.state.token)
        win = window(root)
        view = win.show_view("settings")
        assert f"Fusion, running, at {running.url}" in view.heading.text()
        # A value memdesk's model accepts but this Fusion refuses: Fusion's own message, at the field.
        monkeypatch.setattr(srv, "GLOBAL_ONLY", frozenset({*srv.GLOBAL_ONLY, "memoryBackupScope"}))
        editor = view.form.editor("memoryBackupScope")
        editor.set_value("agents")
        editor.changed.emit()
        qtbot.mouseClick(view.apply_button, Qt.MouseButton.LeftButton)
        assert view.status.text() == f"Saving to Fusion, running, at {running.url}…"  # off the GUI thread
        qtbot.waitUntil(lambda: view.status.text().startswith("Not saved"), timeout=5000)
        assert "Cannot update global settings via this endpoint" in view.form.field_error("memoryBackupScope")
        assert "memoryBackupScope" not in running.state.projects["proj_1"]["settings"]
        view.revert()
        # Switching memory off in the app is one minimal PUT that Fusion records.
        running.state.requests.clear()
        view.form.editor("memoryEnabled").box.click()
        qtbot.mouseClick(view.apply_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: view.status.text().startswith("Saved"), timeout=5000)
        assert [(p, b) for m, p, b in running.state.requests if m == "PUT"] == [("/api/settings", {"memoryEnabled": False})]
        assert running.state.projects["proj_1"]["settings"]["memoryEnabled"] is False
        assert view.status.text() == f"Saved memoryEnabled to Fusion, running, at {running.url}."
        assert win.editor.text_edit.isReadOnly()
        # Fusion's dashboard switches it back on: the open window follows within 2 s.
        running.state.projects["proj_1"]["settings"]["memoryEnabled"] = True
        qtbot.waitUntil(lambda: not win.editor.text_edit.isReadOnly(), timeout=2000)
        assert win.status.memory_label.text() == "Memory on"
        assert view.form.editor("memoryEnabled").value() is True
        assert not (root / ".fusion" / "memdesk").exists()  # nothing of memdesk's written into the project
    finally:
        running.stop()


def test_connect_to_fusion_from_the_app(qtbot, window, tmp_path: Path, user_config_dir: Path):
    from tests.core import fusion_contract_server as srv

    root = tmp_path / "current"
    shutil.copytree(REPO / "tests" / "data" / "fusion-layered", root)
    running = srv.start_fusion(srv.FusionState())
    try:
        running.state.projects["proj_1"] = {"path": str(root.resolve()), "settings": {"memoryEnabled": False}}
        win = window(root)
        view = win.show_view("settings")
        assert "`.fusion/config.json` (no Fusion store found)".replace("`", "") in view.heading.text()
        dialog = view.open_connect()
        qtbot.keyClicks(dialog.url, running.url)
        qtbot.keyClicks(dialog.token, "wrong")
        qtbot.mouseClick(dialog.connect_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: dialog.connect_button.isEnabled(), timeout=5000)
        assert "refused memdesk's token" in dialog.message.text()
        assert not (user_config_dir / "fusion.json").exists()
        dialog.token.clear()
        qtbot.keyClicks(dialog.token, running.state.token)
        qtbot.mouseClick(dialog.connect_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: f"Fusion, running, at {running.url}" in view.heading.text(), timeout=5000)
        assert win.editor.text_edit.isReadOnly()  # Fusion says memory is off for this project
        assert json.loads((user_config_dir / "fusion.json").read_text())["projects"][str(root.resolve())]["url"] \
            == running.url
    finally:
        running.stop()
