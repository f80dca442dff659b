"""Errors that used to come out raw or as tracebacks (issue 9 item 19): one line naming the file and the fix."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.core.hostile import REPO, one_line, run_cli, run_python

MEMORY = ".fusion/memory.md"
TEXT = "# Project Memory\n\n## Architecture\n\n- kept\n"


@pytest.fixture
def shared() -> Iterator[Path]:
    """A project in a folder of its own (file modes are changed in it)."""
    folder = Path(tempfile.mkdtemp(prefix="memdesk-hostile-"))
    folder.chmod(0o755)
    root = folder / "project"
    (root / ".fusion").mkdir(parents=True)
    (root / MEMORY).write_text(TEXT)
    try:
        yield root
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _without_root_powers(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``memdesk ARGS`` bound by file modes: as root, without the capabilities that override them."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    prefix: list[str] = []
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("running as root without setpriv: file modes cannot be enforced")
        prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
    return subprocess.run([*prefix, sys.executable, "-m", "core.cli", *args], capture_output=True, text=True,
                          timeout=60, env=env, input=stdin)


def _history_db(root: Path) -> Path:
    result = run_cli("write", "--project", str(root), stdin=TEXT + "- second\n")
    assert result.returncode == 0, result.stderr
    db = root / ".fusion" / "memdesk" / "history.db"
    assert db.is_file()
    return db


# -- memdesk's own databases ---------------------------------------------------------------------------------

@pytest.mark.parametrize("damage", [b"not a database at all " * 200, b"SQLite format 3\x00" + b"\xff" * 4096])
def test_damaged_history_database_on_write(shared, damage):
    db = _history_db(shared)
    for extra in db.parent.glob("history.db-*"):
        extra.unlink()
    db.write_bytes(damage)
    before = (shared / MEMORY).read_bytes()
    result = run_cli("write", "--project", str(shared), stdin="# Project Memory\n\n- replaced\n")
    line = one_line(result.stderr)
    assert result.returncode == 1 and "history.db" in line and "move it aside" in line
    assert (shared / MEMORY).read_bytes() == before  # the old version could not be kept: nothing written


def test_damaged_history_database_on_history_list(shared):
    db = _history_db(shared)
    for extra in db.parent.glob("history.db-*"):
        extra.unlink()
    db.write_bytes(b"garbage " * 1000)
    result = run_cli("history", "list", "--project", str(shared))
    line = one_line(result.stderr)
    assert result.returncode != 0 and "history.db" in line and "move it aside" in line


def test_damaged_sqlite_backend_database_falls_back_naming_it(shared):
    (shared / ".fusion" / "config.json").write_text(json.dumps({"memoryBackend": "sqlite"}))
    (shared / ".fusion" / "memdesk").mkdir()
    (shared / ".fusion" / "memdesk" / "memory.db").write_bytes(b"this is no database " * 300)
    result = run_cli("show", "--project", str(shared))
    warning = [line for line in result.stderr.splitlines() if "warning" in line]
    assert result.returncode == 0 and result.stdout == TEXT
    assert len(warning) == 1 and "memory.db" in warning[0] and "move it aside" in warning[0]


def test_read_only_history_database(shared):
    db = _history_db(shared)
    for path in db.parent.glob("history.db*"):
        path.chmod(0o444)  # everything but the database can be written
    before = (shared / MEMORY).read_bytes()
    result = _without_root_powers("write", "--project", str(shared), stdin="# Project Memory\n\n- other user\n")
    line = one_line(result.stderr)
    assert result.returncode == 1 and "history.db" in line and ("owner and mode" in line or "read-only" in line), result.stderr
    assert (shared / MEMORY).read_bytes() == before


def test_full_disk_while_keeping_history(shared):
    big = TEXT + "".join(f"- old entry {i} " + "x" * 80 + "\n" for i in range(3000))  # ~270 KB
    (shared / MEMORY).write_text(big)
    db = _history_db(shared)  # replaces big: a version of ~270 KB goes to history
    # Content history cannot store as a small delta or compress much: the version it keeps is big.
    noise = base64.b64encode(os.urandom(200_000)).decode()
    (shared / MEMORY).write_text(TEXT + "".join(f"- {noise[i:i + 76]}\n" for i in range(0, len(noise), 76)))
    limit = db.stat().st_size + 8192
    script = textwrap.dedent(f"""
        import io, resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
        sys.stdin = io.TextIOWrapper(io.BytesIO(b"# Project Memory\\n\\n- short\\n"))
        from core.cli import main
        sys.exit(main(["write", "--project", {str(shared)!r}]))
    """)
    before = (shared / MEMORY).read_bytes()
    result = run_python(script)
    line = one_line(result.stderr)
    assert result.returncode == 1 and "history.db" in line and ("full" in line or "disk I/O" in line), result.stderr
    assert (shared / MEMORY).read_bytes() == before


# -- the OS -------------------------------------------------------------------------------------------------

def test_unreadable_memory_names_the_file_and_the_fix(shared):
    (shared / MEMORY).chmod(0o000)
    result = _without_root_powers("show", "--project", str(shared))
    line = one_line(result.stderr)
    assert result.returncode == 1 and "memory.md" in line and "Permission denied" in line and "owner" in line


@pytest.mark.parametrize("blocker", [".fusion/memdesk", ".fusion/memdesk/locks"])
def test_a_file_where_memdesk_needs_a_folder(shared, blocker):
    (shared / blocker).parent.mkdir(parents=True, exist_ok=True)
    (shared / blocker).write_text("in the way\n")
    before = (shared / MEMORY).read_bytes()
    result = run_cli("append", "a new entry", "--project", str(shared))
    line = one_line(result.stderr)
    assert result.returncode != 0 and blocker in line and "not a folder" in line
    assert (shared / MEMORY).read_bytes() == before


def test_fusion_that_is_a_file(shared):
    shutil.rmtree(shared / ".fusion")
    (shared / ".fusion").write_text("a file\n")
    result = run_cli("append", "entry", "--project", str(shared))
    line = one_line(result.stderr)
    assert result.returncode != 0 and ".fusion" in line and "not a folder" in line
    assert (shared / ".fusion").read_text() == "a file\n"


@pytest.mark.parametrize("command", [["show"], ["append", "entry"]])
def test_symlink_loop(shared, command):
    (shared / MEMORY).unlink()
    (shared / MEMORY).symlink_to("memory.md")
    result = run_cli(*command, "--project", str(shared))
    line = one_line(result.stderr)
    assert result.returncode != 0 and "memory.md" in line and "loop" in line


@pytest.mark.parametrize("name", ["config.json"])
def test_deeply_nested_config(shared, name):
    (shared / ".fusion" / name).write_text("[" * 100_000 + "]" * 100_000)
    result = run_cli("show", "--project", str(shared))
    line = one_line(result.stderr)
    assert result.returncode == 2 and name in line and "nested too deeply" in line


def test_out_of_memory_is_one_line(shared):
    (shared / MEMORY).write_text("- entry\n" * (1_900_000))  # 15 MB: under the read limit
    script = textwrap.dedent(f"""
        import resource, sys
        from core.cli import main
        used = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        resource.setrlimit(resource.RLIMIT_AS, (used + 24 * 1024 * 1024, hard))
        sys.exit(main(["show", "--project", {str(shared)!r}]))
    """)
    result = run_python(script)
    line = one_line(result.stderr)
    assert result.returncode == 1 and "out of memory" in line


# -- arguments and the extraction command ------------------------------------------------------------------

@pytest.mark.parametrize("argv", [[b"append", b"caf\xe9 entry"], [b"settings", b"set", b"memoryBackend", b"\xff"],
                                  [b"search", b"\xfe\xff"]])
def test_non_utf8_argument_is_named(shared, argv):
    before = {p: p.read_bytes() for p in (shared / ".fusion").rglob("*") if p.is_file()}
    env = dict(os.environ, PYTHONPATH=str(REPO), LC_ALL="C.UTF-8")
    result = subprocess.run([sys.executable.encode(), b"-m", b"core.cli", *argv, b"--project", str(shared).encode()],
                            capture_output=True, timeout=60, env=env)
    stderr = result.stderr.decode("utf-8", "replace")
    line = one_line(stderr)
    assert result.returncode == 2 and "not valid UTF-8" in line
    assert {p: p.read_bytes() for p in before} == before


def test_extract_failure_is_one_line_without_traceback(shared, tmp_path):
    (shared / MEMORY).write_text(TEXT + "".join(f"- Always run the linter before commit {i}\n" for i in range(30)))
    (shared / ".fusion" / "memdesk").mkdir()
    (shared / ".fusion" / "memdesk" / "proposals").write_text("a file where the proposals folder goes\n")
    env = dict(os.environ, PYTHONPATH=str(REPO), MEMDESK_CONFIG_DIR=str(tmp_path / "config"))
    result = subprocess.run([sys.executable, "-m", "core.cli", "extract", "--provider", "offline",
                             "--project", str(shared)], capture_output=True, text=True, timeout=60, env=env)
    line = one_line(result.stderr)
    assert result.returncode == 1 and "proposals" in line
