"""The reply's optional per-removal reasons, and applying only the changes the operator accepted."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from core.automation.extraction import run_extraction
from core.documents.diff import apply_hunks, diff_texts
from core.insights import (
    MEMORY_WORKING_PATH,
    PruneReason,
    build_insight_extraction_prompt,
    parse_insight_extraction_response,
    read_working_memory,
)
from core.proposals import apply_prune, load_proposal
from core.providers import OfflineProvider, ProviderRequest
from core.storage.history import versions as history
from tests.core.chat_server import GOOD_REPLY, audit_state

NOW = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)


class Canned:
    name = "canned"

    def __init__(self, reply: str) -> None:
        self.reply = reply

    def complete(self, request: ProviderRequest, *, cancel, progress) -> str:
        return self.reply


def with_reasons(reasons: object) -> str:
    data = json.loads(GOOD_REPLY)
    data["pruneReasons"] = reasons
    return json.dumps(data)


def test_an_old_reply_parses_as_before() -> None:
    result = parse_insight_extraction_response(GOOD_REPLY)
    assert result.prune_reasons == () and "pruneReasons" not in result.to_json()


def test_reasons_are_read_and_malformed_entries_skipped() -> None:
    reply = with_reasons([{"line": "- a removed line", "reason": " finished task "}, {"line": 3, "reason": "x"},
                          {"line": "- b", "reason": ""}, "text", {"line": "- c"}])
    result = parse_insight_extraction_response(reply)
    assert result.prune_reasons == (PruneReason("- a removed line", "finished task"),)
    assert result.to_json()["pruneReasons"] == [{"line": "- a removed line", "reason": "finished task"}]
    assert parse_insight_extraction_response(with_reasons("not a list")).prune_reasons == ()


def test_reasons_without_a_prune_are_dropped() -> None:
    data = json.loads(with_reasons([{"line": "- a", "reason": "old"}]))
    data["prunedMemory"] = None
    assert parse_insight_extraction_response(json.dumps(data)).prune_reasons == ()


def test_the_prompt_documents_the_optional_reasons() -> None:
    prompt = build_insight_extraction_prompt("WM", None)
    assert '"pruneReasons": [{"line": ' in prompt and "optional" in prompt.lower()
    assert prompt.index("pruneReasons") < prompt.index("## Output Format")


def test_a_run_stores_the_reasons_in_its_proposal(tidepool: Path) -> None:
    run = run_extraction(tidepool, OfflineProvider(), now=NOW)
    assert run.ok and run.proposal_id
    proposal = load_proposal(tidepool, run.proposal_id)
    assert proposal.prune_reasons and {r.reason for r in proposal.prune_reasons} <= {
        "dated entry older than 30 days", "transient"}
    stored = json.loads((tidepool / ".fusion/memdesk/proposals" / f"{run.proposal_id}.json").read_text())
    assert stored["pruneReasons"][0] == proposal.prune_reasons[0].to_json()


def test_applying_the_accepted_changes_only(tidepool: Path) -> None:
    run = run_extraction(tidepool, Canned(GOOD_REPLY), now=NOW)
    proposal = load_proposal(tidepool, run.proposal_id)
    old = read_working_memory(tidepool)
    diff = diff_texts(old, proposal.pruned_memory)
    assert len(diff.hunks) >= 2
    kept = diff.hunks[0]
    combined = apply_hunks(old, proposal.pruned_memory, diff.hunks, [h.index for h in diff.hunks[1:]])
    review = apply_prune(tidepool, proposal.id, candidate=combined, now=NOW)
    assert review.applied
    new = (tidepool / MEMORY_WORKING_PATH).read_text()
    assert new == combined.strip() + "\n"
    old_lines = old.splitlines()
    assert all(line in new.splitlines() for line in old_lines[kept.old_start:kept.old_end])
    versions = history.list_versions(tidepool, MEMORY_WORKING_PATH)
    assert versions[0].source == "prune" and history.get_version(tidepool, versions[0].id)[1] == old
    stored = load_proposal(tidepool, proposal.id)
    assert stored.prune_status == "applied" and "accepted" in stored.prune_message
    assert audit_state(tidepool)["pruning"]["applied"] is True


def test_an_invalid_selection_is_refused_and_nothing_is_written(tidepool: Path) -> None:
    run = run_extraction(tidepool, Canned(GOOD_REPLY), now=NOW)
    before = (tidepool / MEMORY_WORKING_PATH).read_bytes()
    bad = "# Project Memory\n\n## Context\n- nothing else\n"
    review = apply_prune(tidepool, run.proposal_id, candidate=bad, now=NOW)
    assert not review.applied and "Missing required sections" in review.message
    assert (tidepool / MEMORY_WORKING_PATH).read_bytes() == before
    assert load_proposal(tidepool, run.proposal_id).prune_status == "pending"
