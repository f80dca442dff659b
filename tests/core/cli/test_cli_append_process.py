"""``memdesk append`` as its own process, as agents run it: the entry, its history event and the rotation."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from core.project.appending import ARCHIVE_HEADER, DEFAULT_MAX_LINES, format_entry, split_dated_entries
from core.storage.history import versions as history

REPO = Path(__file__).resolve().parents[3]
MEM = ".fusion/memory.md"
ARCHIVE = ".fusion/memory-archive.md"


def cli_append(root: Path, tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "MEMDESK_CONFIG_DIR": str(tmp_path / "user-config")}
    return subprocess.run([sys.executable, "-m", "core.cli", "append", text, "-p", str(root)], env=env,
                          capture_output=True, text=True, check=False)


def over_budget(root: Path) -> str:
    """A seed memory of dated entries well over the default line budget (the next append rotates it)."""
    entries = "".join(f"\n\n<!-- 2026-01-{1 + i % 28:02d} -->\nentry number {i} about module {i % 37}"
                      for i in range(DEFAULT_MAX_LINES))
    text = "# Project Memory\n\n## Architecture\n\n- the head stays\n" + entries
    (root / ".fusion").mkdir(parents=True, exist_ok=True)
    (root / MEM).write_text(text, encoding="utf-8")
    return text


def test_an_append_process_records_its_event_and_rotates_losing_nothing(project: Path, tmp_path: Path):
    original = over_budget(project)
    done = cli_append(project, tmp_path, "a process entry 4711")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Memory written to project scope")
    memory = (project / MEM).read_text(encoding="utf-8")
    archive = (project / ARCHIVE).read_text(encoding="utf-8")
    assert memory.endswith("\na process entry 4711") and archive.startswith(ARCHIVE_HEADER)
    assert memory.count("\n") + 1 <= DEFAULT_MAX_LINES  # rotated to under the budget
    # Every entry is in exactly one of the two files, the head stays, nothing is lost.
    head, before = split_dated_entries(original)
    kept_head, kept = split_dated_entries(memory)
    archive_head, archived = split_dated_entries(archive)
    assert (kept_head, archive_head) == (head, ARCHIVE_HEADER) and archived
    assert kept[-1][1] == format_entry("a process entry 4711")
    assert sorted(kept[:-1] + archived) == sorted(before)
    # The event names the process's source; the text the rotation replaced is kept byte-exact.
    events = history.list_events(project, MEM)
    assert [(e.source, e.text) for e in events] == [("cli-append", "a process entry 4711")]
    rotated = [v for v in history.list_versions(project, MEM) if v.source == "rotate"]
    assert len(rotated) == 1
    found = history.get_version(project, rotated[0].id)
    assert found is not None and found[1].startswith(original) and found[1].endswith("\na process entry 4711")
    # A second process opens the history that now exists ahead of its event.
    again = cli_append(project, tmp_path, "a second process entry")
    assert again.returncode == 0, again.stderr
    history.forget_connections(project)
    events = history.list_events(project, MEM)
    assert [e.text for e in events] == ["a second process entry", "a process entry 4711"]
    assert (project / MEM).read_text(encoding="utf-8") == memory + format_entry("a second process entry")


def test_a_damaged_history_does_not_stop_an_append_process(project: Path, tmp_path: Path):
    (project / ".fusion" / "memdesk").mkdir(parents=True)
    (project / MEM).write_text("# Project Memory\n", encoding="utf-8")
    db = project / ".fusion" / "memdesk" / "history.db"
    db.write_bytes(b"not a database at all " * 100)
    done = cli_append(project, tmp_path, "written even so")
    assert done.returncode == 0, done.stderr
    assert (project / MEM).read_text(encoding="utf-8").endswith("\nwritten even so")
    assert db.read_bytes() == b"not a database at all " * 100  # left for the operator to move aside


def test_a_duplicate_append_touches_no_history(project: Path, tmp_path: Path):
    (project / ".fusion").mkdir()
    (project / MEM).write_text("# Project Memory\n\nalready here\n", encoding="utf-8")
    done = cli_append(project, tmp_path, "already here")
    assert done.returncode == 0 and "already present" in done.stdout
    assert not (project / ".fusion" / "memdesk" / "history.db").exists()
    assert cli_append(project, tmp_path, "new one").returncode == 0
    db = project / ".fusion" / "memdesk" / "history.db"
    before = db.read_bytes()
    assert "already present" in cli_append(project, tmp_path, "new one").stdout
    assert db.read_bytes() == before
