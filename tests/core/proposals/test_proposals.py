"""Reviewing proposals: accept or reject each insight, apply or reject the prune, and the stale rule."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.automation.extraction import run_extraction, store_imported_reply
from core.insights import (
    MEMORY_AUDIT_PATH,
    MEMORY_AUDIT_STATE_PATH,
    MEMORY_WORKING_PATH,
    PruneOutcome,
    parse_insights_markdown,
    read_insights_memory,
    read_working_memory,
)
from core.proposals import (
    PROPOSALS_DIR,
    ProposalError,
    accept_insights,
    apply_prune,
    is_stale,
    list_proposals,
    load_proposal,
    record_audit,
    reject_insights,
    reject_prune,
    store_prune_candidate,
)
from core.providers import ProviderRequest, rule_based_reply
from core.storage.history import versions as history
from tests.core.chat_server import (
    GOOD_REPLY,
    REPO,
    audit_state,
    snapshot,
)

NOW = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)


class Canned:
    """A provider answering with the sample project's extraction reply."""

    name = "canned"

    def __init__(self, reply: str = GOOD_REPLY) -> None:
        self.reply = reply

    def complete(self, request: ProviderRequest, *, cancel, progress) -> str:
        return self.reply


@pytest.fixture
def proposal_id(tidepool) -> str:
    run = run_extraction(tidepool, Canned(), now=NOW)
    assert run.ok, run.message
    return run.proposal_id


def bullets(root) -> list[str]:
    return [b.content for s in parse_insights_markdown(read_insights_memory(root)) for b in s.bullets]


def test_accept_some_and_reject_others(tidepool, proposal_id):
    memory_before = snapshot(tidepool)["memory.md"]
    insights_before = read_insights_memory(tidepool)
    review = accept_insights(tidepool, proposal_id, [1, 2], now=NOW)
    assert review.added == 2 and "Merged 2 insights" in review.message
    after = bullets(tidepool)
    assert any(b.startswith("Deduplicate enqueues") for b in after)
    assert any(b.startswith("Handlers signal failure") for b in after)
    assert not any(b.startswith("Vitest runs files") for b in after)
    assert "## Last Updated: 2026-12-01" in read_insights_memory(tidepool)
    assert [v.source for v in history.list_versions(tidepool, ".fusion/memory-insights.md")] == ["insights-merge"]
    [version] = history.list_versions(tidepool, ".fusion/memory-insights.md")
    assert history.get_version(tidepool, version.id)[1] == insights_before

    reject_insights(tidepool, proposal_id, [3])
    proposal = load_proposal(tidepool, proposal_id)
    assert [i.status for i in proposal.insights] == ["accepted", "accepted", "rejected", "pending", "pending"]
    accept_insights(tidepool, proposal_id, None, now=NOW)  # the remaining pending ones
    proposal = load_proposal(tidepool, proposal_id)
    assert [i.status for i in proposal.insights] == ["accepted", "accepted", "rejected", "accepted", "accepted"]
    assert proposal.prune_status == "pending" and proposal.is_pending
    assert snapshot(tidepool)["memory.md"] == memory_before  # reviewing insights never touches the memory
    assert audit_state(tidepool)["extraction"]["success"] is True


def test_accepting_twice_adds_nothing_and_rejecting_an_accepted_insight_is_refused(tidepool, proposal_id):
    accept_insights(tidepool, proposal_id, [1])
    text = read_insights_memory(tidepool)
    assert accept_insights(tidepool, proposal_id, [1]).added == 0
    assert read_insights_memory(tidepool) == text
    with pytest.raises(ProposalError) as err:
        reject_insights(tidepool, proposal_id, [1])
    assert err.value.code == "ALREADY_APPLIED" and "already merged" in err.value.message
    with pytest.raises(ProposalError) as err:
        accept_insights(tidepool, proposal_id, [9])
    assert "has no insight 9" in err.value.message


def test_apply_prune_writes_it_keeps_history_and_records_the_audit(tidepool, proposal_id):
    old = (tidepool / ".fusion" / "memory.md").read_text()
    review = apply_prune(tidepool, proposal_id, now=NOW)
    assert review.applied and review.message.startswith("Pruned: ")
    new = (tidepool / ".fusion" / "memory.md").read_text()
    assert new == json.loads(GOOD_REPLY)["prunedMemory"].strip() + "\n"
    versions = history.list_versions(tidepool, ".fusion/memory.md")
    assert versions[0].source == "prune" and history.get_version(tidepool, versions[0].id)[1] == old
    assert load_proposal(tidepool, proposal_id).prune_status == "applied"
    assert audit_state(tidepool)["pruning"]["applied"] is True
    again = apply_prune(tidepool, proposal_id)
    assert not again.applied and "already applied" in again.message


def test_prune_is_stale_after_a_direct_write(tidepool, proposal_id):
    path = tidepool / ".fusion" / "memory.md"
    path.write_text(path.read_text() + "\n<!-- 2026-12-01 -->\nWritten by hand after the run.\n")
    changed = path.read_bytes()
    proposal = load_proposal(tidepool, proposal_id)
    assert is_stale(tidepool, proposal)
    review = apply_prune(tidepool, proposal_id)
    assert not review.applied and "changed after this extraction started" in review.message
    assert path.read_bytes() == changed
    assert load_proposal(tidepool, proposal_id).prune_status == "stale"
    state = audit_state(tidepool)
    assert state["pruning"]["applied"] is False and "run a new extraction" in state["pruning"]["reason"]
    assert not apply_prune(tidepool, proposal_id).applied  # stays stale even if the memory is reverted


def test_prune_is_stale_after_another_process_appends(tidepool, proposal_id):
    code = ("import sys; from core.entries import append_memory_entry; "
            "append_memory_entry(sys.argv[1], 'Appended by another agent')")
    subprocess.run([sys.executable, "-c", code, str(tidepool)], cwd=REPO, check=True, timeout=60)
    changed = (tidepool / ".fusion" / "memory.md").read_bytes()
    assert b"Appended by another agent" in changed
    review = apply_prune(tidepool, proposal_id)
    assert not review.applied and review.proposal.prune_status == "stale"
    assert (tidepool / ".fusion" / "memory.md").read_bytes() == changed


def test_reject_prune_leaves_memory_and_blocks_apply(tidepool, proposal_id):
    before = snapshot(tidepool)
    review = reject_prune(tidepool, proposal_id, now=NOW)
    assert "memory is unchanged" in review.message
    assert load_proposal(tidepool, proposal_id).prune_status == "rejected"
    assert not apply_prune(tidepool, proposal_id).applied
    assert snapshot(tidepool) == before
    assert audit_state(tidepool)["pruning"]["reason"] == "Prune candidate rejected by the operator"


def test_list_filters_reviewed_proposals_and_ids_can_be_shortened(tidepool, proposal_id):
    assert [p.id for p in list_proposals(tidepool)] == [proposal_id]
    accept_insights(tidepool, proposal_id)
    reject_prune(tidepool, proposal_id)
    assert list_proposals(tidepool) == []
    assert [p.id for p in list_proposals(tidepool, pending_only=False)] == [proposal_id]
    assert load_proposal(tidepool, proposal_id[:12]).id == proposal_id


def test_missing_bad_and_corrupt_ids(tidepool, proposal_id):
    with pytest.raises(ProposalError) as err:
        load_proposal(tidepool, "nope")
    assert err.value.code == "NOT_FOUND"
    with pytest.raises(ProposalError) as err:
        load_proposal(tidepool, "../../memory")
    assert err.value.code == "INVALID_ID"
    (tidepool / PROPOSALS_DIR / "broken.json").write_text("{", encoding="utf-8")
    assert [p.id for p in list_proposals(tidepool)] == [proposal_id]
    with pytest.raises(ProposalError) as err:
        load_proposal(tidepool, "broken")
    assert err.value.code == "CORRUPT"


def test_offline_proposal_round_trip(tidepool):
    memory = (tidepool / ".fusion" / "memory.md").read_text()
    reply = json.dumps(rule_based_reply(memory, read_insights_memory(tidepool), now=NOW))
    run = run_extraction(tidepool, Canned(reply), now=NOW)
    accept_insights(tidepool, run.proposal_id, [1, 2])
    assert apply_prune(tidepool, run.proposal_id).applied
    assert "TODO for this session" not in (tidepool / ".fusion" / "memory.md").read_text()


# ── moved from the old in-memory review path ──────────────────────────────────────────────────


def test_an_insight_added_to_the_file_since_the_run_is_skipped_not_duplicated(tidepool, proposal_id):
    first = load_proposal(tidepool, proposal_id).insights[0].insight
    path = tidepool / ".fusion" / "memory-insights.md"
    path.write_text(path.read_text().replace("## Patterns\n", f"## Patterns\n- {first.content.upper()}\n", 1))
    before = path.read_bytes()
    review = accept_insights(tidepool, proposal_id, [1])
    assert (review.added, review.already_present) == (0, 1) and "1 already there" in review.message
    assert path.read_bytes() == before
    assert load_proposal(tidepool, proposal_id).insights[0].status == "accepted"


def test_accept_creates_the_insights_file_when_absent(tidepool, proposal_id):
    path = tidepool / ".fusion" / "memory-insights.md"
    path.unlink()
    assert accept_insights(tidepool, proposal_id, [2]).added == 1
    text = path.read_text()
    assert text.startswith("# Memory Insights") and "- Handlers signal failure" in text


def test_reject_prune_with_a_reason_keeps_the_recorded_extraction(tidepool, proposal_id):
    extraction = audit_state(tidepool)["extraction"]
    reject_prune(tidepool, proposal_id, reason="  drops the TP-388 notes we still need ")
    state = audit_state(tidepool)
    assert state["extraction"] == extraction
    assert state["pruning"]["reason"] == "Prune candidate rejected by the operator: drops the TP-388 notes we still need"
    assert load_proposal(tidepool, proposal_id).prune_message == "Rejected by the operator: drops the TP-388 notes we still need"


def test_recording_a_prune_keeps_the_memory_and_the_recorded_extraction(sample_project: Path) -> None:
    state_path = sample_project / MEMORY_AUDIT_STATE_PATH
    extraction = {"runAt": "2026-11-28T02:00:00.000Z", "success": True, "insightCount": 3, "duplicateCount": 1,
                  "skippedCount": 0, "summary": "Three new insights from the week"}
    state_path.write_text(json.dumps({"extraction": extraction, "updatedAt": "2026-11-28T02:00:01.000Z"}))
    before = (sample_project / MEMORY_WORKING_PATH).read_bytes()
    size = len(read_working_memory(sample_project))
    reason = "Rejected by the operator: drops the TP-388 notes we still need"
    record_audit(sample_project, pruning=PruneOutcome(False, reason, 0, size, size))
    assert (sample_project / MEMORY_WORKING_PATH).read_bytes() == before
    state = json.loads(state_path.read_text())
    assert state["extraction"] == extraction
    assert state["pruning"]["reason"] == "Rejected by the operator: drops the TP-388 notes we still need"
    assert state["pruning"]["originalSize"] == len(before.decode())
    assert "Rejected by the operator" in (sample_project / MEMORY_AUDIT_PATH).read_text()


# ── proposals that do not come from a model call ──────────────────────────────────────────────


def test_an_imported_reply_is_stored_as_a_run_stores_it(tidepool):
    before = snapshot(tidepool)
    run = store_imported_reply(tidepool, GOOD_REPLY, "extraction-reply.json", now=NOW)
    assert run.ok and run.prune_status == "pending"
    proposal = load_proposal(tidepool, run.proposal_id)
    assert proposal.origin == "import" and proposal.provider == "extraction-reply.json (imported)"
    assert len(proposal.insights) == 5 and proposal.duplicate_count == 1  # one is already in the file
    assert snapshot(tidepool) == before
    assert audit_state(tidepool)["pruning"]["reason"].startswith("Prune candidate awaiting review (proposal ")


def test_a_reply_that_is_not_the_json_is_refused_and_nothing_is_written(tidepool):
    with pytest.raises(ProposalError) as err:
        store_imported_reply(tidepool, "Sorry, I could not produce the JSON this time.", "reply.txt")
    assert err.value.code == "BAD_REPLY" and err.value.message.startswith("reply.txt is not an extraction reply")
    assert list_proposals(tidepool, pending_only=False) == []
    assert not (tidepool / ".fusion" / "memory-audit-state.json").exists()


def test_a_loaded_prune_candidate_is_reviewed_like_any_other(tidepool):
    memory = tidepool / ".fusion" / "memory.md"
    candidate = memory.read_text().replace("single transaction", "single short transaction", 1)
    proposal = store_prune_candidate(tidepool, candidate, "candidate.md", now=NOW)
    assert proposal.prune_status == "pending" and proposal.insights == () and proposal.is_pending
    assert apply_prune(tidepool, proposal.id).applied
    assert memory.read_text() == candidate.strip() + "\n"


def test_an_invalid_prune_candidate_changes_nothing(tidepool):
    memory = tidepool / ".fusion" / "memory.md"
    before = memory.read_bytes()
    proposal = store_prune_candidate(tidepool, "# Project Memory\n\n## Context\n", "bad.md")
    assert proposal.prune_status == "invalid" and "Missing required sections" in proposal.prune_message
    review = apply_prune(tidepool, proposal.id)
    assert not review.applied and "Missing required sections" in review.message
    assert memory.read_bytes() == before
    assert not reject_prune(tidepool, proposal.id).outcome  # nothing to decide: it can never be applied
