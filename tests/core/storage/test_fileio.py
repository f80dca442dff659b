"""Safe writes: atomicity, size limit, UTF-8 strictness, conflicts, root confinement, history."""

from __future__ import annotations

import os

import pytest

from core.errors import MemoryBackendError, PathOutsideRootError
from core.storage import fileio, saving
from core.storage.history import versions as history

REL = ".fusion/memory.md"


def test_replace_creates_folder_and_file(project):
    result = saving.replace_text(project, REL, "hello\n")
    assert (project / REL).read_bytes() == b"hello\n"
    assert result.changed and result.content_hash == fileio.content_hash("hello\n")


def test_replace_keeps_previous_version_in_history(project):
    saving.replace_text(project, REL, "one\n")
    saving.replace_text(project, REL, "two\n", source="editor")
    versions = history.list_versions(project, REL)
    assert [v.source for v in versions] == ["editor"]
    assert history.get_version(project, versions[0].id)[1] == "one\n"


def test_identical_write_changes_nothing(project):
    saving.replace_text(project, REL, "same\n")
    mtime = os.stat(project / REL).st_mtime_ns
    assert not saving.replace_text(project, REL, "same\n").changed
    assert os.stat(project / REL).st_mtime_ns == mtime
    assert history.list_versions(project, REL) == []


def test_over_one_mib_is_refused_with_both_sizes(project):
    saving.replace_text(project, REL, "keep\n")
    big = "x" * (fileio.MAX_FILE_SIZE + 1)
    with pytest.raises(MemoryBackendError) as info:
        saving.replace_text(project, REL, big)
    assert info.value.code == "QUOTA_EXCEEDED"
    assert "1,048,577 bytes" in info.value.message and "1,048,576 bytes" in info.value.message
    assert (project / REL).read_bytes() == b"keep\n"


def test_exactly_one_mib_of_multibyte_text_counts_bytes(project):
    text = "é" * (fileio.MAX_FILE_SIZE // 2)  # 2 bytes each: exactly the limit
    saving.replace_text(project, REL, text)
    with pytest.raises(MemoryBackendError):
        saving.replace_text(project, REL, text + "é")


def test_non_utf8_file_gives_offset_and_is_never_rewritten(project):
    path = project / REL
    path.parent.mkdir(parents=True)
    path.write_bytes(b"ok\n\xff\xfe bad")
    with pytest.raises(MemoryBackendError) as info:
        fileio.read_text(path)
    assert info.value.code == "READ_FAILED" and "byte offset 3" in info.value.message
    with pytest.raises(MemoryBackendError) as info:
        saving.replace_text(project, REL, "new")
    assert info.value.code == "READ_FAILED"
    assert path.read_bytes() == b"ok\n\xff\xfe bad"


def test_stale_expected_hash_is_a_conflict(project):
    saving.replace_text(project, REL, "base\n")
    base_hash = fileio.content_hash("base\n")
    (project / REL).write_text("base\nagent line\n")
    with pytest.raises(MemoryBackendError) as info:
        saving.replace_text(project, REL, "mine\n", expected_hash=base_hash)
    assert info.value.code == "CONFLICT"
    assert (project / REL).read_text() == "base\nagent line\n"


def test_expected_hash_of_empty_matches_missing_file(project):
    saving.replace_text(project, REL, "first\n", expected_hash=fileio.content_hash(""))
    assert (project / REL).read_text() == "first\n"


def test_failure_between_temp_write_and_rename_leaves_original(project, monkeypatch):
    saving.replace_text(project, REL, "original\n")

    def crash(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fileio, "_rename", crash)
    with pytest.raises(MemoryBackendError) as info:
        saving.replace_text(project, REL, "half-written new content\n")
    assert info.value.code == "WRITE_FAILED"
    assert (project / REL).read_text() == "original\n"
    leftovers = [p.name for p in (project / ".fusion").iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


@pytest.mark.parametrize("bad", ["../outside.md", "/etc/passwd", "a/../../x"])
def test_paths_are_confined_to_root(project, bad):
    with pytest.raises(PathOutsideRootError):
        fileio.resolve_in_root(project, bad)
    with pytest.raises(MemoryBackendError) as info:
        saving.replace_text(project, bad, "x")
    assert info.value.code == "INVALID_CONFIG"


def test_symlink_escape_is_refused(project, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "link").symlink_to(outside)
    with pytest.raises(PathOutsideRootError):
        fileio.resolve_in_root(project, "link/memory.md")
    assert not (outside / "memory.md").exists()


def test_real_fixture_round_trips_byte_for_byte(real_project):
    path = real_project / REL
    before = path.read_bytes()
    text = fileio.read_text(path)
    assert not saving.replace_text(real_project, REL, text).changed
    assert path.read_bytes() == before


def test_crlf_is_preserved(project):
    path = project / REL
    path.parent.mkdir(parents=True)
    path.write_bytes(b"# Project Memory\r\n\r\n- a\r\n")
    text = fileio.read_text(path)
    assert "\r\n" in text
    saving.replace_text(project, REL, text)
    assert path.read_bytes() == b"# Project Memory\r\n\r\n- a\r\n"


def test_generated_files_can_skip_history(project):
    saving.replace_text(project, ".fusion/memory-audit.md", "one\n", keep_history=False)
    saving.replace_text(project, ".fusion/memory-audit.md", "two\n", keep_history=False)
    assert history.list_versions(project) == []


def test_read_bytes_reads_on_past_the_size_fstat_gave(tmp_path, monkeypatch):
    """The first read asks for the size ``fstat`` gave and a byte more; a file that grew after the ``fstat`` is
    still read whole (and refused past the limit), never cut at the size seen first."""
    path = tmp_path / "grown.md"
    data = ("- an entry é\n" * 200_000).encode()  # ~2.8 MB: more than the first read and the next 1 MiB
    path.write_bytes(data)
    real_fstat = os.fstat

    def stale_fstat(fd):  # what fstat said before another writer appended most of the file
        st = real_fstat(fd)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid, st.st_gid, 100,
                               int(st.st_atime), int(st.st_mtime), int(st.st_ctime)))

    monkeypatch.setattr(fileio.os, "fstat", stale_fstat)
    assert fileio.read_bytes(path) == data
    with pytest.raises(MemoryBackendError, match="bytes"):
        fileio.read_bytes(path, max_size=len(data) - 1)
