"""Hostile states around the postgres mirror's appends and its notes of what was mirrored (today's changes)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.core.backends.test_postgres import ENTRY, MEMORY, agent_append, appender, open_backend
from tests.core.pg_server import project_key

HEAD = "# Project Memory\n\n## Notes\n"


@pytest.fixture
def key(pg_connection: str) -> str:
    return project_key()


def note_of(root: Path, key: str) -> Path:
    return root / ".fusion" / "memdesk" / "mirror" / key / (MEMORY.replace("/", "__") + ".sha256")


@pytest.mark.parametrize("planted", ["tmp-symlink", "note-symlink", "note-hardlink"])
def test_a_planted_link_beside_the_note_never_writes_outside_the_project(project: Path, key: str, tmp_path: Path,
                                                                         planted: str):
    outside = tmp_path / "outside.txt"
    outside.write_text("the operator's own file\n", encoding="utf-8")
    note = note_of(project, key)
    note.parent.mkdir(parents=True)
    if planted == "tmp-symlink":  # the temporary name the note is written under before its rename
        os.symlink(outside, note.with_name(note.name + ".tmp"))
    elif planted == "note-symlink":
        os.symlink(outside, note)
    else:
        os.link(outside, note)
    b = open_backend(project, key)
    try:
        b.write(HEAD)
        b.append_document(MEMORY, appender("first"))
        agent_append(project, "the agent's")
        b.append_document(MEMORY, appender("second"))
        text = b.read()
    finally:
        b.shutdown()
    assert outside.read_text(encoding="utf-8") == "the operator's own file\n"
    assert text == HEAD + ENTRY.format("first") + ENTRY.format("the agent's") + ENTRY.format("second")
    assert (project / MEMORY).read_text(encoding="utf-8") == text


@pytest.mark.parametrize("note", ["", "zz 5\n", "0" * 64 + " 99999999999999999999\n", "\x00" * 96,
                                  "0" * 64 + " -3\n", "a" * 64 + " 10\n" + "b" * 64 + " 3\n"])
def test_a_hostile_note_loses_no_agent_text_and_duplicates_no_entry(project: Path, key: str, note: str):
    b = open_backend(project, key)
    try:
        b.write(HEAD)
        b.append_document(MEMORY, appender("first"))
        note_of(project, key).write_text(note, encoding="latin-1")
        agent_append(project, "the agent's")
        b.append_document(MEMORY, appender("second"))
        agent_append(project, "another agent line")
        text = b.read()
    finally:
        b.shutdown()
    for entry in ("first", "the agent's", "second", "another agent line"):
        assert text.count(ENTRY.format(entry)) == 1, (entry, text)
    assert (project / MEMORY).read_text(encoding="utf-8") == text


def test_a_truncated_mirror_with_its_note_is_an_edit_not_behind(project: Path, key: str):
    b = open_backend(project, key)
    try:
        b.write(HEAD)
        b.append_document(MEMORY, appender("first"))
        b.append_document(MEMORY, appender("second"))
        # The agent deletes the last entry (the file is now a prefix of the database's text).
        (project / MEMORY).write_text(HEAD + ENTRY.format("first"), encoding="utf-8")
        text = b.read()
        versions = [b.get_version(v.id)[1] for v in b.list_versions(MEMORY)]
    finally:
        b.shutdown()
    assert text == HEAD + ENTRY.format("first")
    assert HEAD + ENTRY.format("first") + ENTRY.format("second") in versions  # the old text is kept


def test_an_agent_rewriting_the_mirror_with_a_longer_text_starting_with_the_old_is_imported(project: Path, key: str):
    b = open_backend(project, key)
    try:
        b.write(HEAD)
        b.append_document(MEMORY, appender("first"))
        # The agent replaces the file (new inode) with the old text plus its own, then memdesk appends.
        tmp = project / ".fusion" / "new.md"
        tmp.write_text(HEAD + ENTRY.format("first") + ENTRY.format("replaced by agent"), encoding="utf-8")
        os.replace(tmp, project / MEMORY)
        b.append_document(MEMORY, appender("second"))
        text = b.read()
    finally:
        b.shutdown()
    assert text == HEAD + ENTRY.format("first") + ENTRY.format("replaced by agent") + ENTRY.format("second")
    assert (project / MEMORY).read_text(encoding="utf-8") == text


class Died(BaseException):
    """The process ends here."""


@pytest.mark.parametrize("keep", [12, 26])
def test_an_agents_append_after_a_crash_part_way_through_the_mirror_append(project: Path, key: str, keep: int,
                                                                          monkeypatch: pytest.MonkeyPatch):
    from core.backends import mirror_ledger as ledger_mod

    b = open_backend(project, key)
    b.write(HEAD)
    b.append_document(MEMORY, appender("first"))
    entry = ENTRY.format("second, cut by a crash")

    def dies_part_way(fd: int, view: memoryview) -> int:
        os.write(fd, view[:keep])
        raise Died

    with monkeypatch.context() as m, pytest.raises(Died):
        m.setattr(ledger_mod, "_write", dies_part_way)
        b.append_document(MEMORY, lambda current: entry)
    b.shutdown()
    agent_append(project, "the agent's, after the crash")
    again = open_backend(project, key)
    try:
        text = again.read()
    finally:
        again.shutdown()
    # The entry once and whole, the agent's after it, no cut copy of the entry stored beside the whole one.
    assert text == HEAD + ENTRY.format("first") + entry + ENTRY.format("the agent's, after the crash")
