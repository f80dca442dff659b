"""Hostile lock files and forked writers (issue 9 items 7 and 13)."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from core.entries import append_memory_entry
from core.errors import MemoryBackendError
from core.storage import fileio, saving
from tests.core.hostile import snapshot

REL = ".fusion/memory.md"
VICTIM = b"precious victim bytes\n"


@pytest.fixture
def planted(project: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    (project / ".fusion").mkdir()
    (project / REL).write_text("# Project Memory\n")
    victim = tmp_path / "victim.txt"
    victim.write_bytes(VICTIM)
    lock = fileio.lock_path_for(project.resolve(), REL)
    lock.parent.mkdir(parents=True)
    return project, victim, lock


@pytest.mark.parametrize("how", ["symlink-to-victim", "dangling-symlink", "hard-link-to-victim",
                                 "symlink-to-dev-null"])
def test_planted_lock_neither_truncates_nor_blocks(planted, how):
    project, victim, lock = planted
    if how == "symlink-to-victim":
        lock.symlink_to(victim)
    elif how == "dangling-symlink":
        lock.symlink_to(victim.parent / "created-by-lock")
    elif how == "hard-link-to-victim":
        os.link(victim, lock)
    else:
        lock.symlink_to("/dev/null")
    for i in range(3):  # writes keep working, not only the first
        saving.replace_text(project, REL, f"# Project Memory\n\nversion {i}\n")
    assert (project / REL).read_text() == "# Project Memory\n\nversion 2\n"
    assert victim.read_bytes() == VICTIM
    assert not (victim.parent / "created-by-lock").exists()
    assert lock.is_file() and not lock.is_symlink() and os.stat(lock).st_nlink == 1


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_lock_path_that_is_not_a_file_is_a_clear_error(planted, kind):
    project, _victim, lock = planted
    if kind == "folder":
        lock.mkdir()
    else:
        os.mkfifo(lock)
    before = snapshot(project)
    with pytest.raises(MemoryBackendError) as info:
        saving.replace_text(project, REL, "new\n")
    message = info.value.message
    assert str(lock) in message and "remove it" in message and "\n" not in message
    assert snapshot(project) == before


def test_lock_name_with_odd_characters_stays_in_the_locks_folder(project):
    lock = fileio.lock_path_for(project, "a/" + "b" * 400 + "\x00")
    assert lock.parent == project / ".fusion" / "memdesk" / "locks" and len(lock.name) < 255


# -- item 13: locks survive fork ---------------------------------------------------------------------------------

def _append_entries(args: tuple[str, int]) -> str:
    root, worker = args
    statuses = []
    for i in range(10):
        statuses.append(append_memory_entry(root, f"worker {worker} entry {i}", max_lines=None).status)
    return ",".join(statuses)


def _append_raw(args: tuple[str, int]) -> int:
    root, worker = args
    for i in range(10):
        with fileio.file_lock(root, REL):
            fileio.append_bytes(root, REL, f"raw {worker} {i}\n".encode())
    return os.getpid()


@pytest.mark.parametrize("job", ["entries", "raw"])
def test_forked_processes_append_concurrently(project, job):
    (project / ".fusion").mkdir()
    (project / REL).write_text("# Project Memory\n")
    # The parent uses (and caches) the lock before forking, as a pre-forking server does.
    saving.replace_text(project, REL, "# Project Memory\n\nstart\n")
    with fileio.file_lock(project, REL):
        pass
    ctx = multiprocessing.get_context("fork")
    work = _append_entries if job == "entries" else _append_raw
    with ctx.Pool(4) as pool:
        results = pool.map(work, [(str(project), w) for w in range(4)])
    text = (project / REL).read_text()
    for w in range(4):
        for i in range(10):
            needle = f"worker {w} entry {i}" if job == "entries" else f"raw {w} {i}\n"
            assert text.count(needle) == 1, (needle, results)
    with fileio.file_lock(project, REL):  # the parent's lock still works after the children
        pass
