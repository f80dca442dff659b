"""Prune candidates that fake their headings or drop most of the memory (issue 9 item 2)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.automation.schedule import run_scheduled
from core.insights import validate_prune_candidate
from core.insights.prune import count_entries, unattended_prune_refusal
from core.proposals import load_proposal
from core.providers import OpenAIProvider
from core.settings.user_config import set_auto_apply_prune
from tests.core.chat_server import GOOD_REPLY, Scripted

FIRST = datetime(2026, 12, 1, 2, 5, tzinfo=UTC)
MEMORY = ".fusion/memory.md"

FAKE_HEADINGS = {
    "h4-headings": "# Project Memory\n\n#### Architecture\n\n#### Conventions\n\n#### Pitfalls\n",
    "inline-code": "# Project Memory\n\nSee `## Architecture`, `## Conventions` and `## Pitfalls`.\n",
    "suffix": "# Project Memory\n\n## Architecturex\n\n## Conventionsx\n\n## Pitfalls and more\n",
    "mid-line": "# Project Memory\n\ntext ## Architecture and ## Conventions\n",
    "no-space": "# Project Memory\n\n##Architecture\n\n##Conventions\n",
    "code-fence": "# Project Memory\n\n```\n## Architecture\n## Conventions\n```\n",
    "tilde-fence": "# Project Memory\n\n~~~md\n## Architecture\n\n## Pitfalls\n~~~\n",
    "html-comment": "# Project Memory\n\n<!--\n## Architecture\n\n## Conventions\n-->\n",
    "indented-code": "# Project Memory\n\n    ## Architecture\n    ## Conventions\n",
    "prefix": "# Project Memory\n\n## The Architecture\n\n## Old Conventions\n",
    "level-3": "# Project Memory\n\n### Architecture\n\n### Conventions\n",
}


@pytest.mark.parametrize("name", sorted(FAKE_HEADINGS))
def test_headings_kept_only_as_text_do_not_count(name):
    result = validate_prune_candidate(FAKE_HEADINGS[name])
    assert not result.valid and len(result.found_sections) < 2, result


@pytest.mark.parametrize("candidate", [
    "## Architecture\n\n- a\n\n## Conventions\n\n- b\n",
    "## Architecture  \n\n## Pitfalls ##\n",  # trailing spaces and closing hashes: the same heading
    "   ## Conventions\n\n## Pitfalls\n\n```\ncode\n```\n",
])
def test_real_headings_still_count(candidate):
    assert validate_prune_candidate(candidate).valid


def test_layered_counts_decisions_for_architecture():
    layered = "# Project Memory\n\n## Decisions\n\n- d\n\n## Conventions\n\n- c\n"
    assert validate_prune_candidate(layered, layout="layered").valid
    assert not validate_prune_candidate(layered).valid  # the seed layout still wants Architecture
    seed_shaped = "# Project Memory\n\n## Architecture\n\n## Context\n\n## Pitfalls\n"
    assert not validate_prune_candidate(seed_shaped, layout="layered").valid


def _memory_with_entries(n: int) -> str:
    head = "# Project Memory\n\n## Architecture\n\n## Conventions\n\n## Pitfalls\n\n## Context\n"
    return head + "".join(f"\n\n<!-- 2026-01-{1 + i % 28:02d} -->\n- entry number {i} about the system" for i in range(n))


HEADINGS_ONLY = "# Project Memory\n\n## Architecture\n\n## Conventions\n\n## Pitfalls\n\n## Context\n"


def test_count_entries_counts_bullets_and_dated_entries():
    assert count_entries(_memory_with_entries(60)) == 120  # one marker and one bullet each
    assert count_entries("```\n- not a bullet\n```\n- one\n1. two\n") == 2


@pytest.mark.parametrize("kept", [0, 10, 29])
def test_unattended_prune_that_drops_most_entries_is_refused(kept):
    current = _memory_with_entries(60)
    candidate = HEADINGS_ONLY + "".join(f"- entry number {i} about the system\n" for i in range(kept))
    reason = unattended_prune_refusal(current, candidate)
    assert reason and "entries" in reason


def test_unattended_prune_that_drops_most_bytes_is_refused():
    current = HEADINGS_ONLY + "".join(f"- entry {i}: " + "a long explanation " * 20 + "\n" for i in range(20))
    candidate = HEADINGS_ONLY + "".join(f"- entry {i}\n" for i in range(20))  # every entry, few bytes
    reason = unattended_prune_refusal(current, candidate)
    assert reason and "bytes" in reason


def test_moderate_prune_is_allowed_unattended():
    current = _memory_with_entries(60)
    _head, _sep, tail = current.partition("## Context\n")
    candidate = HEADINGS_ONLY + tail.split("\n\n<!-- ", 20)[-1]  # drops 19 of 60 dated entries
    assert unattended_prune_refusal(current, candidate) is None


def _reply(pruned: str) -> str:
    data = json.loads(GOOD_REPLY)
    data["prunedMemory"] = pruned
    return json.dumps(data)


@pytest.mark.parametrize("attack", ["drop-every-entry", "fake-headings", "drop-most-bytes"])
def test_run_scheduled_does_not_apply_a_drastic_prune(tidepool: Path, chat_server, attack):
    path = tidepool / MEMORY
    path.write_text(_memory_with_entries(60))
    before = path.read_bytes()
    pruned = {"drop-every-entry": HEADINGS_ONLY,
              "fake-headings": FAKE_HEADINGS["h4-headings"] + "".join(f"- entry number {i}\n" for i in range(60)),
              "drop-most-bytes": HEADINGS_ONLY + "- e\n" * 120}[attack]
    chat_server.script(Scripted(_reply(pruned)))
    set_auto_apply_prune(True)
    provider = OpenAIProvider("llm", chat_server.base_url, "m", None, 5)
    outcome = run_scheduled(tidepool, now=FIRST, provider=provider)
    assert outcome.status == "ran", outcome.message
    assert path.read_bytes() == before  # 0 of 60 entries lost
    assert outcome.prune is None or not outcome.prune.applied
    proposal = load_proposal(tidepool, outcome.run.proposal_id)
    if attack == "fake-headings":
        assert proposal.prune_status == "invalid"
    else:
        assert "waits for the operator" in outcome.message
        assert proposal.prune_status == "pending" and "Not applied unattended" in proposal.prune_message
