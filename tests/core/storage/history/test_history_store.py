"""History keeps changes, not copies: deltas and snapshots, byte-exact restores, migration, damaged databases."""

from __future__ import annotations

import hashlib
import random
import shutil
import sqlite3
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.errors import MemoryBackendError
from core.storage import fileio, saving
from core.storage.history import store as history_store
from core.storage.history import versions as history
from core.storage.history.db import SCHEMA_VERSION, HistoryUnavailable

MEMORY = ".fusion/memory.md"
REAL = Path(__file__).resolve().parents[3] / "data" / "fusion-real" / ".fusion" / "memory.md"


def one_mib() -> str:
    base = REAL.read_text(encoding="utf-8")
    parts, size, i = [], 0, 0
    while size < 1_000_000:
        chunk = base.replace("FN-", f"FN{i}-")
        parts.append(chunk)
        size += len(chunk.encode("utf-8"))
        i += 1
    return "".join(parts)[:1_000_000]


def db_file(root: Path) -> Path:
    return root / history.HISTORY_DB


def objects(root: Path) -> list[tuple[str, str | None, int]]:
    conn = sqlite3.connect(db_file(root))
    try:
        return conn.execute("SELECT hash, base, depth FROM objects ORDER BY id").fetchall()
    finally:
        conn.close()


def fresh_process(root: Path) -> None:
    """Forget what this process keeps in memory, as a new process would."""
    history.forget_connections(root)
    history_store.recent._items.clear()
    history_store.recent._size = 0


def edit(rng: random.Random, text: str) -> str:
    """A random edit an operator or agent makes: change, insert or delete a line, or append."""
    lines = text.splitlines(keepends=True) or [""]
    i = rng.randrange(len(lines))
    kind = rng.random()
    if kind < 0.3:
        lines[i] = f"- edited line {rng.random():.6f} — ünïcode\n"
    elif kind < 0.5:
        lines.insert(i, f"- inserted {rng.randint(0, 10**9)}\r\n")
    elif kind < 0.7 and len(lines) > 1:
        del lines[i]
    else:
        lines.append(f"\n\n<!-- 2026-01-{rng.randint(1, 28):02d} -->\nappended {rng.random()}")
    return "".join(lines)


def test_every_version_comes_back_byte_exact(project: Path):
    rng = random.Random(5)
    text = REAL.read_text(encoding="utf-8")
    stored = []
    for _ in range(150):
        history.record_version(project, MEMORY, text, "editor")
        stored.append(text)
        text = edit(rng, text)
    history.record_version(project, MEMORY, "", "editor")
    stored.append("")
    fresh_process(project)
    versions = {v.hash: v for v in history.list_versions(project, MEMORY)}
    for content in stored:
        digest = fileio.content_hash(content)
        version, got = history.get_version(project, versions[digest].id)
        assert got == content and version.size == len(content.encode("utf-8"))
    kinds = [base for _h, base, _d in objects(project)]
    assert sum(b is None for b in kinds) < 5  # nearly everything is a delta


def test_history_of_a_1mib_file_grows_by_changes_not_copies(project: Path):
    """200 appends (each rotated into history) and 200 saves of different text on a 1 MiB file."""
    rng = random.Random(9)
    text = one_mib()
    for i in range(200):
        history.record_version(project, MEMORY, text, "rotate")
        text = text[len(text) // 500:] + f"\n\n<!-- 2026-02-01 -->\nentry {i} {rng.random()}"
    for i in range(200):
        history.record_version(project, MEMORY, text, "editor")
        text = edit(rng, text) + f"\nsave {i}"
    size = sum(p.stat().st_size for p in db_file(project).parent.glob("history.db*"))
    assert len(history.list_versions(project, MEMORY)) == 400
    assert size < 5 * 1_048_576, f"history grew to {size:,} bytes"
    fresh_process(project)
    newest = history.list_versions(project, MEMORY, limit=1)[0]
    oldest = history.list_versions(project, MEMORY)[-1]
    assert fileio.content_hash(history.get_version(project, newest.id)[1]) == newest.hash
    assert history.get_version(project, oldest.id)[1] == one_mib()


def test_chains_are_cut_by_snapshots(project: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(history_store, "MAX_DEPTH", 3)
    text = "start\n" * 200
    for i in range(10):
        history.record_version(project, MEMORY, text, "editor")
        text += f"line {i}\n"
    depths = [d for _h, _b, d in objects(project)]
    assert depths == [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]
    fresh_process(project)
    for v in history.list_versions(project, MEMORY):
        assert fileio.content_hash(history.get_version(project, v.id)[1]) == v.hash


def test_retention_drops_old_content_and_keeps_the_rest_restorable(project: Path):
    text = "base text that stays the same for a while\n" * 50
    for i in range(10):
        history.record_version(project, MEMORY, text + f"v{i}\n", "editor")
    old = (datetime.now(UTC) - timedelta(days=200)).isoformat(timespec="seconds")
    conn = sqlite3.connect(db_file(project))
    with conn:
        conn.execute("UPDATE versions SET created_at = ? WHERE id <= 6", (old,))
    conn.close()
    assert history.prune_history(project, days=90, min_versions=4) == 6
    kept = history.list_versions(project, MEMORY)
    assert len(kept) == 4 and len(objects(project)) == 4
    assert objects(project)[0][1] is None or all(b in {h for h, _b, _d in objects(project)}
                                                 for _h, b, _d in objects(project) if b)
    fresh_process(project)
    assert [history.get_version(project, v.id)[1] for v in kept] == [text + f"v{i}\n" for i in (9, 8, 7, 6)]
    gone = hashlib.sha256((text + "v0\n").encode()).hexdigest()
    assert gone not in {h for h, _b, _d in objects(project)}


def test_author_is_stored_and_a_redate_takes_the_new_author(project: Path):
    history.record_version(project, MEMORY, "a\n", "http", author="agent-7")
    history.record_version(project, MEMORY, "b\n", "editor")
    assert [(v.author, v.label) for v in history.list_versions(project, MEMORY)] == [
        (None, "before save"), ("agent-7", "before an HTTP write")]
    history.record_version(project, MEMORY, "a\n", "mcp", author="claude")
    versions = history.list_versions(project, MEMORY)
    again = next(v for v in versions if v.hash == fileio.content_hash("a\n"))
    assert (again.author, again.source, len(versions)) == ("claude", "mcp", 2)


def test_appends_are_events_with_their_text_and_author(project: Path):
    assert history.list_events(project, MEMORY) == []
    history.record_append(project, MEMORY, "\n\n<!-- 2026-03-01 -->\nuse the lease clock", author="agent-3")
    history.record_append(project, ".fusion/memory/2026-03-01.md", "\nnote\n", source="cli-append")
    events = history.list_events(project, MEMORY)
    assert [(e.text, e.author, e.label) for e in events] == [
        ("\n\n<!-- 2026-03-01 -->\nuse the lease clock", "agent-3", "agent append")]
    assert [e.path for e in history.list_events(project)] == [".fusion/memory/2026-03-01.md", MEMORY]
    assert history.list_versions(project) == []  # an event is not a version


def test_source_labels():
    assert history.source_label("prune") == "before prune"
    assert history.source_label("restore") == "before restore"
    assert history.source_label("append") == "agent append"
    assert history.source_label("some-new_thing") == "before some-new_thing"
    assert history.source_label("") == "earlier content"
    assert history.source_label("before migrate") == "before migrate"


@pytest.mark.parametrize("bad", [0, -1, 2**63, 2**80, True])
def test_ids_out_of_range_are_not_found(project: Path, bad: int):
    history.record_version(project, MEMORY, "a\n", "editor")
    assert history.get_version(project, bad) is None
    with pytest.raises(MemoryBackendError) as err:
        saving.restore_version(project, bad)
    assert err.value.code == "NOT_FOUND"


def legacy_db(root: Path, rows: list[tuple[str, str, str, str]]) -> None:
    """A history.db as the first release wrote it: whole copies in one table, user_version 0."""
    db = db_file(root)
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db)
    conn.executescript("""
        CREATE TABLE versions (id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL, hash TEXT NOT NULL,
            size INTEGER NOT NULL, created_at TEXT NOT NULL, source TEXT NOT NULL, content TEXT NOT NULL);
        CREATE INDEX versions_path ON versions(path, id);
        CREATE UNIQUE INDEX versions_path_hash ON versions(path, hash);""")
    with conn:
        for path, created, source, content in rows:
            conn.execute("INSERT INTO versions(path, hash, size, created_at, source, content) VALUES (?,?,?,?,?,?)",
                         (path, fileio.content_hash(content), len(content.encode()), created, source, content))
    conn.close()


def test_a_first_release_history_is_migrated_without_losing_a_version(project: Path):
    real = REAL.read_text(encoding="utf-8")
    rows = [(MEMORY, f"2026-01-{d:02d}T10:00:00+00:00", "editor", real + "x" * d) for d in range(1, 12)]
    rows += [(".fusion/memory-insights.md", "2026-01-05T10:00:00+00:00", "insights-merge", "# Memory Insights\n"),
             (".fusion/memory-insights.md", "2026-01-06T10:00:00+00:00", "prune", real + "x")]  # same as a memory row
    legacy_db(project, rows)
    before = db_file(project).stat().st_size
    versions = history.list_versions(project)
    assert len(versions) == len(rows)
    conn = sqlite3.connect(db_file(project))
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert "versions_v0" not in {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    by_id = {v.id: v for v in versions}
    for vid, (path, created, source, content) in enumerate(rows, start=1):
        v, got = history.get_version(project, vid)
        assert (v.path, v.created_at, v.source, got) == (path, created, source, content)
        assert by_id[vid].size == len(content.encode())
    fresh_process(project)
    conn = sqlite3.connect(db_file(project))
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    assert db_file(project).stat().st_size < before / 3


def test_a_garbage_database_is_one_clear_line_and_blocks_no_byte(project: Path):
    saving.replace_text(project, MEMORY, "first\n")
    db = db_file(project)
    db.parent.mkdir(parents=True, exist_ok=True)
    db.write_bytes(b"this is not a database at all " * 100)
    with pytest.raises(HistoryUnavailable) as err:
        history.list_versions(project)
    message = str(err.value)
    assert str(db) in message and "move it aside" in message and "\n" not in message
    with pytest.raises(MemoryBackendError):
        saving.replace_text(project, MEMORY, "second\n")
    assert (project / MEMORY).read_text() == "first\n"  # no write without its history
    assert db.read_bytes() == b"this is not a database at all " * 100


def test_a_folder_in_place_of_the_database(project: Path):
    db_file(project).mkdir(parents=True)
    with pytest.raises(HistoryUnavailable) as err:
        history.list_versions(project)
    assert "is not a file" in str(err.value) and str(db_file(project)) in str(err.value)


def test_a_read_only_database_refuses_writes_with_one_line(project: Path):
    saving.replace_text(project, MEMORY, "one\n")
    saving.replace_text(project, MEMORY, "two\n")
    fresh_process(project)
    db = db_file(project)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    if subprocess.run(["chattr", "+i", str(db)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available here")
    try:
        try:
            assert len(history.list_versions(project)) == 1  # reading may still work
        except HistoryUnavailable as exc:
            assert str(db) in str(exc)
        with pytest.raises(MemoryBackendError) as err:
            saving.replace_text(project, MEMORY, "three\n")
        assert str(db) in str(err.value) and "read-only" in str(err.value) and "\n" not in str(err.value)
        assert (project / MEMORY).read_text() == "two\n"
    finally:
        subprocess.run(["chattr", "-i", str(db)], check=False)
        fresh_process(project)


def test_a_damaged_object_is_refused_not_restored_wrong(project: Path):
    history.record_version(project, MEMORY, "alpha\n" * 100, "editor")
    history.record_version(project, MEMORY, "alpha\n" * 100 + "beta\n", "editor")
    conn = sqlite3.connect(db_file(project))
    with conn:
        conn.execute("UPDATE objects SET data = zeroblob(40) WHERE base IS NOT NULL")
    conn.close()
    fresh_process(project)
    newest = history.list_versions(project, MEMORY)[0]
    with pytest.raises(HistoryUnavailable) as err:
        history.get_version(project, newest.id)
    assert "damaged" in str(err.value)
    with pytest.raises(MemoryBackendError):
        saving.restore_version(project, newest.id)
    assert not (project / MEMORY).exists()


@pytest.mark.parametrize("path, ok", [
    (".fusion/memory.md", True), (".fusion/memory-insights.md", True), (".fusion/memory-archive.md", True),
    (".git/hooks/pre-commit", False), ("../x", False), ("/etc/passwd", False), ("notes.md", False),
    (".fusion/config.json", False), (".fusion/memory/../memory.md", False), (".fusion/memory/MEMORY.md", False),
    (".fusion/memdesk/proposals/p1.json", False), (".fusion/memory.md\n", False),
])
def test_which_paths_are_memory_documents_seed(project: Path, path: str, ok: bool):
    assert history.is_memory_document(project, path) is ok


@pytest.mark.parametrize("path, ok", [
    (".fusion/memory/MEMORY.md", True), (".fusion/memory/DREAMS.md", True), (".fusion/memory/2026-03-01.md", True),
    (".fusion/memory/memory-insights.md", True), (".fusion/agent-memory/agent-7/MEMORY.md", True),
    (".fusion/agent-memory/a.b_c/2026-03-01.md", True), (".fusion/memory.md", True),  # the legacy file
    (".fusion/agent-memory/../MEMORY.md", False), (".fusion/agent-memory/x/y/MEMORY.md", False),
    (".fusion/memory/notes.md", False), (".git/hooks/pre-commit", False), ("/etc/passwd", False),
])
def test_which_paths_are_memory_documents_layered(layered_project: Path, path: str, ok: bool):
    assert history.is_memory_document(layered_project, path) is ok


@pytest.mark.parametrize("planted", [".git/hooks/pre-commit", "../x", "/tmp/memdesk-planted-x", "notes.md"])
def test_restore_refuses_a_planted_row(project: Path, planted: str):
    history.record_version(project, planted, "#!/bin/sh\necho owned\n", "editor")
    vid = history.list_versions(project, planted)[0].id
    with pytest.raises(MemoryBackendError) as err:
        saving.restore_version(project, vid)
    assert err.value.code == "INVALID_CONFIG" and "not a memory document" in str(err.value)
    assert not (project / ".git").exists() and not (project.parent / "x").exists()
    assert not Path("/tmp/memdesk-planted-x").exists() and not (project / "notes.md").exists()


def test_restore_of_a_real_copy_in_another_process(tmp_path: Path):
    root = tmp_path / "p"
    (root / ".fusion").mkdir(parents=True)
    shutil.copyfile(REAL, root / MEMORY)
    original = (root / MEMORY).read_bytes()
    saving.replace_text(root, MEMORY, original.decode() + "\nedit\n")
    fresh_process(root)
    vid = history.list_versions(root, MEMORY)[0].id
    assert saving.restore_version(root, vid).changed
    assert (root / MEMORY).read_bytes() == original


def test_reading_history_changes_no_byte_on_disk(project: Path):
    import hashlib as h
    import os
    import subprocess
    import sys

    history.record_version(project, MEMORY, "one\n", "editor")
    history.record_version(project, MEMORY, "two\n", "editor")

    def tree() -> dict[str, str]:
        folder = project / ".fusion" / "memdesk"
        return {p.name: h.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir() if p.is_file()}

    before = tree()
    assert history.get_version(project, history.list_versions(project)[0].id)[1] == "two\n"
    code = f"from core.storage.history import versions as history; print(len(history.list_versions({str(project)!r})))"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[4])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.strip() == "2"
    assert tree() == before


def test_the_hash_without_openssl_is_the_same_sha256(monkeypatch):
    # A process that has not loaded hashlib hashes small contents with CPython's own SHA-256: same digest.
    import hashlib
    import sys

    from core.storage.history import store as history_store

    for data in (b"", b"abc", "é daily note\n".encode() * 9000, b"x" * (history_store._BUILTIN_HASH_MAX + 1)):
        with monkeypatch.context() as m:
            m.delitem(sys.modules, "hashlib")
            assert history_store.sha256_hex(data) == hashlib.sha256(data).hexdigest()
