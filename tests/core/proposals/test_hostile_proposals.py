"""Hostile proposal files and big proposals (issue 9 items 16 and 20): one line, nothing changed first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.proposals import (
    ProposalError,
    apply_prune,
    list_proposals,
    load_proposal,
    proposal_relpath,
    store_prune_candidate,
)
from tests.core.hostile import one_line, run_cli

MEMORY = ".fusion/memory.md"
HEAD = "# Project Memory\n\n## Architecture\n\n- keep\n\n## Conventions\n\n- keep too\n\n## Pitfalls\n\n"


@pytest.fixture
def memory_project(project: Path) -> Path:
    (project / ".fusion").mkdir()
    (project / MEMORY).write_text(HEAD + "".join(f"- transient note {i}\n" for i in range(10)))
    return project


def _good(root: Path) -> str:
    return store_prune_candidate(root, HEAD + "- transient note 1\n", "hand.md").id


def _valid_json(root: Path, pid: str) -> dict:
    return json.loads((root / proposal_relpath(pid)).read_text())


CORRUPT = {
    "empty-list": lambda good: "[]",
    "null": lambda good: "null",
    "number": lambda good: "42",
    "string": lambda good: '"a proposal"',
    "empty-object": lambda good: "{}",
    "deep-nesting": lambda good: "[" * 100_000 + "]" * 100_000,
    "deep-object": lambda good: '{"a":' * 50_000 + "1" + "}" * 50_000,
    "insights-not-a-list": lambda good: json.dumps({**good, "insights": 5}),
    "insight-not-an-object": lambda good: json.dumps({**good, "insights": ["text"]}),
    "insight-number-text": lambda good: json.dumps({**good, "insights": [{"number": "one", "category": "pattern",
                                                                           "content": "c"}]}),
    "insight-number-huge": lambda good: json.dumps({**good, "insights": [{"number": 2**80, "category": "pattern",
                                                                           "content": "c"}]}),
    "bad-status": lambda good: json.dumps({**good, "pruneStatus": "applied-by-magic"}),
    "hash-not-hex": lambda good: json.dumps({**good, "memoryHashAtStart": "../../etc/passwd"}),
    "pruned-not-text": lambda good: json.dumps({**good, "prunedMemory": {"x": 1}}),
    "wrong-id": lambda good: json.dumps({**good, "id": "20990101T000000-ffffff"}),
    "not-utf8": lambda good: b"\xff\xfe{}",
    "huge": lambda good: json.dumps({**good, "summary": "x" * (5 * 1024 * 1024)}),
    "bad-duplicate-count": lambda good: json.dumps({**good, "duplicateCount": "many"}),
}


def _plant(root: Path, name: str) -> str:
    pid = _good(root)
    content = CORRUPT[name](_valid_json(root, pid))
    path = root / proposal_relpath(pid)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return pid


@pytest.mark.parametrize("name", sorted(CORRUPT))
def test_corrupt_proposal_is_one_clear_error(memory_project, name):
    pid = _plant(memory_project, name)
    with pytest.raises(ProposalError) as info:
        load_proposal(memory_project, pid)
    assert info.value.code == "CORRUPT" and f"{pid}.json" in info.value.message
    assert "\n" not in info.value.message and "delete" in info.value.message


@pytest.mark.parametrize("name", sorted(CORRUPT))
def test_listing_skips_a_corrupt_proposal_with_a_warning(memory_project, name):
    _plant(memory_project, name)
    good = _good(memory_project)
    warnings: list[str] = []
    assert [p.id for p in list_proposals(memory_project, warnings=warnings)] == [good]
    assert len(warnings) == 1 and "skipped" in warnings[0]


@pytest.mark.parametrize("name", ["empty-list", "deep-nesting", "wrong-id", "huge"])
def test_cli_never_shows_a_traceback_and_changes_nothing(memory_project, name):
    pid = _plant(memory_project, name)
    before = (memory_project / MEMORY).read_bytes()
    for action in ("show", "apply-prune", "accept"):
        extra = ["--all"] if action == "accept" else []
        result = run_cli("proposals", action, pid, *extra, "--project", str(memory_project))
        assert result.returncode == 1 and f"{pid}.json" in one_line(result.stderr)
    listing = run_cli("proposals", "list", "--project", str(memory_project))
    assert listing.returncode == 0 and "Traceback" not in listing.stderr and "warning" in listing.stderr
    assert (memory_project / MEMORY).read_bytes() == before


def test_wrong_id_inside_refuses_before_the_memory_is_pruned(memory_project):
    pid = _plant(memory_project, "wrong-id")
    before = (memory_project / MEMORY).read_bytes()
    with pytest.raises(ProposalError):
        apply_prune(memory_project, pid)
    assert (memory_project / MEMORY).read_bytes() == before


def test_a_one_megabyte_prune_can_be_stored_and_applied(memory_project):
    # An agent grew the memory past the 1 MiB write limit; the prune brings it back under it.
    body = "".join(f"- durable entry {i}: " + "detail " * 12 + "\n" for i in range(12_000))
    (memory_project / MEMORY).write_text(HEAD + body)
    candidate = (HEAD + body)[:1_040_000]  # under the 1 MiB memory limit; its proposal file is over it
    candidate = candidate[: candidate.rindex("\n") + 1]
    proposal = store_prune_candidate(memory_project, candidate, "big.md")
    assert (memory_project / proposal_relpath(proposal.id)).stat().st_size > 1_048_576
    review = apply_prune(memory_project, proposal.id)
    assert review.applied, review.message
    assert (memory_project / MEMORY).read_text() == candidate.strip() + "\n"  # a pruned file ends with one newline
    assert load_proposal(memory_project, proposal.id).prune_status == "applied"
