"""``run_scheduled``: runs only when the cron and ``should_trigger_extraction`` agree; prunes only if opted in."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta

import pytest

from core.automation.schedule import SCHEDULE_STATE_PATH, read_schedule_state, run_scheduled
from core.insights import AUTOMATIONS_PATH, INSIGHT_EXTRACTION_SCHEDULE_NAME, read_automations
from core.proposals import list_proposals, load_proposal
from core.providers import OpenAIProvider
from core.settings import update_settings
from core.settings.user_config import UserConfig, set_auto_apply_prune
from core.storage import fileio
from tests.core.chat_server import (
    SERVER_ERROR,
    audit_state,
    snapshot,
)

# The sample schedule is "0 2 * * *" (UTC) with a one-day minimum interval.
FIRST = datetime(2026, 12, 1, 2, 5, tzinfo=UTC)


def grow(root, chars: int = 1200) -> None:
    path = root / ".fusion" / "memory.md"
    path.write_text(path.read_text() + "\n- Durable note " + "x" * chars + "\n")


def test_disabled_project_runs_nothing(tidepool):
    update_settings(tidepool, {"insightExtractionEnabled": False})
    before = snapshot(tidepool)
    outcome = run_scheduled(tidepool, now=FIRST)
    assert outcome.status == "disabled" and "insightExtractionEnabled" in outcome.message
    assert snapshot(tidepool) == before and list_proposals(tidepool) == []
    assert not (tidepool / SCHEDULE_STATE_PATH).exists()


def test_first_run_then_cron_and_growth_decide(tidepool):
    before = snapshot(tidepool)
    outcome = run_scheduled(tidepool, now=FIRST)
    assert outcome.status == "ran", outcome.message
    assert "the prune waits for review (autoApplyPrune is off)" in outcome.message
    assert snapshot(tidepool) == before  # nothing applied unattended
    proposal = load_proposal(tidepool, outcome.run.proposal_id)
    assert proposal.origin == "scheduled" and proposal.provider == "offline"
    assert proposal.prune_status == "pending"
    [record] = read_automations(tidepool)
    assert record["name"] == INSIGHT_EXTRACTION_SCHEDULE_NAME and record["cronExpression"] == "0 2 * * *"
    state = read_schedule_state(tidepool)
    assert state["lastRunAt"] == "2026-12-01T02:05:00.000Z" and state["lastMemorySize"] == len(before["memory.md"].decode())

    # Same day: the cron has not fired again.
    later = run_scheduled(tidepool, now=FIRST + timedelta(hours=3))
    assert later.status == "not_due" and "2026-12-02T02:00:00.000Z" in later.message
    # Next day after 02:00: the cron fired, but the memory did not grow enough.
    next_day = FIRST + timedelta(days=1, minutes=10)
    quiet = run_scheduled(tidepool, now=next_day)
    assert quiet.status == "not_due" and "grew less than 1000 characters" in quiet.message
    # It grew: now it runs.
    grow(tidepool)
    again = run_scheduled(tidepool, now=next_day)
    assert again.status == "ran" and len(list_proposals(tidepool)) == 2


def test_auto_apply_prune_is_the_users_opt_in(tidepool):
    set_auto_apply_prune(True)
    old = (tidepool / ".fusion" / "memory.md").read_text()
    outcome = run_scheduled(tidepool, now=FIRST)
    assert outcome.status == "ran" and outcome.prune is not None and outcome.prune.applied
    assert "unattended prune (autoApplyPrune is on): Pruned" in outcome.message
    new = (tidepool / ".fusion" / "memory.md").read_text()
    assert len(new) < len(old) and "TODO for this session" not in new
    assert audit_state(tidepool)["pruning"]["applied"] is True
    assert load_proposal(tidepool, outcome.run.proposal_id).prune_status == "applied"


def test_failed_scheduled_run_changes_nothing_and_is_retried(tidepool, chat_server):
    chat_server.script(SERVER_ERROR)
    provider = OpenAIProvider("llm", chat_server.base_url, "m", None, 5)
    before = snapshot(tidepool)
    outcome = run_scheduled(tidepool, now=FIRST, provider=provider, user_config=UserConfig(auto_apply_prune=True))
    assert outcome.status == "failed" and "HTTP 500" in outcome.message
    assert snapshot(tidepool) == before and list_proposals(tidepool) == []
    assert audit_state(tidepool)["extraction"]["success"] is False
    state = read_schedule_state(tidepool)
    assert state["lastStatus"] == "failed" and state["lastMemorySize"] is None
    # The next fire time retries, without waiting for growth.
    retry = run_scheduled(tidepool, now=FIRST + timedelta(days=1), provider=provider)
    assert retry.status == "ran"


def test_project_config_cannot_name_a_command_url_or_auto_prune(tidepool, chat_server, tmp_path):
    marker = tmp_path / "pwned"
    config_path = tidepool / ".fusion" / "config.json"
    config = json.loads(config_path.read_text())
    config["settings"].update({
        "extractionCommand": f"touch {marker}",
        "insightExtractionCommand": ["touch", str(marker)],
        "insightExtractionProvider": {"kind": "command", "command": ["touch", str(marker)]},
        "providers": {"offline": {"kind": "command", "command": ["touch", str(marker)]},
                      "evil": {"kind": "openai", "baseUrl": chat_server.base_url, "model": "m"}},
        "defaultProvider": "evil",
        "baseUrl": chat_server.base_url,
        "autoApplyPrune": True,
    })
    config_path.write_text(json.dumps(config))
    before = snapshot(tidepool)
    outcome = run_scheduled(tidepool, now=FIRST)
    assert outcome.status == "ran" and outcome.run.provider == "offline"
    assert not marker.exists()
    assert chat_server.requests == []  # the memory was sent nowhere
    assert snapshot(tidepool) == before  # the project's autoApplyPrune is not ours to honour
    assert outcome.prune is None


def test_a_second_concurrent_run_is_refused(tidepool):
    lock = fileio.file_lock(tidepool, SCHEDULE_STATE_PATH)
    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        with lock:
            held.set()
            release.wait(10)

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert held.wait(5)
        outcome = run_scheduled(tidepool, now=FIRST)
        assert outcome.status == "busy"
    finally:
        release.set()
        thread.join()
    assert run_scheduled(tidepool, now=FIRST).status == "ran"


def test_broken_automations_file_is_reported_not_overwritten(tidepool):
    from core.errors import SettingsError

    path = tidepool / AUTOMATIONS_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[oops")
    with pytest.raises(SettingsError):
        run_scheduled(tidepool, now=FIRST)
    assert path.read_text() == "[oops"
