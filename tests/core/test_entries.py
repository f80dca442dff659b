"""Appending entries (seed 002 §5 acceptance table), rotation to the archive, concurrent appenders."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import date
from pathlib import Path

import pytest

from core.cli import main as cli_main
from core.entries import (
    MEMORY_ARCHIVE_PATH,
    append_memory_entry,
    format_entry,
    split_dated_entries,
    tool_message,
)

REL = ".fusion/memory.md"
DAY = date(2026, 11, 29)


# -- seed 002 §5 acceptance rows ----------------------------------------------------------------
def test_row1_empty_content_is_skipped_and_creates_no_file(project):
    result = append_memory_entry(project, "")
    assert result.status == "skipped_empty" and result.file_path is None
    assert not (project / ".fusion").exists()  # no I/O at all, not even mkdir


@pytest.mark.parametrize("blank", ["   \n\t  ", None, "\n\n"])
def test_whitespace_only_is_skipped_without_io(project, blank):
    assert append_memory_entry(project, blank).status == "skipped_empty"
    assert not (project / ".fusion").exists()


def test_row2_same_content_twice_gives_one_entry(project):
    assert append_memory_entry(project, "abc", today=DAY).status == "written"
    size = (project / REL).stat().st_size
    second = append_memory_entry(project, "abc", today=DAY)
    assert second.status == "skipped_duplicate" and second.file_path == project / REL
    assert (project / REL).stat().st_size == size
    assert (project / REL).read_text().count("abc") == 1


def test_row3_distinct_contents_give_two_entries(project):
    append_memory_entry(project, "abc", today=DAY)
    append_memory_entry(project, "def", today=DAY)
    assert (project / REL).read_text() == "\n\n<!-- 2026-11-29 -->\nabc\n\n<!-- 2026-11-29 -->\ndef"


def test_row4_and_5_the_tool_wrapper_delegates_and_has_no_io_of_its_own():
    import core.cli.memory_cmds as tool

    source = Path(tool.__file__).read_text()
    assert "project.append(" in source  # the one shared writer (append_memory_entry wraps it too)
    wrapper = Path(__import__("core.entries", fromlist=["x"]).__file__).read_text()
    assert ".append(content" in wrapper and "open(" not in wrapper
    assert "open(" not in source and "import os" not in source and "write_text" not in source


def test_row6_and_7_cli_messages(project, capsys):
    assert cli_main(["append", "--project", str(project), "first lesson"]) == 0
    assert capsys.readouterr().out.strip() == f"Memory written to project scope ({project / REL})"
    assert cli_main(["append", "--project", str(project), "first lesson"]) == 0
    assert capsys.readouterr().out.strip() == f"Memory entry already present (no-op) — {project / REL}"
    assert cli_main(["append", "--project", str(project), "  "]) == 2
    assert capsys.readouterr().err.strip() == "Error: VALIDATION_ERROR — memory_write content cannot be empty"


def test_entry_is_trimmed_and_dated(project):
    append_memory_entry(project, "  spaced out \n", today=DAY)
    assert (project / REL).read_text() == "\n\n<!-- 2026-11-29 -->\nspaced out"
    assert format_entry(" x ", DAY) == "\n\n<!-- 2026-11-29 -->\nx"


def test_substring_already_present_is_duplicate(project):
    (project / ".fusion").mkdir()
    (project / REL).write_text("# Project Memory\n\n- Use the lease clock for expiry\n")
    assert append_memory_entry(project, "lease clock").status == "skipped_duplicate"


def test_append_keeps_existing_bytes(real_project):
    before = (real_project / REL).read_bytes()
    append_memory_entry(real_project, "New durable learning", today=DAY)
    after = (real_project / REL).read_bytes()
    assert after == before + b"\n\n<!-- 2026-11-29 -->\nNew durable learning"


def test_tool_message_unknown_status():
    from core.entries import AppendResult

    assert "unknown status" in tool_message(AppendResult("weird", None))  # type: ignore[arg-type]


# -- rotation ------------------------------------------------------------------------------------
def test_rotation_moves_oldest_dated_entries_to_archive_and_deletes_nothing(project):
    (project / ".fusion").mkdir()
    head = "# Project Memory\n\n## Architecture\n\n- durable\n"
    (project / REL).write_text(head)
    for i in range(12):
        append_memory_entry(project, f"entry {i:02d}", today=date(2026, 10, 1 + i), max_lines=20)
    memory = (project / REL).read_text()
    archive = (project / MEMORY_ARCHIVE_PATH).read_text()
    assert memory.startswith(head) and memory.count("\n") + 1 <= 20
    for i in range(12):
        assert (f"entry {i:02d}" in memory) != (f"entry {i:02d}" in archive)
    assert "entry 00" in archive and "entry 11" in memory
    _head, kept = split_dated_entries(memory)
    assert [d for d, _ in kept] == sorted(d for d, _ in kept)


def test_undated_memory_is_never_rotated(real_project):
    before = (real_project / REL).read_text()
    append_memory_entry(real_project, "one more", max_lines=100)
    text = (real_project / REL).read_text()
    assert text.startswith(before)  # only the new (newest) entry exists; it always stays


# -- concurrency ---------------------------------------------------------------------------------
WORKER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[3])
    from core.entries import append_memory_entry
    root, worker = sys.argv[1], int(sys.argv[2])
    for i in range(50):
        r = append_memory_entry(root, f"worker {worker:02d} entry {i:03d} ok")
        assert r.status == "written", r
    """
)


def test_eight_processes_appending_fifty_each_all_land_exactly_once(project):
    repo = str(Path(__file__).resolve().parents[2])
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(project), str(w), repo]) for w in range(8)]
    assert [p.wait(timeout=120) for p in procs] == [0] * 8
    text = (project / REL).read_text()
    for w in range(8):
        for i in range(50):
            assert text.count(f"worker {w:02d} entry {i:03d} ok") == 1
    assert text.count("<!-- ") == 400
