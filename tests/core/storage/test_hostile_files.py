"""Hostile project state against core.storage.fileio (issue 9 items 1, 5, 6, 11): failed writes, links, odd files."""

from __future__ import annotations

import errno
import os
import textwrap
from pathlib import Path

import pytest

from core.errors import MemoryBackendError
from core.storage import fileio, saving
from core.storage.history import versions as history
from tests.core.hostile import one_line, run_cli, run_python, snapshot

REL = ".fusion/memory.md"
OLD = "# Project Memory\n\n## Architecture\n\n- keep me\n"


@pytest.fixture
def memory(project: Path) -> Path:
    path = project / REL
    path.parent.mkdir(parents=True)
    path.write_text(OLD)
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the project holding a secret; tests assert it is never read nor changed."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "id_rsa").write_text("-----BEGIN SECRET KEY-----\n")
    return folder


# -- item 1: a failed write leaves the file byte-identical ------------------------------------------------

@pytest.mark.parametrize("failing", ["write", "fsync", "chmod", "rename"])
def test_failed_replace_leaves_file_byte_identical(memory, project, monkeypatch, failing):
    def enospc(*_a, **_k):
        raise OSError(errno.ENOSPC, "No space left on device")

    if failing == "write":
        real_fdopen = os.fdopen

        class Full:
            def __init__(self, fh):
                self.fh = fh

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.fh.close()

            def write(self, data):
                self.fh.write(data[: len(data) // 2])  # half the bytes land, then the disk is full
                enospc()

        monkeypatch.setattr(fileio.os, "fdopen", lambda fd, mode: Full(real_fdopen(fd, mode)))
    elif failing == "rename":
        monkeypatch.setattr(fileio, "_rename", enospc)
    else:
        monkeypatch.setattr(fileio.os, failing, enospc)
    with pytest.raises(MemoryBackendError) as info:
        saving.replace_text(project, REL, "x" * 5000, keep_history=False)
    assert info.value.code == "WRITE_FAILED" and "No space left" in info.value.message
    assert memory.read_bytes() == OLD.encode()
    assert sorted(p.name for p in memory.parent.iterdir() if p.is_file()) == ["memory.md"]  # no temp left


def test_real_file_size_limit_mid_write_leaves_file_intact(memory, project):
    # RLIMIT_FSIZE makes the kernel refuse the write part-way (EFBIG), as a full disk does.
    result = run_python(textwrap.dedent(f"""
        import resource, signal
        from core.storage import fileio, saving
        from core.errors import MemoryBackendError
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (3000, 3000))
        try:
            saving.replace_text({str(project)!r}, {REL!r}, "y" * 8000, keep_history=False)
        except MemoryBackendError as exc:
            print("refused", exc.code)
    """))
    assert "refused WRITE_FAILED" in result.stdout, result.stderr
    assert memory.read_bytes() == OLD.encode()


def test_append_that_hits_the_limit_rolls_back(memory, project):
    result = run_python(textwrap.dedent(f"""
        import resource, signal
        from core.storage import fileio, saving
        from core.errors import MemoryBackendError
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200))
        try:
            fileio.append_bytes({str(project)!r}, {REL!r}, b"\\n\\n<!-- 2026-01-01 -->\\n" + b"z" * 1000)
        except MemoryBackendError as exc:
            print("refused", exc.code, exc.message)
    """))
    assert "refused WRITE_FAILED" in result.stdout, result.stderr
    assert memory.read_bytes() == OLD.encode()  # not half an entry


def test_rollback_append_truncates_to_the_original_size(memory, project):
    fd = fileio.open_regular_for_append(project, REL)
    try:
        size = os.fstat(fd).st_size
        os.write(fd, b"half an ent")
        fileio.rollback_append(fd, size)
    finally:
        os.close(fd)
    assert memory.read_bytes() == OLD.encode()


def test_append_bytes_appends_and_creates(project):
    path = fileio.append_bytes(project, ".fusion/memory/2026-01-01.md", b"one\n")
    fileio.append_bytes(project, ".fusion/memory/2026-01-01.md", b"two\n")
    assert path.read_bytes() == b"one\ntwo\n"


# -- item 5: a symlink inside the project is written through ------------------------------------------------

@pytest.mark.parametrize("target", ["notes/memory-real.md", ".fusion/real.md", "deep/er/m.md"])
def test_in_root_symlink_is_written_through(memory, project, target):
    real = project / target
    real.parent.mkdir(parents=True, exist_ok=True)
    real.write_text(OLD)
    memory.unlink()
    memory.symlink_to(os.path.relpath(real, memory.parent))
    saving.replace_text(project, REL, "new\n")
    assert memory.is_symlink() and memory.resolve() == real.resolve()
    assert real.read_text() == "new\n"
    assert history.get_version(project, history.list_versions(project, REL)[0].id)[1] == OLD


def test_in_root_symlink_is_appended_through(memory, project):
    real = project / "notes" / "m.md"
    real.parent.mkdir()
    real.write_text(OLD)
    memory.unlink()
    memory.symlink_to("../notes/m.md")
    fileio.append_bytes(project, REL, b"more\n")
    assert memory.is_symlink() and real.read_text() == OLD + "more\n"


# -- item 6: nothing is read from or written to outside the root ----------------------------------------------

def _link_memory_out(project: Path, outside: Path) -> None:
    (project / ".fusion").mkdir()
    (project / REL).symlink_to(outside / "id_rsa")


def _link_fusion_out(project: Path, outside: Path) -> None:
    (outside / "memory.md").write_text("outside memory\n")
    (project / ".fusion").symlink_to(outside)


def _link_memdesk_out(project: Path, outside: Path) -> None:
    (project / ".fusion").mkdir()
    (project / REL).write_text(OLD)
    (project / ".fusion" / "memdesk").symlink_to(outside)


def _link_locks_out(project: Path, outside: Path) -> None:
    (project / ".fusion" / "memdesk").mkdir(parents=True)
    (project / REL).write_text(OLD)
    (project / ".fusion" / "memdesk" / "locks").symlink_to(outside)


def _hard_link(project: Path, outside: Path) -> None:
    (project / ".fusion").mkdir()
    os.link(outside / "id_rsa", project / REL)


def _dev_zero(project: Path, outside: Path) -> None:
    (project / ".fusion").mkdir()
    (project / REL).symlink_to("/dev/zero")


def _dangling_out(project: Path, outside: Path) -> None:
    (project / ".fusion").mkdir()
    (project / REL).symlink_to(outside / "new-file")


def _loop(project: Path, outside: Path) -> None:
    (project / ".fusion").mkdir()
    (project / REL).symlink_to("memory.md")


ESCAPES = {
    "memory-link-out": _link_memory_out,
    "fusion-link-out": _link_fusion_out,
    "memdesk-link-out": _link_memdesk_out,
    "locks-link-out": _link_locks_out,
    "hard-link": _hard_link,
    "dev-zero": _dev_zero,
    "dangling-out": _dangling_out,
    "loop": _loop,
}
READ_REFUSED = {"memory-link-out", "fusion-link-out", "dev-zero", "dangling-out", "loop"}


@pytest.mark.parametrize("attack", sorted(ESCAPES))
def test_replace_refuses_escapes_and_creates_nothing(project, outside, attack):
    ESCAPES[attack](project, outside)
    before_out, before_in = snapshot(outside), snapshot(project)
    with pytest.raises(MemoryBackendError) as info:
        saving.replace_text(project, REL, "attacker-visible text\n")
    assert info.value.code in {"INVALID_CONFIG", "WRITE_FAILED"}
    assert "\n" not in info.value.message
    assert snapshot(outside) == before_out and snapshot(project) == before_in


@pytest.mark.parametrize("attack", sorted(ESCAPES))
def test_append_refuses_escapes_and_creates_nothing(project, outside, attack):
    ESCAPES[attack](project, outside)
    before_out, before_in = snapshot(outside), snapshot(project)
    with pytest.raises(MemoryBackendError):
        fileio.append_bytes(project, REL, b"\n\nappended\n")
    assert snapshot(outside) == before_out and snapshot(project) == before_in


@pytest.mark.parametrize("attack", sorted(READ_REFUSED))
def test_read_in_root_refuses_escapes(project, outside, attack):
    ESCAPES[attack](project, outside)
    with pytest.raises(MemoryBackendError) as info:
        fileio.read_in_root(project, REL)
    assert info.value.code == "READ_FAILED" and "SECRET" not in info.value.message
    assert "\n" not in info.value.message


@pytest.mark.parametrize("attack", ["memory-link-out", "fusion-link-out", "dev-zero"])
def test_show_refuses_a_memory_outside_the_root(project, outside, attack):
    ESCAPES[attack](project, outside)
    before = snapshot(outside)
    result = run_cli("show", "--project", str(project), timeout=30)
    assert result.returncode != 0 and "SECRET" not in result.stdout + result.stderr
    line = one_line(result.stderr)
    assert "leaves the project root" in line
    assert snapshot(outside) == before


def test_hard_linked_memory_names_the_links(project, outside):
    _hard_link(project, outside)
    with pytest.raises(MemoryBackendError) as info:
        saving.replace_text(project, REL, "new\n")
    assert "hard link" in info.value.message
    assert (outside / "id_rsa").read_text() == "-----BEGIN SECRET KEY-----\n"


# -- item 11: only regular files are read; the size is checked before reading ----------------------------------

def test_fifo_memory_is_refused_without_hanging(project):
    (project / ".fusion").mkdir()
    os.mkfifo(project / REL)
    result = run_python(textwrap.dedent(f"""
        from core.storage import fileio, saving
        from core.errors import MemoryBackendError
        for op in (lambda: fileio.read_in_root({str(project)!r}, {REL!r}),
                   lambda: saving.replace_text({str(project)!r}, {REL!r}, "x"),
                   lambda: fileio.append_bytes({str(project)!r}, {REL!r}, b"x")):
            try:
                op()
            except MemoryBackendError as exc:
                print("refused:", exc.message)
    """), timeout=45)
    lines = [line for line in result.stdout.splitlines() if line.startswith("refused:")]
    assert len(lines) == 3, result.stdout + result.stderr
    assert all("named pipe" in line for line in lines)


def test_show_of_a_fifo_memory_does_not_hang(project):
    (project / ".fusion").mkdir()
    os.mkfifo(project / REL)
    result = run_cli("show", "--project", str(project), timeout=45)
    assert result.returncode != 0 and "named pipe" in one_line(result.stderr)


def test_folder_memory_says_it_is_a_folder(project):
    (project / REL).mkdir(parents=True)
    with pytest.raises(MemoryBackendError) as info:
        fileio.read_in_root(project, REL)
    assert "folder" in info.value.message


def test_sparse_3gb_file_is_refused_before_reading(project):
    path = project / REL
    path.parent.mkdir()
    with open(path, "wb") as fh:
        fh.truncate(3 * 1024**3)
    with pytest.raises(MemoryBackendError) as info:
        fileio.read_in_root(project, REL)
    assert "3,221,225,472 bytes" in info.value.message and info.value.code == "READ_FAILED"


def test_read_text_of_a_dev_zero_link_names_the_device(tmp_path):
    link = tmp_path / "zero.md"
    link.symlink_to("/dev/zero")
    with pytest.raises(MemoryBackendError) as info:
        fileio.read_text(link)
    assert "character device" in info.value.message


def test_big_but_readable_file_is_still_shown(project):
    # An agent may push the file past the 1 MiB write limit; memdesk must still open it to prune it.
    path = project / REL
    path.parent.mkdir()
    path.write_text("- entry\n" * 200_000)  # 1.6 MB
    assert fileio.read_in_root(project, REL) == "- entry\n" * 200_000
