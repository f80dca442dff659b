"""core.documents.diff: aligned rows, word highlights in changed lines, and speed on a 1 MiB file."""

from __future__ import annotations

import random
import time
from difflib import SequenceMatcher
from pathlib import Path

import pytest

from core.documents.diff import DiffRow, apply_hunks, diff_line_opcodes, diff_texts, split_lines, word_spans

REAL_MEMORY = Path(__file__).resolve().parents[2] / "data" / "fusion-real" / ".fusion" / "memory.md"


def spans_text(line: str, spans) -> list[str]:
    return [line[a:b] for a, b in spans]


def assert_valid(a: list[str], b: list[str]) -> int:
    """The opcodes rebuild both sides and ``equal`` ranges really are equal; return the lines kept."""
    left, right, kept = [], [], 0
    for tag, i1, i2, j1, j2 in diff_line_opcodes(a, b):
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2]
            kept += i2 - i1
        left += a[i1:i2]
        right += b[j1:j2]
    assert (left, right) == (a, b)
    return kept


def test_word_highlights_mark_only_the_changed_words() -> None:
    old = "- Use leases renewed by heartbeats (source: TP-47)"
    new = "- Use short leases renewed by worker heartbeats (source: TP-48)"
    left, right = word_spans(old, new)
    assert spans_text(old, left) == ["47"]
    assert spans_text(new, right) == ["short", "worker", "48"]


def test_rows_pair_changed_lines_and_align_the_rest() -> None:
    old = "# Memory\n\n## Architecture\n- claim with SKIP LOCKED\n- old note\n\n## Pitfalls\n- pgbouncer drops LISTEN\n"
    new = "# Memory\n\n## Architecture\n- claim with FOR UPDATE SKIP LOCKED\n\n## Pitfalls\n- pgbouncer drops LISTEN\n- new\n"
    result = diff_texts(old, new)
    kinds = [row.kind for row in result.rows]
    assert kinds == ["equal", "equal", "equal", "replace", "delete", "equal", "equal", "equal", "insert"]
    changed = result.rows[3]
    assert (changed.left_no, changed.right_no) == (4, 4)
    assert spans_text(changed.right, changed.right_spans) == ["FOR UPDATE"]
    assert changed.left_spans == ()
    assert result.rows[4] == DiffRow("delete", "- old note", None, 5, None)
    assert result.rows[8] == DiffRow("insert", None, "- new", None, 8)
    assert (result.removed, result.added, result.changed) == (1, 1, 1)
    assert result.hunk_starts() == [3, 8]


def test_identical_and_empty_texts() -> None:
    assert diff_texts("a\nb\n", "a\nb\n").identical
    assert diff_texts("", "").rows == []
    only_new = diff_texts("", "x\ny")
    assert [r.kind for r in only_new.rows] == ["insert", "insert"] and only_new.added == 2
    assert split_lines("a\r\nb\n") == ["a", "b"]


def test_matches_difflib_on_real_memory_edits() -> None:
    lines = REAL_MEMORY.read_text(encoding="utf-8").splitlines()
    rng = random.Random(7)
    edited = []
    for line in lines:
        roll = rng.random()
        if roll < 0.05:
            continue
        edited.append(line.replace("the", "THE") if roll < 0.08 else line)
        if roll > 0.99:
            edited.append("- a new entry")
    best = sum(n for *_, n in SequenceMatcher(None, lines, edited, autojunk=False).get_matching_blocks())
    assert assert_valid(lines, edited) >= best


def _one_mib_inputs() -> tuple[str, str]:
    real = REAL_MEMORY.read_text(encoding="utf-8")
    copies = 1_048_576 // len(real.encode("utf-8"))
    old = real * copies
    rng = random.Random(1)
    new = "".join(line for line in old.splitlines(keepends=True) if rng.random() >= 0.3)
    return old, new


def test_one_mib_against_700_kib_is_fast_and_minimal() -> None:
    old, new = _one_mib_inputs()
    assert 1_000_000 < len(old.encode()) <= 1_048_576 and 680_000 < len(new.encode()) < 760_000
    start = time.perf_counter()
    result = diff_texts(old, new)
    elapsed = time.perf_counter() - start
    assert assert_valid(split_lines(old), split_lines(new)) == len(split_lines(new))  # only deletions found
    assert result.added == result.changed == 0
    assert result.removed == len(split_lines(old)) - len(split_lines(new))
    assert elapsed < 2.0, f"diff took {elapsed:.2f} s"  # ~0.2 s on a developer machine; slack for CI


def test_large_replacements_fall_back_to_whole_line_highlights() -> None:
    old = "\n".join(f"line {i} alpha" for i in range(5000))
    new = "\n".join(f"line {i} beta" for i in range(5000))
    result = diff_texts(old, new)
    assert result.changed == 5000
    assert spans_text(result.rows[0].left, result.rows[0].left_spans) == ["alpha"]
    last = result.rows[-1]
    assert last.left_spans == ((0, len(last.left)),)


# -- hunks -----------------------------------------------------------------------------------------
def test_hunks_cover_each_run_of_changed_rows() -> None:
    old = "# Memory\n\n## Architecture\n- claim with SKIP LOCKED\n- old note\n\n## Pitfalls\n- pgbouncer drops LISTEN\n"
    new = "# Memory\n\n## Architecture\n- claim with FOR UPDATE SKIP LOCKED\n\n## Pitfalls\n- pgbouncer drops LISTEN\n- new\n"
    result = diff_texts(old, new)
    first, second = result.hunks
    assert (first.row_start, first.row_end, first.removed, first.added) == (3, 5, 2, 1)
    assert (second.row_start, second.row_end, second.removed, second.added) == (8, 9, 0, 1)
    assert result.hunk_at(4) == first and result.hunk_at(5) is None and result.hunk_at(8) == second
    assert apply_hunks(old, new, result.hunks, [0]) == new.replace("- new\n", "")
    assert apply_hunks(old, new, result.hunks, [1]) == old + "- new\n"
    assert apply_hunks(old, new, result.hunks, [0, 1]) == new
    assert apply_hunks(old, new, result.hunks, []) == old


def test_applying_a_subset_keeps_every_other_byte() -> None:
    lines = REAL_MEMORY.read_text(encoding="utf-8").splitlines(keepends=True)
    rng = random.Random(3)
    new = "".join(line.replace("the", "THE") if rng.random() < 0.03 else line
                  for line in lines if rng.random() >= 0.1)
    old = "".join(lines)
    result = diff_texts(old, new)
    assert len(result.hunks) > 20
    for _ in range(20):
        chosen = {h.index for h in result.hunks if rng.random() < 0.5}
        text = apply_hunks(old, new, result.hunks, chosen)
        expected: list[str] = []
        a, b = split_lines(old), split_lines(new)
        i = 0
        for h in result.hunks:
            expected += a[i:h.old_start] + (b[h.new_start:h.new_end] if h.index in chosen else a[h.old_start:h.old_end])
            i = h.old_end
        expected += a[i:]
        assert split_lines(text) == expected
        assert text.endswith("\n")


def test_missing_final_newline_and_crlf_are_kept() -> None:
    old = "a\r\nb\r\nc"
    new = "a\r\nc\r\nd\n"
    result = diff_texts(old, new)
    assert [(h.old_start, h.old_end, h.new_start, h.new_end) for h in result.hunks] == [(1, 2, 1, 1), (3, 3, 2, 3)]
    assert apply_hunks(old, new, result.hunks, [0]) == "a\r\nc"
    assert apply_hunks(old, new, result.hunks, [1]) == "a\r\nb\r\nc\nd\n"


def test_a_line_with_a_unicode_separator_stays_one_line() -> None:
    old = "- one\u2028still one\x0c\n- two\n"
    new = "- two\n"
    result = diff_texts(old, new)
    assert len(result.rows) == 2 and result.rows[0].left == "- one\u2028still one\x0c"
    assert apply_hunks(old, new, result.hunks, []) == old


def test_hunks_from_other_texts_are_refused() -> None:
    result = diff_texts("a\nb\nc\n", "a\nc\n")
    with pytest.raises(ValueError):
        apply_hunks("x\n", "a\nc\n", result.hunks, [0])
    with pytest.raises(ValueError):
        apply_hunks("a\nb\nc\n", "a\nc\n", result.hunks, [5])
