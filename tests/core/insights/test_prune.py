"""core.insights.prune: validating a prune candidate and applying it safely."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.insights import (
    MEMORY_WORKING_PATH,
    PRUNE_NOT_OFFERED_REASON,
    REQUIRED_MEMORY_SECTIONS,
    apply_memory_pruning,
    validate_prune_candidate,
)
from core.storage import fileio
from core.storage.history.versions import get_version, list_versions
from tests.conftest import REAL_MEMORY

GOOD = "# Project Memory\n\n## Architecture\n- layers\n\n## Conventions\n- snake_case\n"


def write_memory(root: Path, text: str) -> None:
    (root / ".fusion").mkdir(parents=True, exist_ok=True)
    (root / MEMORY_WORKING_PATH).write_bytes(text.encode("utf-8"))


# ── validation ───────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("candidate", [None, "", 0, 12, b"## Architecture\n## Pitfalls", ["## Architecture"], object()])
def test_validate_undefined_or_empty(candidate: object) -> None:
    result = validate_prune_candidate(candidate)
    assert (result.valid, result.reason, result.size, result.has_required_sections) == (
        False, "Prune candidate is undefined or empty", 0, False
    )


def test_validate_blank_after_trimming() -> None:
    result = validate_prune_candidate(" \n\t\u00a0\ufeff ")
    assert (result.valid, result.reason, result.size) == (False, "Prune candidate is empty after trimming", 0)


@pytest.mark.parametrize(
    ("candidate", "reason"),
    [
        ("just some notes", "Missing required sections: only 0 of 3 required sections found (none)"),
        ("## Pitfalls\n- x", "Missing required sections: only 1 of 3 required sections found (Pitfalls)"),
        ("## architecture\n## Conventions", "Missing required sections: only 1 of 3 required sections found (Conventions)"),
    ],
)
def test_validate_missing_sections(candidate: str, reason: str) -> None:
    result = validate_prune_candidate(candidate)
    assert not result.valid and not result.has_required_sections
    assert result.reason == reason
    assert result.size == len(candidate.strip())


def test_validate_two_or_three_sections() -> None:
    two = validate_prune_candidate("  \n" + GOOD + "\n\n")
    assert two.valid and two.has_required_sections
    assert two.reason == "Keeps Architecture, Conventions"
    assert two.found_sections == ("Architecture", "Conventions")
    assert two.size == len(GOOD.strip())
    three = validate_prune_candidate(GOOD + "## Pitfalls\n")
    assert three.found_sections == REQUIRED_MEMORY_SECTIONS
    assert three.to_json()["foundSections"] == ["Architecture", "Conventions", "Pitfalls"]


def test_validate_counts_only_real_level_two_headings() -> None:
    # Fusion looks for "## Architecture" anywhere, so a deeper heading counted; memdesk fixes that (issue 9).
    assert not validate_prune_candidate("### Architecture\n### Pitfalls").valid


def test_validate_real_memory() -> None:
    text = REAL_MEMORY.read_text(encoding="utf-8")
    result = validate_prune_candidate(text)
    assert result.valid
    assert result.reason == "Keeps Architecture, Conventions, Pitfalls"
    assert result.size == len(text.strip())
    pruned = text[: text.index("## Conventions")]
    assert not validate_prune_candidate(pruned).valid


# ── applying ─────────────────────────────────────────────────────────────────────────────────


def test_apply_writes_exactly_one_trailing_newline(tmp_path: Path) -> None:
    write_memory(tmp_path, "old memory that is long enough\n" * 10)
    outcome = apply_memory_pruning(tmp_path, "\n\n" + GOOD + "\n\n\n")
    written = (tmp_path / MEMORY_WORKING_PATH).read_text(encoding="utf-8")
    assert written == GOOD.strip() + "\n"
    assert outcome.applied
    assert outcome.reason == "Prune candidate validated and applied"
    assert outcome.original_size == 310
    assert outcome.new_size == len(written)
    assert outcome.size_delta == len(written) - 310


def test_apply_candidate_without_newline_gets_one(tmp_path: Path) -> None:
    write_memory(tmp_path, GOOD + "## Pitfalls\n- old\n")
    outcome = apply_memory_pruning(tmp_path, GOOD.strip())
    assert (tmp_path / MEMORY_WORKING_PATH).read_bytes() == (GOOD.strip() + "\n").encode()
    assert outcome.new_size == len(GOOD.strip()) + 1


def test_apply_keeps_the_old_version_in_history(tmp_path: Path) -> None:
    old = GOOD + "## Pitfalls\n- transient note\n"
    write_memory(tmp_path, old)
    assert apply_memory_pruning(tmp_path, GOOD).applied
    versions = list_versions(tmp_path, MEMORY_WORKING_PATH)
    assert [v.source for v in versions] == ["prune"]
    stored = get_version(tmp_path, versions[0].id)
    assert stored is not None and stored[1] == old


@pytest.mark.parametrize("candidate", ["", "   ", "## Pitfalls only", None])
def test_invalid_candidate_leaves_file_byte_identical(tmp_path: Path, candidate: str | None) -> None:
    original = b"# Project Memory\r\n\r\n## Architecture\r\n- \xc3\xa9\r\n"
    (tmp_path / ".fusion").mkdir()
    (tmp_path / MEMORY_WORKING_PATH).write_bytes(original)
    outcome = apply_memory_pruning(tmp_path, candidate)
    assert not outcome.applied
    assert (outcome.size_delta, outcome.original_size, outcome.new_size) == (0, len(original.decode()), len(original.decode()))
    assert (tmp_path / MEMORY_WORKING_PATH).read_bytes() == original
    assert list_versions(tmp_path, MEMORY_WORKING_PATH) == []


def test_apply_none_means_not_offered(tmp_path: Path) -> None:
    outcome = apply_memory_pruning(tmp_path, None)
    assert outcome.reason == PRUNE_NOT_OFFERED_REASON and outcome.not_needed
    assert not (tmp_path / ".fusion").exists()


def test_apply_over_quota_is_reported_not_raised(tmp_path: Path) -> None:
    write_memory(tmp_path, GOOD)
    huge = GOOD + "## Pitfalls\n" + "x" * (fileio.MAX_FILE_SIZE + 1)
    outcome = apply_memory_pruning(tmp_path, huge)
    assert not outcome.applied
    assert "QUOTA_EXCEEDED" in outcome.reason
    assert (tmp_path / MEMORY_WORKING_PATH).read_text(encoding="utf-8") == GOOD


def test_apply_conflict_when_memory_changed(tmp_path: Path) -> None:
    write_memory(tmp_path, GOOD)
    stale = fileio.content_hash("what the AI saw")
    outcome = apply_memory_pruning(tmp_path, GOOD + "## Pitfalls\n", expected_hash=stale)
    assert not outcome.applied and "CONFLICT" in outcome.reason
    assert (tmp_path / MEMORY_WORKING_PATH).read_text(encoding="utf-8") == GOOD
    fresh = fileio.content_hash(GOOD)
    assert apply_memory_pruning(tmp_path, GOOD + "## Pitfalls\n", expected_hash=fresh).applied


def test_apply_non_utf8_memory_is_not_touched(tmp_path: Path) -> None:
    (tmp_path / ".fusion").mkdir()
    (tmp_path / MEMORY_WORKING_PATH).write_bytes(b"## Architecture\n\xff\n")
    outcome = apply_memory_pruning(tmp_path, GOOD)
    assert not outcome.applied and "not valid UTF-8" in outcome.reason
    assert (tmp_path / MEMORY_WORKING_PATH).read_bytes() == b"## Architecture\n\xff\n"


def test_apply_on_real_memory(real_project: Path) -> None:
    text = REAL_MEMORY.read_text(encoding="utf-8")
    keep = text[: text.index("## FN-1354")] + text[text.index("## Conventions") : text.index("## Color Theme")]
    keep += text[text.index("## Pitfalls") : text.index("## FN-1529")]
    outcome = apply_memory_pruning(real_project, keep)
    assert outcome.applied
    assert outcome.original_size == len(text)
    written = (real_project / MEMORY_WORKING_PATH).read_text(encoding="utf-8")
    assert written.endswith("\n") and not written.endswith("\n\n")
    assert outcome.new_size == len(written) and outcome.size_delta == len(written) - len(text)
    stored = get_version(real_project, list_versions(real_project, MEMORY_WORKING_PATH)[0].id)
    assert stored is not None and stored[1] == text
