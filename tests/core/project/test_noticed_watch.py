"""Every memory document another program changes is kept (issue 21, must-have 3): core.project.noticed_watch.

A real second process rewrites three documents as Fusion's dream does; the watch keeps each one's text
before as a version, the run is one event of three documents, and undoing it restores the bytes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.consolidation.apply import apply_proposal
from core.consolidation.programs import program_runs, stage_undo
from core.project import Project
from core.project.noticed_watch import NoticeWatch
from core.storage.history import versions as history
from core.storage.history import worker as history_worker
from core.storage.noticed import EXTERNAL_APPEND, EXTERNAL_CHANGE
from tests.core.fusion_dream_process import MEM, TOUCHED, run_fusion_dream


@pytest.fixture
def project(layered_project: Path) -> Project:
    for path in layered_project.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return Project(layered_project)


def _kept(root: Path, rel: str) -> list[bytes]:
    history_worker.settled()
    return [history.get_version(root, v.id)[1].encode("utf-8") for v in history.list_versions(root, rel)
            if v.source == EXTERNAL_CHANGE]


def test_fusions_dream_in_another_process_keeps_every_document_before_and_is_one_undoable_run(project):
    root = project.root
    watch = NoticeWatch(project, append_delay_s=60)
    assert not watch.scan(now=0.0)  # the first look holds the texts
    before = run_fusion_dream(root)
    noticed = watch.scan(now=1.0)  # the rewrite of the note makes the two appends part of the run
    assert sorted(noticed.rewritten) == sorted(TOUCHED) and noticed.appended == ()
    assert noticed.describe().startswith("3 documents rewritten by another program")
    for rel in TOUCHED:
        assert _kept(root, rel) == [before[rel]], rel
    runs = program_runs(project)
    assert len(runs) == 1 and runs[0].describe().startswith("3 documents rewritten at ")
    assert runs[0].describe().endswith("by another program")
    undo = stage_undo(project, runs[0])
    assert apply_proposal(project, undo.id, allow_loss=True).status == "applied"
    for rel in TOUCHED:
        assert (root / rel).read_bytes() == before[rel], rel
    assert not watch.scan(now=2.0).rewritten  # memdesk's own undo is not another program's run


def test_an_agents_append_alone_is_an_event_after_the_delay_not_a_version(project):
    root, rel = project.root, f"{MEM}/2026-08-20.md"
    watch = NoticeWatch(project, append_delay_s=1.5)
    watch.scan(now=0.0)
    with (root / rel).open("a", encoding="utf-8") as fh:
        fh.write("\n- appended by a shell redirect\n")
    assert not watch.scan(now=1.0)  # waits: memdesk records its own appends just after writing
    noticed = watch.scan(now=3.0)
    assert noticed.appended == (rel,) and noticed.rewritten == ()
    assert [e.source for e in history.list_events(root, rel)] == [EXTERNAL_APPEND]
    assert _kept(root, rel) == []


def test_memdesks_own_writes_are_not_recorded_as_another_programs(project):
    root, rel = project.root, f"{MEM}/MEMORY.md"
    watch = NoticeWatch(project, append_delay_s=0)
    watch.scan(now=0.0)
    text = (root / rel).read_text(encoding="utf-8")
    project.write(rel, text.replace("#", "##", 1), source="save")
    project.append("- memdesk's own entry", path=rel)
    history_worker.settled()
    assert not watch.scan(now=5.0).rewritten
    assert _kept(root, rel) == []


def test_memdesks_appends_then_its_own_rewrite_unseen_between_scans_are_not_another_programs(project):
    # memdesk's rotation (or a save) after appends the watch had not looked at yet: the text the watch holds
    # is no version memdesk kept (appends are events), yet every change since was memdesk's own.
    root, rel = project.root, f"{MEM}/MEMORY.md"
    watch = NoticeWatch(project, append_delay_s=0)
    watch.scan(now=0.0)
    project.append("- memdesk's own entry, not yet seen by the watch", path=rel)
    text = (root / rel).read_text(encoding="utf-8")
    project.write(rel, text.replace("#", "##", 1), source="rotate")
    history_worker.settled()
    noticed = watch.scan(now=5.0)
    assert not noticed.rewritten and not noticed.appended
    assert _kept(root, rel) == []
    assert all(v.author != "program" for v in history.list_versions(root, rel))


def test_an_agents_append_then_memdesks_own_write_still_records_the_agents_append(project):
    root, rel = project.root, f"{MEM}/MEMORY.md"
    watch = NoticeWatch(project, append_delay_s=1.0)
    watch.scan(now=0.0)
    with (root / rel).open("a", encoding="utf-8") as fh:
        fh.write("\n- appended by a shell redirect\n")
    assert not watch.scan(now=0.5)  # the agent's append waits its delay
    project.append("- memdesk's own entry after the agent's", path=rel)
    history_worker.settled()
    assert not watch.scan(now=0.8)  # memdesk's own write: nothing recorded for it; the agent's still waits
    noticed = watch.scan(now=3.0)
    assert noticed.appended == (rel,)
    assert EXTERNAL_APPEND in [e.source for e in history.list_events(root, rel)]


def test_a_note_replaced_by_a_link_out_or_a_fifo_is_not_followed_and_its_text_is_kept(project, tmp_path):
    root = project.root
    outside = tmp_path / "outside.md"
    outside.write_text("secret outside the project\n", encoding="utf-8")
    watch = NoticeWatch(project, append_delay_s=0)
    watch.scan(now=0.0)
    link, fifo = root / MEM / "2026-08-18.md", root / MEM / "2026-08-20.md"
    before = {link: link.read_bytes(), fifo: fifo.read_bytes()}
    link.unlink()
    link.symlink_to(outside)
    fifo.unlink()
    os.mkfifo(fifo)
    noticed = watch.scan(now=1.0)  # must not block on the FIFO nor read through the link
    assert set(noticed.rewritten) == {f"{MEM}/2026-08-18.md", f"{MEM}/2026-08-20.md"}
    for path, data in before.items():
        assert _kept(root, path.relative_to(root).as_posix()) == [data]
    assert watch.held(f"{MEM}/2026-08-18.md") is None
    assert outside.read_text(encoding="utf-8") == "secret outside the project\n"
    assert not watch.scan(now=2.0)  # nothing more to record


def test_the_thread_notices_without_being_asked(project):
    import threading

    seen = threading.Event()
    got = []
    watch = NoticeWatch(project, interval_s=0.05, append_delay_s=0.1,
                        on_noticed=lambda n: (got.append(n), seen.set()))
    watch.start()
    try:
        while watch.held(f"{MEM}/MEMORY.md") is None:
            seen.wait(0.05)
        run_fusion_dream(project.root)
        assert seen.wait(30)
    finally:
        watch.stop()
    assert sorted(sum((n.rewritten for n in got), ())) == sorted(TOUCHED)


def test_a_document_created_after_the_first_look_is_watched_too(project):
    root = project.root
    watch = NoticeWatch(project, append_delay_s=0)
    watch.scan(now=0.0)
    rel = f"{MEM}/2026-08-21.md"
    (root / rel).write_text("# Daily Memory 2026-08-21\n\n- FN-9001 started\n", encoding="utf-8")
    watch.scan(now=1.0)  # its folder changed: listed again, the new note held
    assert watch.held(rel) is not None
    before = (root / rel).read_bytes()
    (root / rel).write_text("# Daily Memory 2026-08-21\n\n<!-- Processed into dreams -->\n", encoding="utf-8")
    assert watch.scan(now=2.0).rewritten == (rel,)
    assert _kept(root, rel) == [before]


def test_an_agents_dream_by_another_program_is_kept_for_both_of_its_documents(project):
    root = project.root
    agent = ".fusion/agent-memory/reviewer"
    watch = NoticeWatch(project, append_delay_s=60)
    watch.scan(now=0.0)
    note, memory = root / agent / "2026-08-20.md", root / agent / "MEMORY.md"
    before = {f"{agent}/2026-08-20.md": note.read_bytes(), f"{agent}/MEMORY.md": memory.read_bytes()}
    memory.write_text(memory.read_text(encoding="utf-8") + "\n## Dream Updates 2026-08-20\n\n- x\n", encoding="utf-8")
    note.write_text("# Agent Daily Memory 2026-08-20\n\n<!-- Processed into dreams on 2026-08-21T04:00:00.000Z -->\n",
                    encoding="utf-8")
    assert sorted(watch.scan(now=1.0).rewritten) == sorted(before)
    for rel, data in before.items():
        assert _kept(root, rel) == [data]
    assert program_runs(project)[0].describe().startswith("2 documents rewritten at ")


def test_the_seed_layouts_memory_file_rewritten_by_another_program_is_kept(real_project):
    project = Project(real_project)
    rel = ".fusion/memory.md"
    watch = NoticeWatch(project)
    watch.scan(now=0.0)
    before = (real_project / rel).read_bytes()
    (real_project / rel).write_text("# Memory\n\ncompacted by another program\n", encoding="utf-8")
    assert watch.scan(now=1.0).rewritten == (rel,)
    assert _kept(real_project, rel) == [before]


def test_a_document_overwritten_with_bytes_that_are_not_text_keeps_its_text_before(project):
    root, rel = project.root, f"{MEM}/DREAMS.md"
    watch = NoticeWatch(project)
    watch.scan(now=0.0)
    before = (root / rel).read_bytes()
    (root / rel).write_bytes(b"\xff\xfe binary garbage \x00\x81")
    assert watch.scan(now=1.0).rewritten == (rel,)
    assert _kept(root, rel) == [before]
    assert not watch.scan(now=2.0)  # unreadable now: not held, not recorded again
