"""What memdesk last wrote to a small document is kept as a chain of deltas, not a snapshot per append.

After each append to a document under ``core.storage.pipeline.NOTE_APPENDS_UP_TO`` the pipeline notes the text it
wrote (``core.storage.noticed``), so a change made while memdesk is closed is found on the next open. The note of
an append is a delta on the previous note; before, the previous note was collected at once, which turned
the new one into a compressed snapshot of the whole document on every append (a 100 KB memory: ~45 KB
written to history.db per append). Real ``memdesk append`` processes and the in-process path.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from core.entries import append_memory_entry
from core.storage.history import store as history_store
from core.storage.history import versions as history
from core.storage.history import worker as history_worker
from core.storage.noticed import EXTERNAL_APPEND, EXTERNAL_CHANGE

REPO = Path(__file__).resolve().parents[4]
REAL = REPO / "tests" / "data" / "fusion-real" / ".fusion" / "memory.md"
REL = ".fusion/memory.md"


def _hundred_kb(root: Path) -> str:
    data = REAL.read_bytes()
    data = (data * (100_000 // len(data) + 1))[:100_000]
    text = data[:data.rindex(b"\n") + 1].decode("utf-8")
    (root / ".fusion").mkdir(parents=True, exist_ok=True)
    (root / REL).write_text(text, encoding="utf-8")
    return text


def _objects(root: Path) -> list[tuple[str, str | None, int, int]]:
    with sqlite3.connect(root / ".fusion" / "memdesk" / "history.db") as conn:
        return conn.execute("SELECT hash, base, size, length(data) FROM objects").fetchall()


def _cli_append(root: Path, text: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "core.cli", "append", "--project", str(root), text], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_appends_by_separate_processes_store_deltas_and_the_next_open_still_finds_a_change(tmp_path: Path):
    root = tmp_path / "p"
    _hundred_kb(root)
    for i in range(12):
        _cli_append(root, f"entry {i}: the scheduler retries a lease {i} times before it gives up")
        if i == 1:
            first = [o for o in _objects(root) if o[1] is None]
    objects = _objects(root)
    snapshots = [o for o in objects if o[1] is None]
    assert snapshots == first, objects  # one snapshot, never stored again: the later notes are deltas
    assert len(objects) == 12
    assert sum(o[3] for o in objects if o[1] is not None) < 12 * 400  # each note: about its entry's bytes
    written = (root / REL).read_text(encoding="utf-8")
    assert "entry 11:" in written
    (root / REL).write_text("# Project Memory\n\n- rewritten by another program\n", encoding="utf-8")
    from core.project import Project
    from core.storage.noticed import check_seen

    project = Project(root)
    try:
        check_seen(project, REL, (root / REL).read_text(encoding="utf-8")).result()
    finally:
        project.close()
    kept = [v for v in history.list_versions(root, REL) if v.source == EXTERNAL_CHANGE]
    assert len(kept) == 1 and history.get_version(root, kept[0].id)[1] == written  # byte-exact


def test_two_hundred_appends_in_process_keep_history_small_and_the_last_note_exact(tmp_path: Path):
    root = tmp_path / "p"
    _hundred_kb(root)
    for i in range(200):
        append_memory_entry(root, f"entry {i}: workers renew their lease every {i % 30 + 1} seconds")
        if i % 10 == 0:
            history_worker.settled()  # as appends arrive over time: each batch its own note
    history_worker.settled()
    objects = _objects(root)
    assert sum(1 for o in objects if o[1] is None) <= 3 < len(objects), objects
    db = root / ".fusion" / "memdesk" / "history.db"
    assert db.stat().st_size < 400_000
    with sqlite3.connect(db) as conn:
        (seen,) = conn.execute("SELECT hash FROM seen WHERE path = ?", (REL,)).fetchone()
        history_store.recent._items.clear()
        history_store.recent._size = 0
        assert history_store.load(conn, seen) == (root / REL).read_bytes()  # rebuilt through the chain
    with (root / REL).open("a", encoding="utf-8") as fh:
        fh.write("\n- an agent's >> while memdesk was closed\n")
    from core.project import Project
    from core.storage.noticed import check_seen

    project = Project(root)
    try:
        check_seen(project, REL, (root / REL).read_text(encoding="utf-8")).result()
    finally:
        project.close()
    events = [e for e in history.list_events(root, REL) if e.source == EXTERNAL_APPEND]
    assert len(events) == 1 and "while memdesk was closed" in events[0].text


def test_dropping_a_superseded_chain_stops_at_what_a_version_or_another_object_uses(tmp_path: Path):
    root = tmp_path / "p"
    text = _hundred_kb(root)
    history.record_version(root, REL, text, "editor")
    with history_worker.using(root, create=False, write=True) as conn:
        assert conn is not None
        a, b = text + "one\n", text + "one\ntwo\n"
        ha, hb = history_store.sha256_hex(a.encode()), history_store.sha256_hex(b.encode())
        base = history_store.sha256_hex(text.encode())
        history_store.store(conn, a.encode(), ha, base)
        history_store.store(conn, b.encode(), hb, ha)
        assert history_store.drop_unused(conn, ha) == 0  # b is a delta on a: a stays
        assert history_store.drop_unused(conn, hb) == 2  # b, then a; the version's content stays
        assert conn.execute("SELECT 1 FROM objects WHERE hash = ?", (base,)).fetchone()
        assert not conn.execute("SELECT 1 FROM objects WHERE hash IN (?, ?)", (ha, hb)).fetchone()
    assert history.get_version(root, history.list_versions(root, REL)[0].id)[1] == text
