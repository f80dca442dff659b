"""Today's changes under attack: memdesk's own flock lock, the one-read save path."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import filelock
import pytest

from core.errors import MemoryBackendError
from core.project import Project
from core.storage import fileio, locks
from core.storage.history import versions as history

pytestmark = pytest.mark.skipif(locks.fcntl is None, reason="flock is POSIX")

REPO = Path(__file__).resolve().parents[3]
MEM = ".fusion/memory.md"


def test_many_append_processes_at_once_land_every_entry_exactly_once(project: Path, tmp_path: Path):
    (project / ".fusion").mkdir()
    (project / MEM).write_text("# Project Memory\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO), "MEMDESK_CONFIG_DIR": str(tmp_path / "user-config")}
    script = ("import subprocess, sys\n"
              "for i in range(4):\n"
              "    r = subprocess.run([sys.executable, '-m', 'core.cli', 'append', f'entry {sys.argv[1]}-{i} zq',"
              " '-p', sys.argv[2]], capture_output=True, text=True)\n"
              "    assert r.returncode == 0, r.stderr\n")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(n), str(project)], env=env) for n in range(8)]
    assert [p.wait() for p in procs] == [0] * 8
    text = (project / MEM).read_text(encoding="utf-8")
    for n in range(8):
        for i in range(4):
            assert text.count(f"entry {n}-{i} zq") == 1, (n, i)
    assert text.startswith("# Project Memory\n")
    history.forget_connections(project)
    assert len(history.list_events(project, MEM)) == 32


def test_threads_of_one_process_and_a_filelock_process_exclude_one_another(project: Path):
    (project / ".fusion").mkdir()
    counter = project / ".fusion" / "counter"
    counter.write_text("0")
    lock_file = fileio.file_lock(project, MEM).lock_file
    other = ("import sys, filelock, pathlib\n"
             "p = pathlib.Path(sys.argv[2])\n"
             "for _ in range(200):\n"
             "    with filelock.FileLock(sys.argv[1]):\n"
             "        n = int(p.read_text()); p.write_text(str(n + 1))\n")
    proc = subprocess.Popen([sys.executable, "-c", other, lock_file, str(counter)])

    def bump() -> None:
        for _ in range(200):
            with fileio.file_lock(project, MEM):
                with fileio.file_lock(project, MEM):  # reentrant
                    n = int(counter.read_text())
                    counter.write_text(str(n + 1))

    threads = [threading.Thread(target=bump) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert proc.wait() == 0
    assert counter.read_text() == str(200 * 4)


def test_a_filelock_holder_in_this_process_excludes_memdesks_lock(project: Path):
    (project / ".fusion").mkdir()
    lock = fileio.file_lock(project, MEM)
    theirs = filelock.FileLock(lock.lock_file)
    with theirs:
        with pytest.raises(TimeoutError):
            lock.acquire(timeout=0)
    with lock, pytest.raises(filelock.Timeout):
        filelock.FileLock(lock.lock_file, timeout=0).acquire()


@pytest.mark.parametrize("kind", ["fifo", "folder", "symlink-out", "hardlink-out", "dangling"])
def test_a_planted_lock_file_changes_nothing_outside_and_saves_still_work_or_refuse(project: Path, tmp_path: Path,
                                                                                   kind: str):
    (project / ".fusion" / "memdesk" / "locks").mkdir(parents=True)
    (project / MEM).write_text("# Project Memory\n\nold\n", encoding="utf-8")
    lp = locks.lock_path_for(project, MEM)
    outside = tmp_path / "outside"
    outside.write_text("precious")
    if kind == "fifo":
        os.mkfifo(lp)
    elif kind == "folder":
        lp.mkdir()
    elif kind == "symlink-out":
        os.symlink(outside, lp)
    elif kind == "hardlink-out":
        os.link(outside, lp)
    else:
        os.symlink(tmp_path / "nowhere", lp)
    p = Project(project)
    try:
        p.write(MEM, "# Project Memory\n\nnew\n")
    except MemoryBackendError as exc:
        assert kind in {"fifo", "folder"}, exc
        assert "\n" not in str(exc)
        assert (project / MEM).read_text(encoding="utf-8") == "# Project Memory\n\nold\n"
    else:
        assert kind not in {"fifo", "folder"}
        assert (project / MEM).read_text(encoding="utf-8") == "# Project Memory\n\nnew\n"
        versions = history.list_versions(project, MEM)
        assert history.get_version(project, versions[0].id)[1] == "# Project Memory\n\nold\n"
    assert outside.read_text() == "precious"  # a planted link's target is never opened for writing
    assert not (tmp_path / "nowhere").exists()


def test_a_forked_child_waits_for_the_parents_lock_and_takes_it_after(project: Path):
    (project / ".fusion").mkdir()
    lock = fileio.file_lock(project, MEM)
    r, w = os.pipe()
    with lock:
        pid = os.fork()
        if pid == 0:  # child
            code = 1
            try:
                child = fileio.file_lock(project, MEM)
                try:
                    child.acquire(timeout=0)
                    code = 2  # got the parent's lock: wrong
                except TimeoutError:
                    os.write(w, b"x")
                    child.acquire(timeout=-1)  # waits for the parent's release
                    child.release()
                    code = 0
            finally:
                os._exit(code)
        assert os.read(r, 1) == b"x"
        assert lock.is_locked
        with pytest.raises(subprocess.CalledProcessError):  # the child closing its copies released nothing
            subprocess.run([sys.executable, "-c", "import sys, filelock; filelock.FileLock(sys.argv[1], timeout=0)"
                            ".acquire()", lock.lock_file], check=True, capture_output=True)
    _pid, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.parametrize("planted", ["symlink-out", "symlink-loop", "fifo", "hardlink"])
def test_a_save_through_a_planted_document_refuses_and_changes_nothing(project: Path, tmp_path: Path, planted: str):
    (project / ".fusion").mkdir()
    outside = tmp_path / "outside.md"
    outside.write_text("# Project Memory\n\noutside\n", encoding="utf-8")
    doc = project / MEM
    if planted == "symlink-out":
        os.symlink(outside, doc)
    elif planted == "symlink-loop":
        os.symlink(doc, doc)
    elif planted == "fifo":
        os.mkfifo(doc)
    else:
        os.link(outside, doc)
    p = Project(project)
    with pytest.raises(MemoryBackendError) as exc:
        p.write(MEM, "# Project Memory\n\nnew\n")
    assert "\n" not in str(exc.value)
    try:  # the bytes it already holds: refused, or (a hard link, as before today) nothing to write
        assert not p.write(MEM, outside.read_text(encoding="utf-8")).changed and planted == "hardlink"
    except MemoryBackendError as again:
        assert "\n" not in str(again)
    assert outside.read_text(encoding="utf-8") == "# Project Memory\n\noutside\n"
    assert not (project / ".fusion" / "memdesk" / "history.db").exists() or not history.list_versions(project, MEM)


def test_a_save_keeps_the_old_version_first_and_an_unchanged_save_writes_nothing(project: Path):
    (project / ".fusion").mkdir()
    doc = project / MEM
    doc.write_bytes("# Project Memory\r\n\r\nold é\r\n".encode())
    p = Project(project)
    st = os.stat(doc)
    r = p.write(MEM, "# Project Memory\r\n\r\nold é\r\n")  # same bytes, CRLF kept
    assert not r.changed and os.stat(doc).st_ino == st.st_ino
    r = p.write(MEM, "# Project Memory\n\nold é\n")  # only the line ends differ
    assert r.changed and doc.read_bytes() == "# Project Memory\n\nold é\n".encode()
    assert r.hash == fileio.sha256_hex(doc.read_bytes())
    versions = history.list_versions(project, MEM)
    assert history.get_version(project, versions[0].id)[1] == "# Project Memory\r\n\r\nold é\r\n"
    # A stale expected hash on an unchanged text is a conflict, not a silent success.
    with pytest.raises(MemoryBackendError) as exc:
        p.write(MEM, "# Project Memory\n\nold é\n", expected_hash=fileio.content_hash("something else"))
    assert exc.value.code == "CONFLICT"
    # Not UTF-8 on disk: never rewritten.
    doc.write_bytes(b"# Project Memory\n\n\xff\xfe\n")
    with pytest.raises(MemoryBackendError):
        p.write(MEM, "# Project Memory\n\nnew\n")
    assert doc.read_bytes() == b"# Project Memory\n\n\xff\xfe\n"
