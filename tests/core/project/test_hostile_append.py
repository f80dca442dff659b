"""Hostile inputs on the append and replace paths of the project model: a failed write changes no byte."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.errors import MemoryBackendError
from core.project import Project

REPO = Path(__file__).resolve().parents[3]
MEM = ".fusion/memory.md"


def seed(root: Path, text: str = "# Project Memory\n\n## Architecture\n\n- one\n") -> Path:
    (root / ".fusion").mkdir(parents=True, exist_ok=True)
    path = root / MEM
    path.write_text(text)
    return path


@pytest.mark.parametrize("written_first", [0, 7, 40])
def test_disk_full_mid_append_leaves_the_file_byte_identical(project, monkeypatch, written_first):
    path = seed(project)
    before = path.read_bytes()
    real_write = os.write
    calls = {"n": 0}

    def full_disk(fd, data):
        calls["n"] += 1
        if calls["n"] == 1 and written_first:
            return real_write(fd, bytes(data[:written_first]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises(MemoryBackendError) as exc:
        Project(project).append("an entry long enough to be cut in the middle by a full disk")
    monkeypatch.setattr(os, "write", real_write)
    assert exc.value.code == "WRITE_FAILED" and "No space left on device" in exc.value.message
    assert path.read_bytes() == before


def test_disk_full_on_fsync_rolls_back_too(project, monkeypatch):
    path = seed(project)
    before = path.read_bytes()

    def failing_fsync(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(MemoryBackendError):
        Project(project).append("entry")
    monkeypatch.undo()
    assert path.read_bytes() == before


def test_an_append_over_the_size_limit_writes_nothing(project):
    path = seed(project, "x" * (1_048_576 - 10))
    before = path.read_bytes()
    with pytest.raises(MemoryBackendError) as exc:
        Project(project).append("an entry that does not fit")
    assert exc.value.code == "QUOTA_EXCEEDED" and "1,048,576" in exc.value.message
    assert path.read_bytes() == before


def cli(root: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "core.cli", *args, "--project", str(root)], input=stdin,
                          capture_output=True, env=env, timeout=60)


@pytest.mark.parametrize("stdin", [b"", b"\n", b"   \n\t\n"])
def test_write_refuses_an_empty_replacement(project, stdin):
    path = seed(project)
    before = path.read_bytes()
    result = cli(project, "write", stdin=stdin)
    assert result.returncode == 2 and b"--allow-empty" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert path.read_bytes() == before


def test_a_failed_producer_in_a_pipe_does_not_empty_the_memory(project):
    path = seed(project)
    before = path.read_bytes()
    pipeline = f"false | {sys.executable} -m core.cli write --project {project}"
    result = subprocess.run(["bash", "-c", pipeline], capture_output=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 2 and path.read_bytes() == before


def test_write_allow_empty_empties_on_purpose_and_keeps_history(project):
    from core.storage.history import versions as history

    path = seed(project)
    before = path.read_text()
    result = cli(project, "write", "--allow-empty", stdin=b"")
    assert result.returncode == 0 and path.read_bytes() == b""
    assert history.get_version(project, history.list_versions(project, MEM)[0].id)[1] == before


def test_append_through_an_in_root_symlink_keeps_the_link(project):
    (project / ".fusion").mkdir()
    real = project / "notes" / "memory-real.md"
    real.parent.mkdir()
    real.write_text("# Project Memory\n")
    (project / MEM).symlink_to(Path("..") / "notes" / "memory-real.md")
    Project(project).append("through the link")
    assert (project / MEM).is_symlink()
    assert real.read_text().endswith("through the link")


def test_append_to_a_symlink_leaving_the_root_is_refused(project, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("secret\n")
    (project / ".fusion").mkdir()
    (project / MEM).symlink_to(outside)
    with pytest.raises(MemoryBackendError):
        Project(project).append("must not land outside")
    assert outside.read_text() == "secret\n"


def test_append_refuses_a_non_string_document_from_a_backend(project):
    seed(project)
    project_obj = Project(project)
    with pytest.raises(MemoryBackendError):
        project_obj.write(None, 12345)  # type: ignore[arg-type]
