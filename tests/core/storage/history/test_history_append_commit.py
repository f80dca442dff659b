"""An append gives history one job and one commit: its event row, then the note of what the document holds.

Before, an append handed history's thread three jobs (open the database ahead, the note of what memdesk wrote,
the event row) and two transactions, each with five syncs; a server paid the hand-offs and thread switches on
every ``POST /api/memory/append`` (docs/servers.md). Here the statements history's own connection runs are
traced on its thread (``sqlite3.Connection.set_trace_callback``) while real appends and a save go through
``Project``: each append is one ``BEGIN IMMEDIATE`` … ``COMMIT`` holding the event first and the note after, at
``synchronous=NORMAL`` (the entry's own ``O_APPEND`` + ``fsync`` is the durable write); a save's version is
committed at ``synchronous=FULL``. What is recorded is unchanged: the event's text, source and author, and
the seen text the next open compares the file with.
"""

from __future__ import annotations

import sqlite3
import zlib
from pathlib import Path

import pytest

from core.project import Project
from core.storage.history import db as history_db
from core.storage.history import store as history_store
from core.storage.history import versions as history
from core.storage.history import worker as history_worker

REL = ".fusion/memory.md"
REAL = Path(__file__).resolve().parents[4] / "tests" / "data" / "fusion-real" / ".fusion" / "memory.md"


def _project(root: Path, text: str) -> Project:
    (root / ".fusion").mkdir(parents=True)
    (root / REL).write_text(text, encoding="utf-8")
    return Project(root)


def _trace(root: Path) -> list[str]:
    """Every statement history's connection to ``root`` runs from now on (set on history's own thread)."""
    statements: list[str] = []

    def install() -> None:
        conn = history_db.connection(root, create=True)
        assert conn is not None
        conn.set_trace_callback(statements.append)

    history_worker.submit(install).result()
    return statements


def _untrace(root: Path) -> None:
    history_worker.submit(lambda: history_db.connection(root, create=True).set_trace_callback(None)).result()


def _transactions(statements: list[str]) -> list[list[str]]:
    """The statements between each ``BEGIN`` and its ``COMMIT``, with the ``PRAGMA synchronous`` before each."""
    out: list[list[str]] = []
    pragma: list[str] = []
    current: list[str] | None = None
    for sql in statements:
        head = " ".join(sql.split())
        if head.startswith("PRAGMA synchronous"):
            pragma = [head]
        elif head.startswith("BEGIN"):
            current = [*pragma, head]
        elif current is not None:
            current.append(head)
            if head.startswith("COMMIT"):
                out.append(current)
                current = None
    return out


def _sync_level(root: Path) -> list[str]:
    """The ``PRAGMA synchronous`` each commit ran under, as the connection reports it (on history's thread)."""
    return history_worker.submit(
        lambda: history_db.connection(root, create=False).execute("PRAGMA synchronous").fetchone()[0]).result()


@pytest.fixture(autouse=True)
def _settled():
    yield
    history_worker.settled()


def test_an_append_to_a_small_document_is_one_commit_event_first_then_note(tmp_path: Path):
    root = tmp_path / "p"
    project = _project(root, "# Memory\n\nthe first entry\n")
    project.append("warm the database", author="agent-1", source="http-append")
    history_worker.settled()
    statements = _trace(root)
    try:
        for i in range(3):
            assert project.append(f"entry {i}: leases renew at two thirds of their term", author="agent-7",
                                  source="http-append").status == "written"
        history_worker.settled()
    finally:
        _untrace(root)
    commits = _transactions(statements)
    assert len(commits) == 3, statements  # one per append (before: two, the note's and the event's)
    for commit in commits:
        assert commit[0] == "PRAGMA synchronous=NORMAL" or commit[0].startswith("BEGIN"), commit
        body = [s for s in commit if s.startswith(("INSERT", "UPDATE", "DELETE"))]
        assert body[0].startswith("INSERT INTO events"), commit  # the event first, then the note if any
    # Notes are coalesced (a job that runs after a newer append notes the newer text; the later job has none
    # left), but each is in the commit of an event, after it; the last one is the file as it is now (below).
    noted = [c for c in commits if any(s.startswith("INSERT INTO seen") for s in c)]
    assert noted, commits
    assert _sync_level(root) == 1  # NORMAL: what an append commits only says who wrote durable text

    # What is recorded is what was recorded before: the entry, its source and author; the seen text is the file.
    events = history.list_events(root, REL)
    assert [(e.source, e.author) for e in events[:3]] == [("http-append", "agent-7")] * 3
    with sqlite3.connect(root / ".fusion" / "memdesk" / "history.db") as conn:
        data = [zlib.decompress(r[0]).decode() for r in conn.execute("SELECT data FROM events ORDER BY id")]
        seen = conn.execute("SELECT hash FROM seen WHERE path = ?", (REL,)).fetchone()[0]
    assert data[-1] == "entry 2: leases renew at two thirds of their term"
    assert seen == history_store.sha256_hex((root / REL).read_bytes())


def test_a_one_mib_memory_append_is_one_commit_and_a_save_stays_fully_synced(tmp_path: Path):
    real = REAL.read_text(encoding="utf-8")
    root = tmp_path / "big"
    project = _project(root, real * (900_000 // len(real.encode("utf-8"))))
    project.append("warm the database", author="agent-1")
    history_worker.settled()
    statements = _trace(root)
    try:
        for i in range(2):
            assert project.append(f"big entry {i}", author="agent-2", source="cli-append").status == "written"
        history_worker.settled()
        after_appends = len(statements)
        text = (root / REL).read_text(encoding="utf-8")
        project.write(REL, text.replace("big entry 0", "big entry zero"), source="save")
        history_worker.settled()
    finally:
        _untrace(root)
    appends = _transactions(statements[:after_appends])
    assert len(appends) == 2, statements
    for commit in appends:
        assert commit[0] == "PRAGMA synchronous=NORMAL" or commit[0].startswith("BEGIN"), commit
        writes = [s for s in commit if s.startswith(("INSERT", "UPDATE", "DELETE"))]
        assert len(writes) == 1 and writes[0].startswith("INSERT INTO events"), commit  # no note above 256 KiB
    save = _transactions(statements[after_appends:])
    assert save and save[0][0] == "PRAGMA synchronous=FULL", save  # the version before a save: durable at once
    assert any(s.startswith("INSERT INTO versions") for s in save[0]), save
    assert _sync_level(root) == 2  # FULL again after the save
    assert history.list_versions(root, REL)[0].source == "save"


def test_a_server_like_second_append_hands_history_one_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = tmp_path / "p"
    project = _project(root, "# Memory\n\nthe first entry\n")
    project.append("the first append opens history", author="agent-1")
    history_worker.settled()
    jobs: list[str] = []
    submit = history_worker.submit

    def counting(fn, *args, **kwargs):
        jobs.append(getattr(fn, "__name__", repr(fn)))
        return submit(fn, *args, **kwargs)

    monkeypatch.setattr(history_worker, "submit", counting)
    assert project.append("the second append", author="agent-1").status == "written"
    history_worker.settled()
    # Before: _open_quietly (the connection was open already), _note_pending and _insert_event.
    assert [j for j in jobs if j != "<lambda>"] == ["_insert_event"], jobs
