"""Appends at O(entry) (issue 19, item 7): a quiet append neither reads nor plans over the whole file.

The rotation trigger is a tally kept between appends (lines, the dated entries' lines, the newest
entry); it must equal a count over the whole text after any run of appends, including ones from other
writers, and a rotation must still happen when it is due.
"""

from __future__ import annotations

import random
from datetime import date
from pathlib import Path

from core.entries import MEMORY_ARCHIVE_PATH, append_memory_entry, split_dated_entries
from core.project import appending

REL = ".fusion/memory.md"
REAL = Path(__file__).resolve().parents[2] / "data" / "fusion-real" / ".fusion" / "memory.md"


def real_repeated(size: int) -> str:
    data = REAL.read_bytes()
    data = (data * (size // len(data) + 1))[:size]
    return data[:data.rindex(b"\n") + 1].decode("utf-8")


def test_the_tally_kept_across_appends_equals_a_whole_count():
    rng = random.Random(7)
    text = real_repeated(30_000)
    tally = appending._tally_of(text)
    for i in range(300):
        kind = rng.random()
        if kind < 0.6:  # a memdesk entry
            add = appending.format_entry(f"entry {i}", date(2026, 1 + i % 12, 1 + i % 28))
        elif kind < 0.8:  # an agent's >> line, no marker
            add = f"\n- agent line {i}\n"
        else:  # a marker cut in two by the end of one addition
            add = "\n\n<!-- 2026-"
            text += add
            tally = appending._tally_after(tally, text)
            add = f"05-0{1 + i % 9} -->\ncut entry {i}"
        text += add
        tally = appending._tally_after(tally, text)
        assert tally == appending._tally_of(text), i
    # A text that is not the counted one plus an addition is counted afresh.
    other = "x" * (len(text) + 5)
    assert appending._tally_after(tally, other) == appending._tally_of(other)


def test_a_quiet_append_to_an_undated_memory_over_budget_plans_nothing(project, monkeypatch):
    (project / ".fusion").mkdir()
    (project / REL).write_text(real_repeated(1_000_000))  # 12,400 lines, none dated: nothing can move
    plans, reads = [], []
    real_plan = appending.plan_rotation
    monkeypatch.setattr(appending, "plan_rotation", lambda *a: plans.append(1) or real_plan(*a))
    from core.project import Project

    real_read = Project.read
    monkeypatch.setattr(Project, "read", lambda self, *a, **k: reads.append(a) or real_read(self, *a, **k))
    for i in range(30):
        assert append_memory_entry(project, f"quiet entry {i}").status == "written"
    assert plans == [] and reads == []  # no rotation pass read or planned the file
    text = (project / REL).read_text()
    assert all(f"quiet entry {i}" in text for i in range(30))


def test_rotation_still_happens_when_due_after_quiet_appends(project):
    (project / ".fusion").mkdir()
    head = "# Project Memory\n\n## Architecture\n\n" + "".join(f"- durable {i}\n" for i in range(30))
    (project / REL).write_text(head)
    for i in range(40):
        append_memory_entry(project, f"entry {i:02d}", today=date(2026, 10, 1 + i % 28), max_lines=60)
    memory = (project / REL).read_text()
    archive = (project / MEMORY_ARCHIVE_PATH).read_text()
    assert memory.startswith(head) and memory.count("\n") + 1 <= 66
    for i in range(40):
        assert (f"entry {i:02d}\n" in memory + "\n") != (f"entry {i:02d}\n" in archive + "\n"), i
    _head, kept = split_dated_entries(memory)
    assert kept and "entry 39" in kept[-1][1]
