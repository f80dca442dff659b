"""A one-shot ``memdesk append`` ends without the interpreter's teardown (core.cli.finish), and loses nothing:
its output, its history event, other threads' work and the atexit callbacks all happen first. Real processes."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def _events(root: Path) -> list[str]:
    with sqlite3.connect(root / ".fusion" / "memdesk" / "history.db") as conn:
        return [r[0] for r in conn.execute("SELECT source FROM events ORDER BY id")]


def test_both_entry_points_print_write_and_record_the_append(sample_project: Path):
    runs = [[sys.executable, "-m", "core.cli"],
            [sys.executable, "-c", "import sys; from gui.main import main; sys.exit(main())"]]
    for i, cmd in enumerate(runs):
        done = subprocess.run([*cmd, "append", "--project", str(sample_project), f"entry {i} from a process"],
                              env=_env(), capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("Memory written to project scope")
    text = (sample_project / ".fusion" / "memory.md").read_text(encoding="utf-8")
    assert "entry 0 from a process" in text and "entry 1 from a process" in text
    assert _events(sample_project).count("cli-append") == 2  # history's thread finished before the process ended


def test_refusals_keep_their_exit_code_and_message(sample_project: Path):
    done = subprocess.run([sys.executable, "-m", "core.cli", "append", "--project", str(sample_project), "  "],
                          env=_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.strip() and not done.stdout


def test_a_reader_that_goes_away_ends_the_process_quietly(sample_project: Path):
    cmd = f"{sys.executable} -m core.cli append --project {sample_project} 'piped entry' | head -c 3"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], env=_env(), capture_output=True, text=True,
                          timeout=120)
    assert done.stdout == "Mem" and "Traceback" not in done.stderr
    assert "piped entry" in (sample_project / ".fusion" / "memory.md").read_text(encoding="utf-8")


def test_finish_waits_for_threads_and_runs_atexit_before_ending(tmp_path: Path):
    code = f"""
import atexit, threading, time
from pathlib import Path
from core.cli.finish import finish
out = Path({str(tmp_path)!r})
def late():
    time.sleep(0.3)
    (out / "thread").write_text("done")
threading.Thread(target=late).start()
atexit.register(lambda: (out / "atexit").write_text("ran"))
print("printed before", end="")
finish(3)
"""
    done = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 3 and done.stdout == "printed before"
    assert (tmp_path / "thread").read_text() == "done" and (tmp_path / "atexit").read_text() == "ran"


def test_the_memdesk_entry_runs_an_append_without_loading_ctypes_or_the_save_machinery(sample_project: Path):
    code = f"""
import sys
from gui.main import main
assert main(["append", "--project", {str(sample_project)!r}, "an entry without ctypes"]) == 0
heavy = [m for m in ("ctypes", "ctypes.util", "re2", "core.firewall.rest_index", "core.storage.history.delta", "PySide6")
         if m in sys.modules]
print(heavy)
"""
    done = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
