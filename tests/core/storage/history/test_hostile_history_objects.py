"""History's stored data is untrusted (issue 19, item 3): bombs, loops and links out, through real `memdesk` processes.

Each test plants what a hostile project or a damaged copy could hold in ``.fusion/memdesk/history.db``
and then runs the command a person would run; it must end, stay small, and say in one line which
object is bad and how to get out (``memdesk history drop ID``).
"""

from __future__ import annotations

import os
import resource
import sqlite3
import subprocess
import sys
import zlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.storage.history import store as history_store
from core.storage.history import versions as history
from core.storage.history.delta import DeltaError, apply_delta, make_delta

REPO = Path(__file__).resolve().parents[4]
MEM = ".fusion/memory.md"
REAL = REPO / "tests" / "data" / "fusion-real" / ".fusion" / "memory.md"

#: Runs one `memdesk` command in a child and prints its peak resident size (KiB) as the last line of stderr.
_PEAK = """
import resource, runpy, sys
sys.argv = ["memdesk", *sys.argv[1:]]
try:
    runpy.run_module("core.cli", run_name="__main__")
except SystemExit as exc:
    code = exc.code
else:
    code = 0
# VmHWM: the peak of this process's own memory (ru_maxrss would count the parent's, from before exec)
peak = next((int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")),
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
sys.stderr.write(f"\\npeak-kib {peak}\\n")
sys.exit(code)
"""


def memdesk(root: Path, *args: str, stdin: bytes = b"", timeout: float = 60) -> tuple[int, str, str, int]:
    """Run ``memdesk ARGS --project ROOT`` in a child: exit code, stdout, stderr (without the peak line), peak KiB."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", _PEAK, *args, "--project", str(root)], input=stdin,
                          capture_output=True, env=env, timeout=timeout)
    err = done.stderr.decode("utf-8", "replace")
    head, _sep, peak = err.rpartition("\npeak-kib ")
    return done.returncode, done.stdout.decode("utf-8", "replace"), head.strip(), int(peak.split()[0] or 0)


def one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    """A project with the real memory and three saved versions of it in history."""
    root = tmp_path / "p"
    (root / ".fusion").mkdir(parents=True)
    real = REAL.read_text(encoding="utf-8")
    (root / MEM).write_text(real, encoding="utf-8")
    for i in range(3):
        history.record_version(root, MEM, real + f"\n- edit {i}\n", "editor")
    history.forget_connections(root)
    return root


def db(root: Path) -> sqlite3.Connection:
    return sqlite3.connect(root / history.HISTORY_DB, isolation_level=None)


def test_a_zlib_bomb_object_is_refused_and_a_save_stays_small(saved: Path):
    conn = db(saved)
    bomb = zlib.compressobj(9)
    blob = b"".join(bomb.compress(bytes(1 << 20)) for _ in range(1024)) + bomb.flush()  # 1 GiB of zeros
    assert len(blob) < 1_200_000
    (vid, digest), *_ = conn.execute("SELECT id, hash FROM versions ORDER BY id DESC").fetchall()
    conn.execute("UPDATE objects SET base = NULL, depth = 0, chain = 0, data = ? WHERE hash = ?", (blob, digest))
    conn.close()
    # A plain save: its delta base is the bombed object.
    code, _out, err, peak = memdesk(saved, "write", stdin=b"# Project Memory\n\nafter the bomb\n")
    assert code == 0, err
    assert (saved / MEM).read_text(encoding="utf-8") == "# Project Memory\n\nafter the bomb\n"
    assert peak < 200 * 1024, f"peak {peak} KiB"
    # Showing the bombed version: one line naming it and the way out; nothing balloons.
    code, out, err, peak = memdesk(saved, "history", "show", str(vid))
    assert code == 1 and out == ""
    line = one_line(err)
    assert f"version {vid}" in line and f"memdesk history drop {vid}" in line and "more than" in line
    assert peak < 200 * 1024
    code, _out, err, _peak = memdesk(saved, "history", "drop", str(vid))
    assert code == 0, err
    assert vid not in [v.id for v in history.list_versions(saved, MEM)]


def test_a_delta_chain_that_loops_never_hangs_a_save_or_a_prune(saved: Path):
    conn = db(saved)
    rows = conn.execute("SELECT hash FROM objects ORDER BY id").fetchall()
    a, b = rows[0][0], rows[1][0]
    delta, _lit = make_delta(b"x" * 100, b"y" * 100)
    conn.execute("UPDATE objects SET base = ?, depth = 1, chain = 10, data = ? WHERE hash = ?", (b, delta, a))
    conn.execute("UPDATE objects SET base = ?, depth = 1, chain = 10, data = ? WHERE hash = ?", (a, delta, b))
    # Old enough to be pruned, so the next save's retention pass collects objects over the loop.
    old = (datetime.now(UTC) - timedelta(days=400)).isoformat(timespec="seconds")
    conn.execute("UPDATE versions SET created_at = ?", (old,))
    conn.close()
    (saved / ".fusion" / "config.json").write_text('{"historyRetentionDays": 1, "historyMinVersions": 1}')
    code, _out, err, _peak = memdesk(saved, "write", stdin=b"# Project Memory\n\nafter the loop\n", timeout=60)
    assert code == 0, err
    assert (saved / MEM).read_text(encoding="utf-8") == "# Project Memory\n\nafter the loop\n"
    for version in history.list_versions(saved, MEM):
        found_code, _out, err, _peak = memdesk(saved, "history", "show", str(version.id), timeout=60)
        if found_code:
            assert f"memdesk history drop {version.id}" in one_line(err)


def test_a_history_database_that_is_a_link_out_of_the_project_is_never_opened(saved: Path, tmp_path: Path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (saved / history.HISTORY_DB).unlink()
    os.symlink(elsewhere / "stolen.db", saved / history.HISTORY_DB)
    before = (saved / MEM).read_bytes()
    code, _out, err, _peak = memdesk(saved, "write", stdin=b"# Project Memory\n\nthrough the link\n")
    assert code == 1
    line = one_line(err)
    assert "history.db" in line and "leads out of the project" in line
    assert not (elsewhere / "stolen.db").exists() and list(elsewhere.iterdir()) == []
    assert (saved / MEM).read_bytes() == before


def test_a_history_folder_or_journal_that_leads_out_is_refused(saved: Path, tmp_path: Path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    journal = saved / f"{history.HISTORY_DB}-journal"
    journal.unlink(missing_ok=True)
    os.symlink(elsewhere / "journal", journal)
    before = (saved / MEM).read_bytes()
    code, _out, err, _peak = memdesk(saved, "write", stdin=b"# Project Memory\n\nthrough the journal\n")
    assert code == 1 and "leads out of the project" in one_line(err)
    assert list(elsewhere.iterdir()) == [] and (saved / MEM).read_bytes() == before
    # The whole state folder swapped for a link out: nothing is made there either.
    journal.unlink()
    os.rename(saved / ".fusion" / "memdesk", tmp_path / "moved")
    os.symlink(elsewhere, saved / ".fusion" / "memdesk")
    code, _out, err, _peak = memdesk(saved, "write", stdin=b"# Project Memory\n\nthrough the folder\n")
    assert code in (1, 2) and "symbolic link" in one_line(err)
    assert list(elsewhere.iterdir()) == [] and (saved / MEM).read_bytes() == before


def test_delta_and_event_caps_in_process():
    base = b"a" * 64
    huge = zlib.compress(b"MDD1" + (64).to_bytes(8, "little") + (1 << 40).to_bytes(8, "little"))
    with pytest.raises(DeltaError, match="more than"):
        apply_delta(base, huge)
    zeros = zlib.compressobj(9)
    bomb = zeros.compress(bytes(64 << 20)) + zeros.flush()
    with pytest.raises(DeltaError, match="more than"):
        apply_delta(base, bomb, max_size=1 << 20)
    with pytest.raises(zlib.error, match="more than"):
        history_store.inflate(bomb, 1 << 20, "object x")
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < 2 * 1024 * 1024  # KiB: far under 2 GiB
