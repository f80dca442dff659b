"""The firewall on the save path (a replacement of a whole 1 MiB document): ``python -m bench firewall``.

An operator's save of a 1 MiB memory (one line edited, one added: a different edit each time), through
:meth:`core.project.Project.write` with the firewall's screen and with the pass-all screen, interleaved in
the same run (two projects, the same edit to each in turn); beside them the atomic-write floor (tmp + fsync + rename + dir fsync of the same bytes).
Target (bench/core_bench.py's): a save with history within 3x the floor. Two documents: the bench's
generated memory (pool sentences, distinct entries) and the real memory repeated to size (fusion-real).
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.core_bench import one_mib_memory, save_floor, sentences

SAVES = 40
REL = ".fusion/memory.md"


def _ms(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def _edited(text: str, i: int, rng: random.Random, pool: list[str]) -> str:
    lines = text.splitlines(keepends=True)
    lines[rng.randrange(len(lines))] = f"- edited {i}: {rng.choice(pool)}\n"  # an operator's edit
    return "".join(lines) + f"\n- save {i}: {rng.choice(pool)}"


def bench_document(label: str, text: str, rng: random.Random, pool: list[str]) -> None:
    from core.project import Project
    from core.storage.pipeline import PASS_ALL, Writer

    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        projects = {}
        for mode in ("fw", "pass"):  # one project each, saved in turn: each sees only its own saves
            root = Path(tmp) / mode
            (root / ".fusion").mkdir(parents=True)
            (root / REL).write_text(text, encoding="utf-8")
            projects[mode] = Project(root)
        projects["pass"].screen = PASS_ALL
        writer = Writer("operator", "bench")
        for project in projects.values():  # warm: rules compiled, the document's index built
            for i in (-2, -1):
                project.write(REL, _edited(project.read(), i, random.Random(i), pool), writer=writer, source="save")
        times: dict[str, list[float]] = {"fw": [], "pass": [], "floor": []}
        flagged = 0
        for i in range(SAVES):
            state = rng.getstate()
            for mode, project in projects.items():
                rng.setstate(state)  # the same edit to both
                new = _edited(project.read(), i, rng, pool)
                start = time.perf_counter()
                result = project.write(REL, new, writer=writer, source="save")
                times[mode].append((time.perf_counter() - start) * 1000)
                assert result.status == "written", result
                flagged += bool(result.flags) if mode == "fw" else 0
            times["floor"].append(_ms(lambda n=new: save_floor(Path(tmp) / "floor.md", n.encode())))
        project = projects["fw"]
        size = (project.root / REL).stat().st_size
        untouched = project.read()
        same = _ms(lambda: project.write(REL, untouched, writer=writer, source="save"))
        for project in projects.values():
            project.close()
    med = {k: statistics.median(v) for k, v in times.items()}
    ratio = statistics.median(f / fl for f, fl in zip(times["fw"], times["floor"], strict=True))
    print(f"save through the pipeline, {label}: {SAVES} saves each way of a {size / 1_048_576:.2f} MiB memory, "
          f"interleaved ({flagged} of the firewall's saves flagged)")
    print(f"  firewall screen  median {med['fw']:7.2f} ms   pass-all screen median {med['pass']:7.2f} ms   "
          f"atomic-write floor median {med['floor']:6.2f} ms")
    ok = ratio <= 3.0
    print(f"  firewall save / floor, pair by pair (median): {ratio:.1f}x   target <= 3x   {'ok' if ok else 'ABOVE'}; "
          f"the screen's share: {med['fw'] - med['pass']:.2f} ms")
    print(f"  a save of the untouched document with the firewall: {same:.2f} ms")


def main() -> None:
    """Both documents' save figures."""
    from bench.firewall_bench import real_mebibyte

    rng = random.Random(22)
    pool = sentences()
    bench_document("generated (bench/core_bench.py's memory)", one_mib_memory(rng, pool, limit=1_000_000), rng, pool)
    bench_document("fusion-real repeated to size", real_mebibyte(), rng, pool)


if __name__ == "__main__":
    main()
