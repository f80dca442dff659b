"""A mirror ledger note that is garbled, cut or left behind leads to a safe whole-text look (issue 19, item 2).

Since ac20a3b the note is one 256-byte line written over in place. Whatever a crash or a power cut leaves
there (garbage, half a note, the note before the last one), the next look must take every agent line in
exactly once and repeat none: agents append with the shell's ``>>`` between memdesk's appends, the note
is spoiled, and then the race tests' own check (:func:`exactly_once`) runs on the database and the file.

A crash after a commit and before its note (older than ac20a3b): the note before still matched the file, so
the agents' lines the commit had taken in (and, after an append, memdesk's entry, whose own note was already
gone) were taken in again. Now the sqlite backend puts the agents' lines' note down as pending before the
commit and ends the entry's note only after the ledger's (the ledger's crash rule).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from core.backends.sqlite import SqliteMemoryBackend

MEMORY = ".fusion/memory.md"
HEAD = "# Project Memory\n\n## Notes\n"


def _agent(root: Path, a: int, first: int, n: int) -> None:
    script = f'i={first}; while [ $i -lt {first + n} ]; do printf "\\n- agent {a} line %s\\n" $i >> {MEMORY}; ' \
             f'i=$((i+1)); done'
    subprocess.run(["sh", "-c", script], cwd=root, check=True)


def _note(root: Path) -> Path:
    found = list((root / ".fusion/memdesk/mirror").rglob("*.ledger"))
    assert len(found) == 1, found
    return found[0]


def _spoil(kind: str, note: Path, before: bytes) -> None:
    data = note.read_bytes()
    if kind == "garbage":
        note.write_bytes(bytes(range(256)))
    elif kind == "half":
        note.write_bytes(data[:100])
    elif kind == "zeros":  # a block never written back
        note.write_bytes(b"\x00" * len(data))
    elif kind == "torn":  # the new note's first half over the old note's second
        note.write_bytes(data[:128] + before[128:])
    elif kind == "empty":
        note.write_bytes(b"")


def _exactly_once(text: str, agents: int, lines: int, entries: int) -> list[str]:
    wrong = []
    for a in range(agents):
        for i in range(lines):
            n = len(re.findall(rf"^- agent {a} line {i}$", text, re.M))
            if n != 1:
                wrong.append(f"agent {a} line {i} x{n}")
    for j in range(entries):
        n = len(re.findall(rf"^- memdesk entry {j}$", text, re.M))
        if n != 1:
            wrong.append(f"memdesk entry {j} x{n}")
    return wrong


@pytest.mark.parametrize("kind", ["garbage", "half", "zeros", "torn", "empty"])
def test_a_spoiled_note_loses_and_repeats_no_line(project: Path, kind: str):
    b = SqliteMemoryBackend()
    b.initialize({}, project)
    b.write_document(MEMORY, HEAD)
    per, rounds = 5, 6
    try:
        for j in range(rounds):
            before = _note(project).read_bytes()
            _agent(project, 0, j * per, per)
            b.append_document(MEMORY, lambda cur, e=f"memdesk entry {j}": None if e + "\n" in cur else f"\n- {e}\n")
            assert len(_note(project).read_bytes()) == 256  # the in-place note
            _spoil(kind, _note(project), before)
            _agent(project, 1, j * per, per)
        db = b.read_document(MEMORY) or ""
    finally:
        b.shutdown()
    b = SqliteMemoryBackend()
    b.initialize({}, project)
    try:
        again = b.read_document(MEMORY) or ""
    finally:
        b.shutdown()
    assert _exactly_once(db, 2, per * rounds, rounds) == []
    assert again == db == (project / MEMORY).read_text(encoding="utf-8")


class Died(Exception):
    """The process dies here (raised through the backend, as a kill would stop it)."""


@pytest.mark.parametrize("where", ["append", "intake"])
def test_a_crash_between_a_commit_and_its_note_repeats_no_line(project: Path, where: str,
                                                               monkeypatch: pytest.MonkeyPatch):
    """memdesk dies after its transaction committed (agents' lines taken in, its entry added) and before the
    ledger note of it is down: the next start takes every line in once."""
    from core.backends import mirror_ledger

    b = SqliteMemoryBackend()
    b.initialize({}, project)
    b.write_document(MEMORY, HEAD)
    b.append_document(MEMORY, lambda cur: "\n- memdesk entry 0\n")
    _agent(project, 0, 0, 3)  # taken in by the next transaction

    real_save = mirror_ledger.Ledger.save

    def dies(self, note, pending=None):
        if pending is None:  # the final note, after the commit
            raise Died
        real_save(self, note, pending)

    with monkeypatch.context() as m, pytest.raises(Died):
        m.setattr(mirror_ledger.Ledger, "save", dies)
        if where == "append":
            b.append_document(MEMORY, lambda cur: "\n- memdesk entry 1\n")
        else:
            b.read_document(MEMORY)
    b.shutdown()
    _agent(project, 1, 0, 3)  # agents go on while memdesk is down
    again = SqliteMemoryBackend()
    again.initialize({}, project)
    try:
        if where == "intake":
            again.append_document(MEMORY, lambda cur: "\n- memdesk entry 1\n")
        db = again.read_document(MEMORY) or ""
    finally:
        again.shutdown()
    assert _exactly_once(db, 2, 3, 2) == []
    assert db == (project / MEMORY).read_text(encoding="utf-8")


@pytest.mark.parametrize("where", ["append", "intake"])
def test_postgres_a_crash_between_a_commit_and_its_note_repeats_no_line(project: Path, where: str, pg_connection: str,
                                                                        monkeypatch: pytest.MonkeyPatch):
    """The same crash on the postgres backend with its mirror on."""
    from core.backends import mirror_ledger
    from core.backends.postgres import PostgresMemoryBackend
    from tests.core.pg_server import project_key

    config = {"connection": "team", "projectKey": project_key(), "mirror": True}

    def opened() -> PostgresMemoryBackend:
        b = PostgresMemoryBackend()
        b.initialize(config, project)
        return b

    b = opened()
    b.write_document(MEMORY, HEAD)
    b.append_document(MEMORY, lambda cur: "\n- memdesk entry 0\n")
    _agent(project, 0, 0, 3)
    real_save = mirror_ledger.Ledger.save

    def dies(self, note, pending=None):
        if pending is None:
            raise Died
        real_save(self, note, pending)

    with monkeypatch.context() as m, pytest.raises(Died):
        m.setattr(mirror_ledger.Ledger, "save", dies)
        if where == "append":
            b.append_document(MEMORY, lambda cur: "\n- memdesk entry 1\n")
        else:
            b.read_document(MEMORY)
    b.shutdown()
    _agent(project, 1, 0, 3)
    again = opened()
    try:
        if where == "intake":
            again.append_document(MEMORY, lambda cur: "\n- memdesk entry 1\n")
        db = again.read_document(MEMORY) or ""
    finally:
        again.shutdown()
    assert _exactly_once(db, 2, 3, 2) == []
    assert db == (project / MEMORY).read_text(encoding="utf-8")
