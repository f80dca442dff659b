"""Said before the operator types: read-only files and folders, non-UTF-8 files, a backend fallback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from gui.editor.file_state import undecodable, write_block_reason

MEMORY = ".fusion/memory.md"
REPO = Path(__file__).resolve().parents[3]


def _chattr(flag: str, path: Path) -> bool:
    done = subprocess.run(["chattr", flag, str(path)], capture_output=True, check=False) \
        if shutil.which("chattr") else None
    return done is not None and done.returncode == 0


# -- non-UTF-8 -----------------------------------------------------------------------------------
def test_non_utf8_file_shows_its_text_marked_read_only(qtbot, open_editor, project: Path) -> None:
    (project / ".fusion").mkdir()
    raw = "# Memory\n\n- entry one\n- café au lait\n".encode().replace("é".encode(), b"\xe9")
    raw += b"- more text " * 100 + b"\n"
    (project / MEMORY).write_bytes(raw)
    editor = open_editor(project)
    assert "- caf\ufffd au lait" in editor.text()  # the text is there, the bad byte marked
    assert editor.text_edit.isReadOnly()
    banner = editor.read_only_banner.text()
    assert "not valid UTF-8" in banner and "byte 0xe9 at line 4, column 6" in banner
    assert editor.size_label.size == len(raw)  # its real size, not 0 bytes
    assert editor.size_label.text().startswith("1.2 KiB")
    line = editor.text_edit.document().findBlockByNumber(3)
    editor.buffer.format_visible()
    marks = [f for f in line.layout().formats() if f.start == 5 and f.length == 1]
    assert marks and marks[0].format.background().color() == editor.highlighter.replacement.background().color()
    qtbot.keyClicks(editor.text_edit, "typed")
    assert "typed" not in editor.text()
    assert not editor.save()
    assert (project / MEMORY).read_bytes() == raw  # never rewritten


def test_undecodable_reports_line_and_column_in_characters() -> None:
    data = "ünïcode line\nsecond ✓ ok \xff".encode().replace("ÿ".encode(), b"\xff")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        info = undecodable(type("E", (), {"cause": exc})())
    assert info is not None and (info.line, info.column, info.byte) == (2, 13, 0xFF) and info.size == len(data)
    assert undecodable(None) is None


# -- read-only at open ---------------------------------------------------------------------------
def test_immutable_file_is_read_only_at_open(open_editor, sample_project: Path) -> None:
    path = sample_project / MEMORY
    if not _chattr("+i", path):
        pytest.skip("this file system or user cannot set the immutable attribute")
    try:
        before = path.read_bytes()
        editor = open_editor(sample_project)
        assert editor.text_edit.isReadOnly()
        assert "marked immutable (chattr +i)" in editor.read_only_banner.text()
        assert editor.text() == before.decode("utf-8")
    finally:
        _chattr("-i", path)


def test_read_only_mount_is_read_only_at_open(open_editor, tmp_path: Path) -> None:
    mount = tmp_path / "ro"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(mount)],
                                           capture_output=True, check=False).returncode != 0:
        pytest.skip("cannot mount a file system here")
    try:
        shutil.copytree(Path(__file__).resolve().parents[3] / "resources" / "sample", mount / "p")
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True, capture_output=True)
        editor = open_editor(mount / "p")
        assert editor.text_edit.isReadOnly()
        assert "on a read-only file system" in editor.read_only_banner.text()
        assert ".fusion/memory.md" in editor.read_only_banner.text()
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False, capture_output=True)


def test_permissions_are_checked_for_the_user_running_memdesk() -> None:
    """As an ordinary user (root may write anything): a 0444 file, then a file in a read-only folder."""
    base = Path(tempfile.mkdtemp(prefix="memdesk-perm-"))
    try:
        base.chmod(0o755)
        (base / ".fusion").mkdir()
        memory = base / ".fusion" / "memory.md"
        memory.write_text("# M\n", encoding="utf-8")
        memory.chmod(0o444)
        # The check is plain standard-library Python: run a copy of it, from a folder anyone can read,
        # with a Python anyone can run (the venv's may live under /root).
        tool = base / "tool"
        tool.mkdir()
        shutil.copyfile(REPO / "gui" / "editor" / "file_state.py", tool / "file_state.py")
        code = ("import sys, pathlib; sys.path.insert(0, sys.argv[1]); from file_state import write_block_reason as w; "
                "r = pathlib.Path(sys.argv[2]); print(w(r, r / '.fusion/memory.md'))")
        python = sys.executable
        user = {}
        if os.geteuid() == 0:
            python = next((p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if os.path.exists(p)), "")
            if not python:
                pytest.skip("no system Python to run as an ordinary user")
            os.chown(base, 65534, 65534)
            os.chown(base / ".fusion", 0, 0)  # the folder is root's: not writable for "nobody"
            user = {"user": 65534, "group": 65534}
        run = subprocess.run([python, "-c", code, str(tool), str(base)], capture_output=True, text=True,
                             check=True, **user)
        assert run.stdout.strip() == ".fusion/memory.md is not writable for you (permissions -r--r--r--), so it cannot be saved."
        memory.chmod(0o644)
        if user:
            os.chown(memory, 65534, 65534)  # the file is theirs, the folder is not: a save cannot swap it in
        else:
            (base / ".fusion").chmod(0o555)
        run = subprocess.run([python, "-c", code, str(tool), str(base)], capture_output=True, text=True,
                             check=True, **user)
        assert "the folder .fusion is not writable for you" in run.stdout
    finally:
        (base / ".fusion").chmod(0o755)
        shutil.rmtree(base)


def test_a_writable_project_opens_editable(open_editor, sample_project: Path, project: Path) -> None:
    assert write_block_reason(sample_project, sample_project / MEMORY) is None
    assert write_block_reason(project, project / MEMORY) is None  # not there yet: the root is writable
    editor = open_editor(sample_project)
    assert not editor.text_edit.isReadOnly() and editor.read_only_banner.text() == ""
    assert not (project / ".fusion").exists()  # asking created nothing


# -- a backend that fell back --------------------------------------------------------------------
def test_backend_fallback_is_said_on_the_editor(open_editor, sample_project: Path) -> None:
    config = sample_project / ".fusion" / "config.json"
    data = json.loads(config.read_text(encoding="utf-8"))
    data["settings"]["memoryBackend"] = "no-such-backend"
    config.write_text(json.dumps(data), encoding="utf-8")
    editor = open_editor(sample_project)
    text = editor.backend_banner.text()
    assert 'Configured backend "no-such-backend" is unavailable' in text
    assert 'shows the "File System" backend' in text and ".fusion/memory.md" in text
    assert not editor.text_edit.isReadOnly()  # the file backend can still write
