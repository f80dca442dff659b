"""The consolidation review in the app: run a dream with progress, review change by change, apply or refuse."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QThreadPool

from core.consolidation import list_consolidations, run_dream
from core.project import Project
from core.providers import OpenAIProvider
from gui.session import ProjectSession
from gui.views.consolidation_view import ConsolidationView
from tests.core.chat_server import Scripted

MEM = ".fusion/memory"


@pytest.fixture
def layered(layered_project: Path, user_config_dir: Path) -> Path:
    for path in layered_project.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return layered_project


@pytest.fixture
def view(qtbot, layered):
    session = ProjectSession(layered)
    widget = ConsolidationView(session)
    qtbot.addWidget(widget)
    widget.resize(1400, 800)
    widget.show()
    yield widget
    QThreadPool.globalInstance().waitForDone(10_000)
    session.close()


def test_dream_now_with_progress_then_apply_with_ctrl_return(qtbot, view, layered):
    assert "No dream or compaction waits for review" in view.diff.message.text()
    qtbot.mouseClick(view.dream_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.proposal is not None, timeout=20_000)
    assert view.changes.list.count() == 3 and "Nothing would be lost" in view.facts.title.text()
    assert "carried forward" in view.ledger.list.item(0).text()
    assert view.apply_button.isEnabled()
    qtbot.keyClick(view, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert "applied" in view.outcome.text()
    assert "Processed into dreams on" in (layered / MEM / "2026-08-19.md").read_text()
    assert view.proposal.status == "applied" and not view.apply_button.isEnabled()


def test_a_lossy_reply_shows_each_lost_fact_and_needs_consent(qtbot, layered, chat_server, user_config_dir):
    chat_server.script(Scripted("## DREAMS\n\n- Polling hooks keep `loading` for the first fetch (FN-1734).\n"),
                       Scripted("## DREAMS\n\n- Project switches reset tasks (FN-1657).\n"))
    run_dream(Project(layered), OpenAIProvider("m", chat_server.base_url, "m"), now=datetime(2026, 8, 21, tzinfo=UTC))
    session = ProjectSession(layered)
    view = ConsolidationView(session)
    qtbot.addWidget(view)
    view.show()
    before = (layered / MEM / "2026-08-19.md").read_bytes()
    lost = len(view.proposal.lost_facts)
    assert lost > 3 and f"{lost} facts would be lost" in view.facts.title.text()
    shown = [view.facts.list.item(i).text() for i in range(view.facts.list.count())]
    assert any("packages/dashboard/app/hooks/useProjectHealth.ts" in s and "2026-08-19.md:13" in s for s in shown)
    assert not view.apply_button.isEnabled() and view.allow_loss.isVisible()
    qtbot.keyClick(view, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert (layered / MEM / "2026-08-19.md").read_bytes() == before
    # Keeping only the DREAMS.md change loses nothing: the daily notes stay as they are.
    view.changes.list.setFocus()
    for row in range(view.changes.list.count()):
        view.changes.list.setCurrentRow(row)
        if not view.changes.list.item(row).text().split(" · ")[1].startswith("DREAMS"):
            qtbot.keyClick(view.changes.list, Qt.Key.Key_Space)
    assert "Nothing would be lost with the accepted changes" in view.facts.title.text()
    assert view.apply_button.isEnabled() and view.apply_button.text() == "Apply 1 of 3 changes"
    view.apply()
    assert (layered / MEM / "2026-08-19.md").read_bytes() == before
    assert "## 2026-08-19" in (layered / MEM / "DREAMS.md").read_text()
    assert list_consolidations(layered, pending_only=False)[0].status == "partly-applied"
    QThreadPool.globalInstance().waitForDone(10_000)
    session.close()


def test_cancel_stages_nothing(qtbot, view, layered, chat_server, monkeypatch):
    from tests.core.chat_server import slow

    chat_server.script(slow(5.0))
    monkeypatch.setattr(view, "_provider", lambda: OpenAIProvider("m", chat_server.base_url, "m"))
    before = {p: p.read_bytes() for p in (layered / MEM).iterdir()}
    view.dream()
    qtbot.waitUntil(view.cancel_button.isVisible, timeout=5_000)
    qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
    assert "Cancelled" in view.outcome.text() and not view.cancel_button.isVisible()
    QThreadPool.globalInstance().waitForDone(10_000)
    assert list_consolidations(layered) == []
    assert {p: p.read_bytes() for p in (layered / MEM).iterdir()} == before


def test_another_programs_run_is_shown_with_its_losses_and_undone(qtbot, layered):
    from tests.core.consolidation.test_consolidation_programs import fusion_dream_by_hand

    before = fusion_dream_by_hand(layered)
    session = ProjectSession(layered)
    view = ConsolidationView(session)
    qtbot.addWidget(view)
    view.resize(1400, 800)
    view.show()
    labels = [view.picker.itemText(i) for i in range(view.picker.count())]
    row = next(i for i, text in enumerate(labels) if "2 documents rewritten at" in text)
    view.picker.setCurrentIndex(row)
    assert "facts were lost" in view.facts.title.text() and not view.apply_button.isEnabled()
    assert view.stage_button.isVisible() and view.stage_button.text() == "Undo this run…"
    qtbot.mouseClick(view.stage_button, Qt.MouseButton.LeftButton)
    assert view.proposal.summary.startswith("Undo: 2 documents rewritten")
    view.allow_loss.setChecked(True)  # undoing loses what the run added to DREAMS.md: shown, consented
    assert view.apply_button.isEnabled(), (view.apply_button.toolTip(), view.outcome.text(), view.banner.text())
    qtbot.mouseClick(view.apply_button, Qt.MouseButton.LeftButton)
    assert "applied" in view.outcome.text(), (view.outcome.text(), view.banner.text())
    assert (layered / MEM / "2026-08-19.md").read_bytes() == before["2026-08-19.md"]
    assert (layered / MEM / "DREAMS.md").read_bytes() == before["DREAMS.md"]
    QThreadPool.globalInstance().waitForDone(10_000)
    session.close()


def test_the_app_runs_fusions_dream_schedule_unattended(qtbot, layered):
    import json

    from core.consolidation.policy import Policy, save_policy
    from gui.consolidation_timer import ConsolidationTimer

    config = layered / ".fusion/config.json"
    data = json.loads(config.read_text())
    data["settings"].update({"memoryDreamsEnabled": True, "memoryDreamsSchedule": "* * * * *"})
    config.write_text(json.dumps(data))
    (layered / ".fusion/memdesk").mkdir(exist_ok=True)
    (layered / ".fusion/memdesk/consolidation-state.json").write_text('{"dream": "2026-01-01T00:00:00.000Z"}')
    save_policy(layered, Policy(unattended=True, max_change_bytes=1_000_000))
    session = ProjectSession(layered)
    messages: list[str] = []
    session.statusMessage.connect(messages.append)
    timer = ConsolidationTimer(session, interval_ms=3_600_000)
    timer.tick()
    qtbot.waitUntil(lambda: timer.operation is None and bool(messages), timeout=20_000)
    assert any("Applied unattended" in m for m in messages), messages
    assert "Processed into dreams on" in (layered / MEM / "2026-08-19.md").read_text()
    timer.stop()
    QThreadPool.globalInstance().waitForDone(10_000)
    session.close()


def test_the_unattended_box_is_memdesks_own_setting(qtbot, view, layered):
    import json

    assert not view.unattended.isChecked()
    qtbot.mouseClick(view.unattended, Qt.MouseButton.LeftButton)
    assert json.loads((layered / ".fusion/memdesk/consolidation.json").read_text())["unattended"] is True
    assert "memoryDreams" not in (layered / ".fusion/config.json").read_text()  # never Fusion's store
