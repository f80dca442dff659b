"""File ▸ New document… (Ctrl+N) creates a daily note, an agent's memory or DREAMS.md with Fusion's scaffolds."""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog

from core.documents.layout import (
    AGENT_DREAMS_SCAFFOLD,
    AGENT_LONG_TERM_SCAFFOLD,
    agent_daily_scaffold,
    daily_scaffold,
)
from gui.widgets.new_document_dialog import NewDocumentDialog
from gui.widgets.shortcuts_dialog import ShortcutsDialog
from tests.gui.desk_window import CTRL

# Fusion's agent scaffolds, as its ensureAgentMemoryFiles writes them (Runfusion/Fusion, packages/core,
# agent memory bootstrap): title, the comment, then the (empty) seed memory and a newline.
FUSION_AGENT_MEMORY = "# Agent Memory\n\n<!-- Per-agent memory. Keep separate from workspace Project Memory. -->\n\n\n"


def _drive(qtbot, steps):
    """An ask_new_document that shows the dialog, runs ``steps(dialog)`` with key events, and presses Enter."""
    seen: list[NewDocumentDialog] = []
    labels: list[str] = []

    def ask(dialog: QDialog) -> bool:
        assert isinstance(dialog, NewDocumentDialog)
        seen.append(dialog)
        dialog.show()
        steps(dialog)
        qtbot.keyClick(dialog.owner, Qt.Key.Key_Return)
        labels.append(dialog.path_label.text())  # as shown when accepted (the dialog is deleted after use)
        return dialog.result() == QDialog.DialogCode.Accepted

    ask.labels = labels  # type: ignore[attr-defined]
    return ask, seen


def _choose_owner(qtbot, dialog, text: str) -> None:
    edit = dialog.owner.lineEdit()
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Delete)
    qtbot.keyClicks(edit, text)


def test_ctrl_n_then_enter_creates_todays_daily_note_and_lists_it(qtbot, desk, layered_project):
    today = datetime.now(UTC).date().isoformat()
    path = f".fusion/memory/{today}.md"
    ask, seen = _drive(qtbot, lambda d: None)
    desk.desk.ask_new_document = ask
    qtbot.keyClick(desk.editor.text_edit, Qt.Key.Key_N, CTRL)
    assert seen and ask.labels[0].startswith(f"{path}\nNew: created with Fusion's scaffold")
    assert (layered_project / path).read_text(encoding="utf-8") == daily_scaffold(today)
    assert desk.session.current_path == path and path in desk.picker.paths()
    assert desk.editor.text_edit.toPlainText() == daily_scaffold(today)
    assert desk.status.currentMessage() == f"Created {path}"


def test_a_new_agents_memory_gets_fusions_agent_scaffold(qtbot, desk, layered_project):
    def steps(dialog):
        qtbot.keyClick(dialog.kind, Qt.Key.Key_Down)  # Long-term memory (MEMORY.md)
        _choose_owner(qtbot, dialog, "planner")
        assert dialog.path_label.text().startswith(".fusion/agent-memory/planner/MEMORY.md\nNew:")

    desk.desk.ask_new_document, _ = _drive(qtbot, steps)
    assert desk.desk.new_document() == ".fusion/agent-memory/planner/MEMORY.md"
    written = (layered_project / ".fusion/agent-memory/planner/MEMORY.md").read_bytes()
    assert written == FUSION_AGENT_MEMORY.encode() == AGENT_LONG_TERM_SCAFFOLD.encode()
    assert ".fusion/agent-memory/planner/MEMORY.md" in desk.picker.paths()


def test_an_agents_daily_note_and_dreams(qtbot, desk, layered_project):
    def daily(dialog):
        _choose_owner(qtbot, dialog, "reviewer")

    desk.desk.ask_new_document, _ = _drive(qtbot, daily)
    path = desk.desk.new_document()
    today = datetime.now(UTC).date().isoformat()
    assert path == f".fusion/agent-memory/reviewer/{today}.md"
    assert (layered_project / path).read_text(encoding="utf-8") == agent_daily_scaffold(today)
    assert agent_daily_scaffold(today) == f"# Agent Daily Memory {today}\n\n<!-- Running observations for this agent. -->\n"

    def dreams(dialog):
        qtbot.keyClick(dialog.kind, Qt.Key.Key_End)  # Dreams (DREAMS.md)
        _choose_owner(qtbot, dialog, "reviewer")

    desk.desk.ask_new_document, _ = _drive(qtbot, dreams)
    assert desk.desk.new_document() == ".fusion/agent-memory/reviewer/DREAMS.md"
    assert (layered_project / ".fusion/agent-memory/reviewer/DREAMS.md").read_text() == AGENT_DREAMS_SCAFFOLD


def test_an_existing_document_is_opened_never_rewritten(qtbot, desk, layered_project):
    before = (layered_project / ".fusion/memory/DREAMS.md").read_bytes()

    def steps(dialog):
        qtbot.keyClick(dialog.kind, Qt.Key.Key_End)
        assert dialog.path_label.text() == ".fusion/memory/DREAMS.md\nIt exists already: Open shows it."
        assert dialog.create_button.text() == "Open"

    desk.desk.ask_new_document, _ = _drive(qtbot, steps)
    assert desk.desk.new_document() == ".fusion/memory/DREAMS.md"
    assert (layered_project / ".fusion/memory/DREAMS.md").read_bytes() == before
    assert desk.session.current_path == ".fusion/memory/DREAMS.md"
    assert desk.status.currentMessage() == "Opened .fusion/memory/DREAMS.md (it existed already)"


def test_a_bad_agent_id_is_said_and_nothing_is_written(qtbot, desk, layered_project):
    listing = sorted(p.relative_to(layered_project) for p in layered_project.rglob("*"))

    def steps(dialog):
        _choose_owner(qtbot, dialog, "x" * 130)
        assert "the limit is 128" in dialog.path_label.text()
        assert not dialog.create_button.isEnabled()

    desk.desk.ask_new_document, _ = _drive(qtbot, steps)
    assert desk.desk.new_document() is None
    assert sorted(p.relative_to(layered_project) for p in layered_project.rglob("*")) == listing


def test_the_seed_layout_says_it_has_one_document(qtbot, desk, sample_project):
    desk.open_project(sample_project)
    seen_text: list[str] = []

    def steps(dialog):
        seen_text.append(dialog.path_label.text())

    desk.desk.ask_new_document, _ = _drive(qtbot, steps)
    assert desk.desk.new_document() is None
    assert seen_text[0].startswith("This project is in the seed layout")


def test_new_document_is_listed_in_the_shortcuts(desk):
    assert ("File", "New document", "Ctrl+N") in ShortcutsDialog(desk).rows
