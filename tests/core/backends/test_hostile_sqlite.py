"""The sqlite backend against clock tricks and links out of the root (issue 9 items 3 and 6)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from core.backends.sqlite import SqliteMemoryBackend
from core.errors import MemoryBackendError
from core.storage.history import versions as history
from tests.core.hostile import snapshot

MEMORY = ".fusion/memory.md"
AGENT_LINE = "\n\n<!-- 2026-03-01 -->\nthe agent's entry that must survive\n"


@pytest.fixture
def backend(project: Path):
    b = SqliteMemoryBackend()
    b.initialize({}, project)
    b.write("# Project Memory\n\n- from memdesk\n")
    yield b
    b.shutdown()


def _cp_p(path: Path, text: str) -> None:
    """An agent's edit whose modification time is then set far in the past (``cp -p``, an old checkout)."""
    path.write_text(text)
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))


def _skewed_clock(path: Path, text: str) -> None:
    """An edit on a machine whose clock is a minute behind (a network share)."""
    path.write_text(text)
    behind = time.time_ns() - 60_000_000_000
    os.utime(path, ns=(behind, behind))


def _rsync_t(path: Path, text: str) -> None:
    """``rsync -t``: a new file renamed over the mirror, keeping the old file's modification time."""
    st = path.stat()
    tmp = path.with_name(".memory.md.rsync")
    tmp.write_text(text)
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, path)


def _same_size_same_mtime(path: Path, text: str) -> None:
    """An edit of the same length whose modification time is put back: only the content tells."""
    st = path.stat()
    path.write_text(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


EDITS = {"cp-p": _cp_p, "clock-skew": _skewed_clock, "rsync-t": _rsync_t}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_agent_edit_with_an_old_mtime_is_imported_not_overwritten(backend, project, edit):
    path = project / MEMORY
    time.sleep(0.01)
    EDITS[edit](path, path.read_text() + AGENT_LINE)
    assert "the agent's entry that must survive" in backend.read()
    assert "the agent's entry that must survive" in path.read_text()
    with pytest.raises(MemoryBackendError) as info:  # a save from the stale text must not drop it
        backend.write("# Project Memory\n", expected_hash="0" * 64)
    assert info.value.code == "CONFLICT"


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_agent_edit_with_an_old_mtime_survives_a_write(backend, project, edit):
    path = project / MEMORY
    EDITS[edit](path, path.read_text() + AGENT_LINE)
    backend.write(backend.read() + "- and the operator's line\n")
    text = path.read_text()
    assert "the agent's entry that must survive" in text and "the operator's line" in text


def test_same_size_edit_with_its_mtime_put_back_is_seen(backend, project):
    path = project / MEMORY
    backend.read()  # a look that found everything in step
    time.sleep(2.1)  # past the timestamp-granularity window, so that look could be trusted
    backend.read()
    before = path.read_text()
    edited = before.replace("from memdesk", "FROM AGENTS!")
    _same_size_same_mtime(path, edited)
    assert path.stat().st_size == len(before.encode())
    assert "FROM AGENTS" in backend.read()


def test_mirror_linked_out_of_the_root_is_never_imported(project, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "id_rsa").write_text("-----BEGIN SECRET KEY-----\n")
    (project / ".fusion").mkdir()
    (project / MEMORY).symlink_to(outside / "id_rsa")
    before = snapshot(outside)
    b = SqliteMemoryBackend()
    b.initialize({}, project)
    try:
        assert "SECRET" not in b.read()
        with pytest.raises(MemoryBackendError):
            b.write("# Project Memory\n")  # the database keeps it; the mirror out of the root is refused
        assert "SECRET" not in b.read()
    finally:
        b.shutdown()
    for db in (project / ".fusion" / "memdesk").glob("*.db"):
        assert b"SECRET" not in db.read_bytes()
    assert all("SECRET" not in (history.get_version(project, v.id) or ("", ""))[1]
               for v in history.list_versions(project))
    assert snapshot(outside) == before


def test_a_crash_between_the_commit_and_the_mirror_append_keeps_the_entry_once_and_the_agents_lines(project,
                                                                                                      monkeypatch):
    """sqlite: memdesk dies after its entry committed and before (or part-way through) its append to the
    mirror; agents append meanwhile. On the next look the entry is there once, whole, and every agent line."""
    from core.backends import mirror_ledger

    class Died(BaseException):
        pass

    b = SqliteMemoryBackend()
    b.initialize({}, project)
    b.write("# Project Memory\n")
    entry = "\n\n<!-- 2026-12-01 -->\nmemdesk's entry, cut by a crash"

    def dies_part_way(fd: int, view: memoryview) -> int:
        os.write(fd, view[:9])
        raise Died

    with monkeypatch.context() as m, pytest.raises(Died):
        m.setattr(mirror_ledger, "_write", dies_part_way)
        b.append_document(MEMORY, lambda current: entry)
    b.shutdown()
    with (project / MEMORY).open("a", encoding="utf-8") as fh:  # an agent, after the crash
        fh.write("\n- the agent's line\n")
    again = SqliteMemoryBackend()
    again.initialize({}, project)
    try:
        text = again.read()
        again.append_document(MEMORY, lambda current: "\n- next\n")
        after = again.read()
    finally:
        again.shutdown()
    assert text.count("memdesk's entry, cut by a crash") == 1 and text.count("the agent's line") == 1
    assert (project / MEMORY).read_text(encoding="utf-8") == after
    assert after.count("memdesk's entry") == 1 and after.count("the agent's line") == 1 and after.endswith("- next\n")
