"""Keystroke latency in the real editor on a 1 MiB memory, beside a bare QPlainTextEdit (``python -m bench gui``).

The memory is the real Fusion fixture repeated to just under 1 MiB, opened in the real window (1280×800)
with the default settings: firewall underlines, outline, load budget, preview, line numbers. Keys are
sent with ``QTest.keyClick`` into the editor at three places (the start, the middle, the end), and each
keystroke is timed until the event loop is idle again (the key handled, the line laid out, the view
painted), two ways:

- **burst**: keys back to back, once earlier background work has finished (what the keystroke itself
  costs; the debounced work never gets to run);
- **paced**: keys at a typing pace with pauses (70 ms apart, 200 ms every 8th key, 600 ms every 25th),
  so the debounced work (outline, budget, size, firewall scan, preview) runs between them as it does for
  a person typing; a key's latency is how late its handling started after it was due (the GUI thread was
  busy, or its process was waiting for a CPU) plus the handling.

The floor is the same keys, the same way, into a bare ``QPlainTextEdit`` holding the same text, at the
same size, in the same process right after (the window hidden). Each figure is printed beside its floor,
with the load average: on a loaded machine both grow. The GUI thread's own CPU time per key (``cpu``) is
printed too: it is what the editor adds, whatever the load.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PLACES = ("start", "middle", "end")
BURST_KEYS = 200  # per place
PACED_KEYS = 70  # per place (210 in all)
TARGET_MS = 16.0


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(int(len(ordered) * 0.95) - 1, 0)]


def _gap(i: int) -> int:
    return 600 if i % 25 == 24 else 200 if i % 8 == 7 else 70


def _child(root: str) -> dict[str, object]:  # noqa: PLR0915 - one measured session, start to end
    from PySide6.QtCore import QEventLoop, Qt, QTimer
    from PySide6.QtGui import QTextCursor
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QPlainTextEdit

    from gui.app import create_app
    from gui.main import _settle_in
    from gui.main_window import MainWindow
    from gui.recent import RecentProjects

    app = create_app()
    window = MainWindow(recent=RecentProjects(persist=False))
    window.confirm_discard = lambda: "discard"
    window.resize(1280, 800)
    window.show()
    app.processEvents()
    window.open_project(Path(root))
    _settle_in()  # as ``memdesk`` does once the project is open
    editor = window.editor
    assert editor is not None

    def run_loop(ms: int) -> None:
        end = time.monotonic() + ms / 1000
        while time.monotonic() < end:
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)

    def settle() -> None:
        """Run the loop until no background work has run for a second (at most 30 s)."""
        from PySide6.QtCore import QThreadPool

        end, quiet_since = time.monotonic() + 30, time.monotonic()
        while time.monotonic() < end and time.monotonic() - quiet_since < 1.0:
            run_loop(20)
            if QThreadPool.globalInstance().activeThreadCount() or editor.buffer.loading:
                quiet_since = time.monotonic()

    settle()  # the load, then the first outline, budget, firewall scan and preview
    assert not editor.text_edit.isReadOnly()

    def idle() -> None:
        app.processEvents()
        app.processEvents()  # what the first pass posted (the paint of the changed lines)

    def place(edit: QPlainTextEdit, where: str) -> None:
        count = edit.document().characterCount()
        cursor = edit.textCursor()
        cursor.setPosition({"start": 0, "middle": count // 2, "end": count - 1}[where])
        if where == "middle":
            cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock)
        edit.setTextCursor(cursor)
        edit.ensureCursorVisible()
        edit.setFocus()
        idle()

    def key(i: int) -> Qt.Key:
        return Qt.Key.Key_Space if i % 6 == 5 else Qt.Key(Qt.Key.Key_A + i % 26)

    def burst(edit: QPlainTextEdit, where: str) -> tuple[list[float], list[float]]:
        settle()  # the work the last keys asked for lands first: a burst times the keys alone
        place(edit, where)
        wall, cpu = [], []
        for i in range(BURST_KEYS):
            t0, c0 = time.perf_counter(), time.thread_time()
            QTest.keyClick(edit, key(i))
            idle()
            wall.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.thread_time() - c0) * 1000)
        return wall, cpu

    def paced(edit: QPlainTextEdit, where: str) -> tuple[list[float], list[float]]:
        place(edit, where)
        wall: list[float] = []
        cpu: list[float] = []
        loop = QEventLoop()
        timer = QTimer()
        timer.setSingleShot(True)
        timer.setTimerType(Qt.TimerType.PreciseTimer)
        due = [time.perf_counter()]

        def one() -> None:
            i = len(wall)
            late = (time.perf_counter() - due[0]) * 1000
            t0, c0 = time.perf_counter(), time.thread_time()
            QTest.keyClick(edit, key(i))
            idle()
            wall.append(late + (time.perf_counter() - t0) * 1000)
            cpu.append((time.thread_time() - c0) * 1000)
            if len(wall) >= PACED_KEYS:
                QTimer.singleShot(1000, loop.quit)  # the last debounced work lands before the next place
                return
            due[0] = time.perf_counter() + _gap(i) / 1000
            timer.start(_gap(i))

        timer.timeout.connect(one)
        timer.start(0)
        loop.exec()
        return wall, cpu

    out: dict[str, object] = {}
    edit = editor.text_edit
    for mode, fn in (("burst", burst), ("paced", paced)):
        for where in PLACES:
            out[f"memdesk_{mode}_{where}"] = fn(edit, where)
    # What the debounced work still shows after typing stops (the bench checks it ran).
    run_loop(1500)
    out["outline_sections"] = len(editor.navigator.headings)
    out["firewall_marks"] = len(editor.firewall_marks.marks)
    out["budget_computed"] = editor.budget.compute_count
    text = editor.buffer.text()
    size = edit.size()
    font = edit.font()
    window.hide()
    bare = QPlainTextEdit()
    bare.setFont(font)
    bare.resize(size)
    bare.setPlainText(text)
    bare.show()
    run_loop(500)
    for mode, fn in (("burst", burst), ("paced", paced)):
        for where in PLACES:
            out[f"floor_{mode}_{where}"] = fn(bare, where)
    out["chars"] = len(text)
    window.close()
    return out


def main() -> None:
    """Build the 1 MiB project, measure in a fresh process, print each figure beside its floor."""
    from bench.gui_bench import build_one_mib_project

    with tempfile.TemporaryDirectory() as tmp:
        root = build_one_mib_project(Path(tmp) / "1mib")
        size = (root / ".fusion" / "memory.md").stat().st_size
        code = f"import json; from bench.keystroke_bench import _child; print(json.dumps(_child({str(root)!r})))"
        env = {**os.environ, "PYTHONPATH": str(REPO), "QT_QPA_PLATFORM": "offscreen",
               "QT_LOGGING_RULES": "qt.qpa.*=false", "MEMDESK_CACHE_DIR": str(Path(tmp) / "cache"),
               "MEMDESK_CONFIG_DIR": str(Path(tmp) / "config")}
        start_load = os.getloadavg()[0]
        run = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                             timeout=900)
        if run.returncode != 0:
            raise RuntimeError(f"keystroke benchmark child failed:\n{run.stderr[-2000:]}")
        out = json.loads(run.stdout.strip().splitlines()[-1])
    print(f"keystroke memory_bytes: {size} ({out['chars']:,} characters); load average {start_load:.1f} → "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    for mode in ("burst", "paced"):
        every: dict[str, list[float]] = {"memdesk": [], "floor": [], "memdesk_cpu": [], "floor_cpu": []}
        for where in PLACES:
            (wall, cpu), (floor, floor_cpu) = out[f"memdesk_{mode}_{where}"], out[f"floor_{mode}_{where}"]
            every["memdesk"] += wall
            every["floor"] += floor
            every["memdesk_cpu"] += cpu
            every["floor_cpu"] += floor_cpu
            print(f"keystroke_{mode}_{where}_p95_ms: {_p95(wall):.1f} (floor {_p95(floor):.1f}); "
                  f"GUI-thread cpu p95 {_p95(cpu):.1f} (floor {_p95(floor_cpu):.1f}); "
                  f"median {statistics.median(wall):.1f} (floor {statistics.median(floor):.1f}); "
                  f"max {max(wall):.1f} (floor {max(floor):.1f}) over {len(wall)} keys")
        p95, cpu95 = _p95(every["memdesk"]), _p95(every["memdesk_cpu"])
        print(f"keystroke_{mode}_p95_ms: {p95:.1f} (floor {_p95(every['floor']):.1f}); GUI-thread cpu p95 "
              f"{cpu95:.1f} (floor {_p95(every['floor_cpu']):.1f}) over {len(every['memdesk'])} keys; "
              f"target < {TARGET_MS:.0f} ms: {'met' if p95 < TARGET_MS else 'missed'} (wall), "
              f"{'met' if cpu95 < TARGET_MS else 'missed'} (GUI-thread cpu)")
    print(f"keystroke after typing stops: {out['outline_sections']} outline sections, {out['firewall_marks']} "
          f"firewall marks, budget computed {out['budget_computed']} times")


if __name__ == "__main__":
    main()
