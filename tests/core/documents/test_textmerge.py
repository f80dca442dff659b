"""core.documents.textmerge: change classification, append messages, text style round trips, three-way merge."""

from __future__ import annotations

from core.documents.textmerge import (
    MARK_MINE,
    MARK_SPLIT,
    MARK_THEIRS,
    TextStyle,
    appended_text,
    changed_lines,
    classify_change,
    count_conflicts,
    describe_append,
    detect_style,
    from_editor_text,
    merge3,
    to_editor_text,
)

BASE = "# Project Memory\n\n## Architecture\n\n- a\n\n## Pitfalls\n\n- b\n"


def test_classify_change() -> None:
    assert classify_change(BASE, BASE) == "same"
    assert classify_change(BASE, BASE + "\n\n<!-- 2026-01-02 -->\nnew") == "appended"
    assert classify_change(BASE, BASE.replace("- a", "- A")) == "other"
    assert classify_change(BASE, "") == "other"
    assert classify_change("", "anything") == "appended"


def test_appended_text_and_message() -> None:
    disk = BASE + "\n\n<!-- 2026-01-02 -->\none\n\n<!-- 2026-01-03 -->\ntwo"
    suffix = appended_text(BASE, disk)
    assert suffix == "\n\n<!-- 2026-01-02 -->\none\n\n<!-- 2026-01-03 -->\ntwo"
    assert describe_append(suffix) == "Merged 2 new entries appended on disk"
    assert describe_append("\n\n<!-- 2026-01-02 -->\none") == "Merged 1 new entry appended on disk"
    assert describe_append("- plain line\n") == "Merged 1 new line appended on disk"
    assert appended_text(BASE, "other") == ""


def test_text_style_round_trip() -> None:
    for text in ("a\r\nb\r\n", "\ufeffa\nb\n", "plain\n", "\ufeffx\r\ny"):
        style = detect_style(text)
        assert from_editor_text(to_editor_text(text), style) == text
    assert detect_style("a\r\nb") == TextStyle("\r\n", False)
    assert to_editor_text("a\rb\u2029c") == "a\nb\nc"


def test_merge3_takes_one_sided_changes() -> None:
    mine = BASE.replace("- a", "- a, edited by me")
    theirs = BASE.replace("- b", "- b, edited on disk")
    result = merge3(BASE, mine, theirs)
    assert result.conflicts == 0
    assert "- a, edited by me" in result.text and "- b, edited on disk" in result.text


def test_merge3_marks_overlapping_changes() -> None:
    mine = BASE.replace("- a", "- mine")
    theirs = BASE.replace("- a", "- theirs")
    result = merge3(BASE, mine, theirs)
    assert result.conflicts == 1
    lines = result.text.splitlines()
    i = lines.index(MARK_MINE)
    assert lines[i:i + 5] == [MARK_MINE, "- mine", MARK_SPLIT, "- theirs", MARK_THEIRS]
    assert count_conflicts(result.text) == 1
    assert count_conflicts(BASE) == 0


def test_merge3_same_change_and_trivial_cases() -> None:
    same = BASE.replace("- a", "- both")
    assert merge3(BASE, same, same).text == same
    assert merge3(BASE, BASE, same).text == same
    assert merge3(BASE, same, BASE).text == same


def test_merge3_end_of_file_without_newline() -> None:
    result = merge3("x\n", "x\nmine", "x\ntheirs")
    assert result.conflicts == 1
    assert result.text == f"x\n{MARK_MINE}\nmine\n{MARK_SPLIT}\ntheirs\n{MARK_THEIRS}\n"


def test_changed_lines() -> None:
    only_a, only_b = changed_lines("a\nb\nc\n", "a\nB\nc\nd\n")
    assert only_a == {1}
    assert only_b == {1, 3}


def test_merge3_combines_separate_random_edits() -> None:
    import random

    rng = random.Random(7)
    for _ in range(300):
        base = [f"line {i}\n" for i in range(rng.randint(8, 80))]
        cut = len(base) // 2
        i, k = rng.randrange(0, cut - 1), rng.randint(0, 1)  # mine changes base[i:i+k], before line cut-1
        j, m = rng.randrange(cut + 1, len(base)), rng.randint(0, 1)  # theirs changes base[j:j+m]
        x = [f"mine {n}\n" for n in range(rng.randint(0 if k else 1, 3))]
        y = [f"theirs {n}\n" for n in range(rng.randint(0 if m else 1, 3))]
        mine = base[:i] + x + base[i + k:]
        theirs = base[:j] + y + base[j + m:]
        expected = base[:i] + x + base[i + k:j] + y + base[j + m:]
        result = merge3("".join(base), "".join(mine), "".join(theirs))
        assert result.conflicts == 0
        assert result.text == "".join(expected)
