"""The whole extraction flow in the app, against a loopback chat-completions server.

A provider in the user's config (``MEMDESK_CONFIG_DIR`` in tmp) points at ``tests/core/chat_server``;
the extraction dialog runs it off the GUI thread; the insights and prune views review the stored
proposal. Every bad reply says why and leaves memory.md and memory-insights.md byte-identical.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QThreadPool

from core.automation.extraction import run_extraction
from core.insights import (
    MEMORY_AUDIT_PATH,
    MEMORY_WORKING_PATH,
    parse_insights_markdown,
    read_insights_memory,
)
from core.proposals import list_proposals
from core.providers import OfflineProvider
from core.settings.user_config import set_provider
from core.storage.history import versions as history
from gui.proposal_text import STALE_BANNER
from gui.session import ProjectSession
from gui.views.insights_view import InsightsView
from gui.views.prune_view import PruneView
from gui.widgets.cron_preview import CronPreview
from gui.widgets.extraction_dialog import UNCHANGED, ExtractionDialog
from tests.core.chat_server import (
    API_KEY,
    API_KEY_ENV,
    BAD_PRUNE,
    EMPTY,
    GOOD,
    GOOD_REPLY,
    MALFORMED,
    NO_PRUNE,
    REPO,
    SERVER_ERROR,
    UNAUTHORIZED,
    Scripted,
    audit_state,
    slow,
    snapshot,
)


@dataclass
class App:
    """The pieces of the app the flow goes through, sharing one session (as the main window wires them)."""

    session: ProjectSession
    insights: InsightsView
    prune: PruneView
    dialog: ExtractionDialog
    messages: list[str]
    audits: list[int]


def add_provider(chat_server, name: str = "test-llm", timeout_s: float = 1.0) -> None:
    set_provider(name, {"kind": "openai", "baseUrl": chat_server.base_url, "model": "test-model",
                        "apiKeyEnv": API_KEY_ENV, "timeoutS": timeout_s})


@pytest.fixture
def app(qtbot, tidepool: Path, chat_server, monkeypatch) -> App:
    monkeypatch.setenv(API_KEY_ENV, API_KEY)
    add_provider(chat_server)
    session = ProjectSession(tidepool)
    session.load_pending_proposal()
    insights, prune, dialog = InsightsView(session), PruneView(session), ExtractionDialog(session)
    for widget in (insights, prune, dialog):
        qtbot.addWidget(widget)
        widget.show()
    insights.runExtractionRequested.connect(dialog.show)  # as the main window wires it
    dialog.select_provider("test-llm")
    messages: list[str] = []
    audits: list[int] = []
    session.statusMessage.connect(messages.append)
    session.auditChanged.connect(lambda: audits.append(1))
    yield App(session, insights, prune, dialog, messages, audits)
    dialog.cancel()
    qtbot.waitUntil(lambda: not dialog.running, timeout=10_000)
    QThreadPool.globalInstance().waitForDone(10_000)


def run_and_wait(qtbot, app: App) -> None:
    qtbot.mouseClick(app.dialog.run_button, Qt.MouseButton.LeftButton)
    assert app.dialog.running and not app.dialog.run_button.isEnabled() and app.dialog.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: not app.dialog.running, timeout=20_000)


def bullets(root: Path) -> int:
    return sum(len(s.bullets) for s in parse_insights_markdown(read_insights_memory(root)))


def test_run_review_accept_two_and_apply_the_prune(qtbot, app: App, tidepool: Path, chat_server) -> None:
    chat_server.script(GOOD)
    before, count = snapshot(tidepool), bullets(tidepool)
    qtbot.mouseClick(app.insights.proposals.run_button, Qt.MouseButton.LeftButton)  # opens the dialog
    assert app.dialog.isVisible()
    qtbot.mouseClick(app.dialog.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(app.insights.proposals.model.rows) == 5, timeout=20_000)
    assert not app.dialog.running
    done = "Extraction done: 5 insights proposed (1 already known), prune ready for review"
    assert done in app.messages and done in app.dialog.result.text()
    assert app.dialog.progress.value() == 100
    assert chat_server.requests[0].headers["Authorization"] == f"Bearer {API_KEY}"
    assert snapshot(tidepool) == before  # a run only proposes
    assert app.audits and "Prune awaiting review (proposal " in (tidepool / MEMORY_AUDIT_PATH).read_text()
    assert "test-llm" in app.insights.proposals.origin.text()

    panel = app.insights.proposals
    for row in (0, 1):
        panel.select_row(row)
        qtbot.mouseClick(panel.accept_button, Qt.MouseButton.LeftButton)
    for row in (2, 3, 4):
        panel.select_row(row)
        qtbot.mouseClick(panel.reject_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(panel.merge_button, Qt.MouseButton.LeftButton)
    assert bullets(tidepool) == count + 2
    assert snapshot(tidepool)["memory.md"] == before["memory.md"]

    qtbot.waitUntil(lambda: app.prune.preview is not None, timeout=10_000)
    assert app.prune.diff.result.removed > 0 and not app.prune.apply_button.isEnabled()  # none accepted yet
    app.prune.hunks.accept_all_action.trigger()  # Shift+A
    assert app.prune.apply_button.isEnabled()
    qtbot.mouseClick(app.prune.apply_button, Qt.MouseButton.LeftButton)
    memory = (tidepool / MEMORY_WORKING_PATH).read_text()
    assert memory == app.session.proposal.pruned_memory.strip() + "\n"
    [version] = history.list_versions(tidepool, MEMORY_WORKING_PATH)
    assert version.source == "prune" and history.get_version(tidepool, version.id)[1] == before["memory.md"].decode()
    assert list_proposals(tidepool) == []  # everything reviewed


@pytest.mark.parametrize(("scripted", "words"), [
    (MALFORMED, "is not the extraction JSON"),
    (EMPTY, "returned an empty reply"),
    (UNAUTHORIZED, "HTTP 401"),
    (SERVER_ERROR, "HTTP 500"),
    (slow(5), "within 1 s (timeout)"),
], ids=["malformed", "empty", "401", "500", "timeout"])
def test_a_bad_reply_says_why_and_changes_nothing_but_the_audit(qtbot, app: App, tidepool: Path, chat_server,
                                                                  scripted: Scripted, words: str) -> None:
    chat_server.script(scripted)
    before = snapshot(tidepool)
    run_and_wait(qtbot, app)
    text = app.dialog.result.text()
    assert "Extraction failed." in text and words in text and UNCHANGED in text
    assert app.dialog.result.kind == "error" and app.dialog.progress_label.text() == "Failed."
    assert snapshot(tidepool) == before
    assert list_proposals(tidepool, pending_only=False) == []
    assert audit_state(tidepool)["extraction"]["success"] is False and app.audits
    assert any(m.startswith("Extraction failed: ") for m in app.messages)
    assert app.session.proposal is None and len(app.insights.proposals.model.rows) == 0
    assert app.dialog.run_button.isEnabled() and not app.dialog.cancel_button.isEnabled()


def test_401_tells_which_key_to_check(qtbot, app: App, chat_server) -> None:
    chat_server.script(UNAUTHORIZED)
    run_and_wait(qtbot, app)
    text = app.dialog.result.text()
    assert f"refused the key in {API_KEY_ENV}" in text and "holds a valid API key" in text
    assert API_KEY not in text


def test_a_reply_without_a_prune_leaves_the_prune_view_empty(qtbot, app: App, tidepool: Path, chat_server) -> None:
    chat_server.script(NO_PRUNE)
    before = snapshot(tidepool)
    run_and_wait(qtbot, app)
    assert "no prune proposed" in app.dialog.result.text()
    assert len(app.insights.proposals.model.rows) == 5
    assert "There is no prune to review" in app.prune.diff.message.text()
    assert not app.prune.apply_button.isEnabled()
    assert snapshot(tidepool) == before


def test_a_prune_dropping_required_sections_cannot_be_applied(qtbot, app: App, tidepool: Path, chat_server) -> None:
    chat_server.script(BAD_PRUNE)
    before = snapshot(tidepool)
    run_and_wait(qtbot, app)
    assert "prune cannot be applied" in app.dialog.result.text()
    qtbot.waitUntil(lambda: app.prune.preview is not None, timeout=10_000)
    app.prune.hunks.accept_all_action.trigger()  # Shift+A: the prune as proposed
    assert not app.prune.apply_button.isEnabled()
    assert "Missing required sections" in app.prune.outcome_label.text()
    assert "✗ Architecture" in app.prune.sections_label.text()
    assert app.prune.apply() is None
    assert snapshot(tidepool) == before


def test_cancel_during_a_slow_reply_stores_nothing(qtbot, app: App, tidepool: Path, chat_server) -> None:
    add_provider(chat_server, "slow-llm", timeout_s=60)
    app.dialog.reload_providers()
    app.dialog.select_provider("slow-llm")
    chat_server.script(slow(30))
    before = snapshot(tidepool)
    qtbot.mouseClick(app.dialog.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(chat_server.requests), timeout=10_000)
    qtbot.mouseClick(app.dialog.cancel_button, Qt.MouseButton.LeftButton)
    assert app.dialog.progress_label.text() == "Cancelling…"
    qtbot.waitUntil(lambda: not app.dialog.running, timeout=10_000)
    assert app.dialog.progress_label.text() == "Cancelled."
    assert "nothing was stored" in app.dialog.result.text()
    assert app.dialog.run_button.isEnabled() and not app.dialog.cancel_button.isEnabled()
    assert app.dialog.provider_combo.isEnabled()
    assert list_proposals(tidepool, pending_only=False) == [] and snapshot(tidepool) == before
    assert audit_state(tidepool)["extraction"]["error"] == "cancelled by the operator"


def test_memory_appended_while_the_model_answers_makes_the_prune_stale(qtbot, app: App, tidepool: Path,
                                                                       chat_server) -> None:
    add_provider(chat_server, "slow-llm", timeout_s=60)
    app.dialog.reload_providers()
    app.dialog.select_provider("slow-llm")
    answer = threading.Event()
    chat_server.script(Scripted(GOOD_REPLY, hook=lambda: answer.wait(30)))
    qtbot.mouseClick(app.dialog.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(chat_server.requests), timeout=10_000)
    code = ("import sys; from core.entries import append_memory_entry; "
            "append_memory_entry(sys.argv[1], 'Appended by another agent while the model answered')")
    subprocess.run([sys.executable, "-c", code, str(tidepool)], cwd=REPO, check=True, timeout=60,
                   env={**os.environ, "PYTHONPATH": str(REPO)})
    answer.set()
    qtbot.waitUntil(lambda: not app.dialog.running, timeout=20_000)
    assert app.session.proposal.prune_status == "stale"
    assert "prune stale" in app.dialog.result.text()
    qtbot.waitUntil(lambda: app.prune.preview is not None, timeout=10_000)
    assert app.prune.banner.text() == STALE_BANNER
    assert not app.prune.apply_button.isEnabled() and app.prune.apply() is None
    assert "Appended by another agent" in (tidepool / MEMORY_WORKING_PATH).read_text()
    assert len(app.insights.proposals.model.rows) == 5  # the insights can still be reviewed


def test_a_proposal_stored_by_the_cli_is_shown_when_the_project_opens(qtbot, tidepool: Path) -> None:
    run = run_extraction(tidepool, OfflineProvider("offline"))
    assert run.ok and run.proposal_id
    session = ProjectSession(tidepool)
    assert session.load_pending_proposal().id == run.proposal_id
    insights, prune = InsightsView(session), PruneView(session)
    qtbot.addWidget(insights)
    qtbot.addWidget(prune)
    assert "offline" in insights.proposals.origin.text()
    assert len(insights.proposals.model.rows) == len(session.proposal.insights)
    assert prune.proposal is session.proposal
    QThreadPool.globalInstance().waitForDone(10_000)


def test_the_schedule_preview_says_it_is_utc(qtbot) -> None:
    preview = CronPreview()
    qtbot.addWidget(preview)
    assert preview.set_expression("0 2 * * *") is None
    assert preview.text().startswith("Next runs (the schedule is evaluated in UTC): ")


def test_screenshot_of_the_dialog_mid_run(qtbot, app: App, chat_server) -> None:
    from gui.resources import read_text

    chat_server.script(slow(30))
    add_provider(chat_server, "slow-llm", timeout_s=60)
    app.dialog.reload_providers()
    app.dialog.select_provider("slow-llm")
    qtbot.mouseClick(app.dialog.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Waiting for test-model (1 s)" in app.dialog.progress_label.text(), timeout=10_000)
    app.dialog.setStyleSheet(read_text("style.qss"))
    qtbot.wait(100)
    image = app.dialog.grab()
    assert not image.isNull()
    folder = os.environ.get("MEMDESK_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        assert image.save(str(Path(folder) / "extraction.png"))
    qtbot.mouseClick(app.dialog.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not app.dialog.running, timeout=10_000)


def test_closing_the_dialog_cancels_the_run_which_still_reports(qtbot, app: App, tidepool: Path,
                                                                 chat_server) -> None:
    chat_server.script(slow(30))
    qtbot.mouseClick(app.dialog.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(chat_server.requests), timeout=10_000)
    app.dialog.close()
    qtbot.waitUntil(lambda: not app.dialog.running, timeout=10_000)
    assert app.messages[-1] == "Extraction cancelled; nothing was stored"
    assert list_proposals(tidepool, pending_only=False) == [] and app.audits


def test_the_main_window_wires_the_flow(qtbot, tidepool: Path, tmp_path: Path) -> None:
    from PySide6.QtCore import QSettings
    from PySide6.QtGui import QKeySequence

    from gui.main_window import MainWindow
    from gui.recent import RecentProjects

    stored = run_extraction(tidepool, OfflineProvider("offline"))  # as `memdesk extract` would
    window = MainWindow(tidepool, recent=RecentProjects(QSettings(str(tmp_path / "r.ini"), QSettings.Format.IniFormat)))
    window.confirm_discard = lambda: "discard"
    qtbot.addWidget(window)
    window.show()
    assert window.session.proposal.id == stored.proposal_id
    insights = window.show_view("insights")
    assert "offline" in insights.proposals.origin.text()
    action = window.actions_by_name["run_extraction"]
    assert action.shortcut() == QKeySequence("Ctrl+Shift+E") and action.text() == "Run &extraction…"
    action.trigger()
    dialog = window.dialogs().extraction
    assert dialog is not None and dialog.isVisible() and dialog.selected_provider() == "offline"
    dialog.hide()
    qtbot.mouseClick(insights.proposals.run_button, Qt.MouseButton.LeftButton)
    assert dialog.isVisible()
    qtbot.mouseClick(dialog.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.running, timeout=20_000)
    assert window.session.proposal.id != stored.proposal_id  # the new run is under review
    assert insights.proposals.picker.isVisible()  # and the CLI's one is still pending
    dialog.hide()
    window.actions_by_name["providers"].trigger()
    providers = window.dialogs().providers
    assert providers is not None and providers.isVisible()
    providers.hide()
    window.close()
    QThreadPool.globalInstance().waitForDone(10_000)
