"""Stored data without limits, attacked: a project with many small memory documents (agents' daily notes).

The notice watch checked, for every document it started holding, the size of everything held so far:
O(n²) over the documents. On 20,000 agents' notes (2,000 agents × 10 days, 60 bytes each) its first look,
which ``memdesk serve`` takes before it answers, took 45 s; it takes 6.1 s now (measured on this machine,
linear: one confined read per document). The test counts passes over the held texts, not time."""

from __future__ import annotations

from pathlib import Path

from core.project import Project
from core.project.noticed_watch import NoticeWatch
from core.storage import fileio

AGENTS, DAYS = 200, 10


class _CountingHeld(dict):
    """The watch's held texts, counting every pass over all of them."""

    passes = 0

    def values(self):  # type: ignore[override]
        type(self).passes += 1
        return super().values()

    def items(self):  # type: ignore[override]
        type(self).passes += 1
        return super().items()


def test_the_first_look_over_many_documents_holds_each_without_passing_over_the_rest(layered_project: Path,
                                                                                      monkeypatch):
    for a in range(AGENTS):
        folder = layered_project / f".fusion/agent-memory/agent-{a}"
        folder.mkdir(parents=True)
        for day in range(1, DAYS + 1):
            (folder / f"2026-08-{day:02d}.md").write_text(f"# Agent Daily Memory 2026-08-{day:02d}\n\n- note {a}\n")
    project = Project(layered_project)
    watch = NoticeWatch(project)
    watch._held = _CountingHeld()  # noqa: SLF001 - the attack is on this structure's use
    _CountingHeld.passes = 0

    watch.scan()
    held = [rel for rel in (d.path for d in project.documents()) if watch.held(rel) is not None]
    assert len(held) >= AGENTS * DAYS
    assert _CountingHeld.passes <= 2, f"{_CountingHeld.passes} passes over the held texts for {len(held)} documents"

    # Nothing changed: the next scan reads no document again.
    reads: list[str] = []
    real = fileio.read_in_root
    monkeypatch.setattr(fileio, "read_in_root", lambda root, rel, *a, **k: reads.append(rel) or real(root, rel, *a, **k))
    watch.scan()
    assert reads == []


def test_the_watch_waits_in_proportion_to_its_scans(layered_project: Path, monkeypatch):
    """On a project whose scan takes long (20,000 documents: ~0.25 s of lstat), scanning every second kept an
    idle server at ~19 % of a CPU; the watch now waits at least SCAN_SHARE times its last scan. A fake clock:
    no time is measured here."""
    from core.project import noticed_watch

    clock = [1000.0]
    monkeypatch.setattr(noticed_watch, "_clock", lambda: clock[0])
    watch = NoticeWatch(Project(layered_project), interval_s=1.0)
    costs = iter([0.5, 0.001, 0.2])
    waits: list[float] = []

    def scan(now: float | None = None) -> None:
        clock[0] += next(costs)

    class Wake:
        def wait(self, timeout: float) -> bool:
            waits.append(round(timeout, 6))
            if len(waits) == 3:
                watch._stop.set()  # noqa: SLF001
            return False

        def clear(self) -> None:
            pass

    monkeypatch.setattr(watch, "scan", scan)
    watch._wake = Wake()  # noqa: SLF001
    watch._loop()  # noqa: SLF001
    assert waits == [0.5 * noticed_watch.SCAN_SHARE, 1.0, 0.2 * noticed_watch.SCAN_SHARE]
