"""``run_extraction``: a real provider call, a proposal for review, and an audit after every run.

Every bad reply of the issue (malformed JSON, empty, 401, 500, timeout, no prunedMemory, a prune
dropping required sections) gives a clear message, leaves memory.md and memory-insights.md
byte-identical, and is recorded in the audit state.
"""

from __future__ import annotations

import sys
import textwrap
import time
from datetime import UTC, datetime

import pytest

from core.automation.extraction import run_extraction
from core.insights import PRUNE_NOT_OFFERED_REASON
from core.proposals import list_proposals, load_proposal
from core.providers import CommandProvider, OfflineProvider, OpenAIProvider, ProviderError
from tests.core.chat_server import (
    API_KEY,
    API_KEY_ENV,
    BAD_PRUNE,
    EMPTY,
    FENCED,
    GOOD,
    MALFORMED,
    NO_PRUNE,
    SAMPLE_FUSION,
    SERVER_ERROR,
    UNAUTHORIZED,
    Scripted,
    audit_state,
    slow,
    snapshot,
)

NOW = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
REPLY_FILE = SAMPLE_FUSION / "extraction-reply.json"


@pytest.fixture
def llm(chat_server, monkeypatch) -> OpenAIProvider:
    monkeypatch.setenv(API_KEY_ENV, API_KEY)
    return OpenAIProvider("test-llm", chat_server.base_url, "test-model", API_KEY_ENV, timeout_s=0.5)


@pytest.mark.parametrize("scripted", [GOOD, FENCED])
def test_good_reply_becomes_a_pending_proposal_and_changes_no_memory(tidepool, chat_server, llm, scripted):
    before = snapshot(tidepool)
    chat_server.script(scripted)
    steps: list[int] = []
    run = run_extraction(tidepool, llm, now=NOW, progress=lambda pct, msg: steps.append(pct))
    assert run.status == "ok", run.message
    assert snapshot(tidepool) == before
    assert steps[0] == 0 and steps[-1] == 100 and steps == sorted(steps)
    assert "Working Memory" in chat_server.requests[0].body["messages"][1]["content"]

    proposal = load_proposal(tidepool, run.proposal_id)
    assert proposal.provider == "test-llm" and proposal.prune_status == "pending"
    assert len(proposal.insights) == 5 and proposal.duplicate_count == 1  # one repeats an existing insight
    assert all(item.status == "pending" for item in proposal.insights)
    assert proposal.pruned_memory and proposal.memory_hash_at_start == run.memory_hash_at_start
    assert "5 new insights (1 already known)" in run.message

    state = audit_state(tidepool)
    assert state["extraction"]["success"] is True and state["extraction"]["insightCount"] == 5
    assert state["extraction"]["duplicateCount"] == 1
    assert state["pruning"]["applied"] is False and run.proposal_id in state["pruning"]["reason"]
    assert (tidepool / ".fusion" / "memory-audit.md").exists()


@pytest.mark.parametrize(("scripted", "kind", "words"), [
    (MALFORMED, "bad_reply", "is not the extraction JSON: Failed to parse insight extraction response as JSON"),
    (EMPTY, "empty_reply", "test-llm returned an empty reply"),
    (UNAUTHORIZED, "auth", f"HTTP 401 from http://127.0.0.1:{{port}}/v1/chat/completions: the endpoint refused "
                           f"the key in {API_KEY_ENV}"),
    (SERVER_ERROR, "server", "HTTP 500"),
    (slow(10), "timeout", "within 0.5 s (timeout)"),
])
def test_failed_replies_change_nothing_but_the_audit(tidepool, chat_server, llm, scripted, kind, words):
    before = snapshot(tidepool)
    chat_server.script(scripted)
    run = run_extraction(tidepool, llm, now=NOW)
    expected = words.replace("{port}", chat_server.base_url.split(":")[2].split("/")[0])
    assert run.status == "failed" and run.error_kind == kind
    assert expected in run.message
    assert run.result is None and run.proposal_id is None
    assert snapshot(tidepool) == before
    assert list_proposals(tidepool, pending_only=False) == []
    state = audit_state(tidepool)
    assert state["extraction"]["success"] is False
    assert expected in state["extraction"]["error"]
    assert state["pruning"]["applied"] is False
    assert "Last extraction failed" in (tidepool / ".fusion" / "memory-audit.md").read_text()


def test_reply_without_pruned_memory_proposes_insights_only(tidepool, chat_server, llm):
    before = snapshot(tidepool)
    chat_server.script(NO_PRUNE)
    run = run_extraction(tidepool, llm, now=NOW)
    assert run.status == "ok" and run.prune_status == "none"
    assert "No prune proposed: the reply has no prunedMemory" in run.message
    assert snapshot(tidepool) == before
    assert load_proposal(tidepool, run.proposal_id).pruned_memory is None
    state = audit_state(tidepool)
    assert state["pruning"] == {"applied": False, "reason": PRUNE_NOT_OFFERED_REASON, "sizeDelta": 0,
                                "originalSize": len(before["memory.md"].decode()),
                                "newSize": len(before["memory.md"].decode())}


def test_prune_dropping_required_sections_is_refused(tidepool, chat_server, llm):
    from core.proposals import apply_prune

    before = snapshot(tidepool)
    chat_server.script(BAD_PRUNE)
    run = run_extraction(tidepool, llm, now=NOW)
    assert run.status == "ok" and run.prune_status == "invalid"
    assert "The proposed prune cannot be applied: Missing required sections: only 0 of 3" in run.message
    review = apply_prune(tidepool, run.proposal_id)
    assert not review.applied and "Missing required sections" in review.message
    assert snapshot(tidepool) == before
    state = audit_state(tidepool)
    assert state["pruning"]["applied"] is False and "Missing required sections" in state["pruning"]["reason"]


def test_memory_changed_while_the_model_answered_makes_the_prune_stale(tidepool, chat_server, llm):
    from core.entries import append_memory_entry

    chat_server.script(Scripted(GOOD.content, hook=lambda: append_memory_entry(tidepool, "Agent note meanwhile")))
    run = run_extraction(tidepool, llm, now=NOW)
    assert run.status == "ok" and run.prune_status == "stale"
    assert "stale" in run.message and "run a new extraction" in run.message
    assert "Agent note meanwhile" in (tidepool / ".fusion" / "memory.md").read_text()


def test_cancel_is_recorded_and_changes_nothing(tidepool, chat_server, llm):
    before = snapshot(tidepool)
    chat_server.script(slow(10))
    started = time.monotonic()
    run = run_extraction(tidepool, llm, cancel=lambda: time.monotonic() - started > 0.1)
    assert run.status == "cancelled" and run.message == "cancelled by the operator"
    assert time.monotonic() - started < 2
    assert snapshot(tidepool) == before
    assert audit_state(tidepool)["extraction"]["error"] == "cancelled by the operator"


def test_empty_memory_never_calls_the_provider(project, chat_server, llm):
    run = run_extraction(project, llm)
    assert run.status == "failed" and run.error_kind == "empty_memory"
    assert "empty or missing" in run.message
    assert chat_server.requests == []
    assert audit_state(project)["extraction"]["success"] is False
    assert not (project / ".fusion" / "memory.md").exists()


def test_a_provider_bug_is_a_failed_run_not_a_crash(tidepool):
    class Broken:
        name = "broken"

        def complete(self, request, *, cancel, progress):
            raise RuntimeError("boom")

    before = snapshot(tidepool)
    run = run_extraction(tidepool, Broken())
    assert run.status == "failed" and "unexpected error: boom" in run.message
    assert snapshot(tidepool) == before


def test_command_provider_end_to_end(tidepool, tmp_path):
    script = tmp_path / "model.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        prompt = sys.stdin.read()
        assert "## Working Memory" in prompt
        sys.stdout.write(open({str(REPLY_FILE)!r}, encoding="utf-8").read())
    """), encoding="utf-8")
    run = run_extraction(tidepool, CommandProvider("script", [sys.executable, str(script)], 20), now=NOW)
    assert run.status == "ok", run.message
    assert len(load_proposal(tidepool, run.proposal_id).insights) == 5


def test_offline_provider_end_to_end(tidepool):
    before = snapshot(tidepool)
    run = run_extraction(tidepool, OfflineProvider(), now=NOW)
    assert run.status == "ok" and "rule-based" in run.result.summary
    assert run.prune_status == "pending"
    assert snapshot(tidepool) == before


def test_provider_error_message_reaches_the_run(tidepool):
    class Refusing:
        name = "refusing"

        def complete(self, request, *, cancel, progress):
            raise ProviderError("refusing: quota exhausted", "server", "refusing")

    run = run_extraction(tidepool, Refusing())
    assert run.message == "refusing: quota exhausted" and run.error_kind == "server"



def test_unreadable_memory_is_a_failed_run_and_is_not_rewritten(tidepool):
    path = tidepool / ".fusion" / "memory.md"
    path.write_bytes(b"## Architecture\n- caf\xe9 latin-1\n")
    run = run_extraction(tidepool, OfflineProvider())
    assert run.status == "failed" and "not valid UTF-8" in run.message
    assert path.read_bytes() == b"## Architecture\n- caf\xe9 latin-1\n"
    assert audit_state(tidepool)["extraction"]["success"] is False
