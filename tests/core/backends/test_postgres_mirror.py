"""The postgres backend's file mirror when memdesk appends: the new bytes are appended to the file (one
fsync) instead of the file being replaced. A crash part-way through leaves the text mirrored before plus
a prefix of the entry: that file is behind (rewritten from the database), never an edit to import; an
agent's append landing between memdesk's appends is imported by content, never overwritten or lost."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.backends import mirror_ledger as ledger_mod
from core.backends.pg import mirror as mirror_mod
from core.backends.pg.mirror import Decision, reconcile
from core.backends.postgres import PostgresMemoryBackend
from tests.core.backends.test_postgres import ENTRY, MEMORY, agent_append, appender, open_backend, sql
from tests.core.pg_server import PgServer, project_key

HEAD = "# Project Memory\n\n## Notes\n"


class Died(BaseException):
    """The process ends here (nothing after it runs, no ``except Exception`` catches it)."""


@pytest.fixture
def key(pg_connection: str) -> str:
    return project_key()


def mirror_text(root: Path) -> str:
    return (root / MEMORY).read_text(encoding="utf-8")


def kept_versions(b: PostgresMemoryBackend) -> list[tuple[str, str]]:
    return [(v.source, b.get_version(v.id)[1]) for v in b.list_versions(MEMORY)]


# -- reconcile alone ----------------------------------------------------------------------------------
def test_the_mirrored_text_plus_a_prefix_of_the_databases_addition_is_behind():
    base = HEAD + ENTRY.format("first")
    db = base + ENTRY.format("second, with a → and an é")
    for cut in range(1, len(db) - len(base)):
        part = db[:len(base) + cut]
        assert reconcile(part, db, base, False) == Decision("keep"), cut
        assert reconcile(part + "\x00" * 7, db, base, False) == Decision("keep"), cut  # bytes never written
        assert reconcile(part, db, None, False) == Decision("keep"), cut  # no record of what was mirrored
    # Another host appended after us: the file is still only behind.
    assert reconcile(db[:-3], db + ENTRY.format("host B"), base, False) == Decision("keep")


def test_an_agents_addition_is_imported_from_the_latest_text_the_file_holds():
    base = HEAD + ENTRY.format("first")
    db = base + ENTRY.format("second")
    agent = ENTRY.format("the agent's")
    assert reconcile(base + agent, base, base, False) == Decision("append", appended=agent)
    # The file got the database's text but the note of it was lost (a crash between the two): the
    # agent's text alone is new, the database's own entry is not stored twice.
    assert reconcile(db + agent, db, base, False) == Decision("append", appended=agent)
    assert reconcile(db + agent, db + ENTRY.format("host B"), db, False) == Decision("append", appended=agent)
    # Another host removed what was mirrored last: only the agent's addition is taken, the removal stays.
    assert reconcile(db + agent, base, db, False) == Decision("append", appended=agent)
    # A shortened file is not "behind": the agent's cut goes through the merge.
    assert reconcile(HEAD, db, db, False).action == "replace"


# -- appends through the backend ----------------------------------------------------------------------
def test_memdesks_append_extends_the_mirror_file_in_place(project: Path, key: str):
    b = open_backend(project, key)
    try:
        b.write(HEAD)
        inode = os.stat(project / MEMORY).st_ino
        for n in range(3):
            b.append_document(MEMORY, appender(f"entry {n}"))
        assert os.stat(project / MEMORY).st_ino == inode  # appended to, never replaced
        assert mirror_text(project) == b.read() == HEAD + "".join(ENTRY.format(f"entry {n}") for n in range(3))
        b.write(HEAD)  # any other change replaces the file
        assert os.stat(project / MEMORY).st_ino != inode and mirror_text(project) == HEAD
    finally:
        b.shutdown()


@pytest.mark.parametrize("cut", [0, 1, 9, "inside a character", "all"])
def test_a_crash_part_way_through_appending_to_the_mirror_is_rewritten_never_imported(
        project: Path, key: str, pg: PgServer, monkeypatch: pytest.MonkeyPatch, cut: object):
    b = open_backend(project, key)
    b.write(HEAD)
    b.append_document(MEMORY, appender("first"))
    before = b.read()
    entry = ENTRY.format("second → déjà vu")
    data = entry.encode("utf-8")
    keep = len(data) if cut == "all" else data.index("→".encode()) + 1 if cut == "inside a character" else int(cut)

    def dies_part_way(fd: int, view: memoryview) -> int:
        os.write(fd, view[:keep])
        raise Died

    with monkeypatch.context() as m, pytest.raises(Died):
        m.setattr(ledger_mod, "_write", dies_part_way)
        b.append_document(MEMORY, lambda current: entry)
    b.shutdown()  # the process is gone: its state file still names the text before the append
    assert (project / MEMORY).read_bytes() == before.encode("utf-8") + data[:keep]

    again = open_backend(project, key)  # memdesk starts again
    try:
        want = before + entry
        assert again.read() == want  # the entry once, whole: the cut copy was not imported
        assert mirror_text(project) == want
        assert kept_versions(again) == [] and again.warnings == []
        assert sql(pg, "SELECT content FROM memdesk_documents WHERE project_key = %s", key) == [(want,)]
        again.append_document(MEMORY, appender("third"))
        assert mirror_text(project) == again.read() == want + ENTRY.format("third")
    finally:
        again.shutdown()


def test_a_crash_between_the_mirror_append_and_its_note_stores_nothing_twice(project: Path, key: str,
                                                                           monkeypatch: pytest.MonkeyPatch):
    b = open_backend(project, key)
    b.write(HEAD)
    def dies(*args: object, **kwargs: object) -> None:
        raise Died

    with monkeypatch.context() as m, pytest.raises(Died):
        m.setattr(mirror_mod.MirrorFiles, "remember", dies)
        b.append_document(MEMORY, appender("memdesk's"))
    b.shutdown()
    agent_append(project, "the agent's, before memdesk starts again")
    again = open_backend(project, key)
    try:
        want = HEAD + ENTRY.format("memdesk's") + ENTRY.format("the agent's, before memdesk starts again")
        assert again.read() == want and mirror_text(project) == want
    finally:
        again.shutdown()


def test_an_agents_appends_between_memdesks_appends_are_imported_by_content(project: Path, key: str,
                                                                            tmp_path: Path):
    b = open_backend(project, key)
    try:
        b.write(HEAD)
        want = HEAD
        for n in range(3):
            b.append_document(MEMORY, appender(f"memdesk {n}"))
            agent_append(project, f"agent {n}")
            want += ENTRY.format(f"memdesk {n}") + ENTRY.format(f"agent {n}")
        b.append_document(MEMORY, appender("memdesk last"))
        want += ENTRY.format("memdesk last")
        assert b.read() == want and mirror_text(project) == want
        assert all(want.count(f"agent {n}") == 1 and want.count(f"memdesk {n}") == 1 for n in range(3))
    finally:
        b.shutdown()
    other = open_backend(tmp_path, key, mirror=False)  # the database holds it all
    try:
        assert other.read() == want
    finally:
        other.shutdown()


def test_an_agents_append_racing_memdesks_append_to_the_file_is_kept(project: Path, key: str, pg: PgServer,
                                                                     monkeypatch: pytest.MonkeyPatch):
    b = open_backend(project, key)
    try:
        b.write(HEAD)
        b.append_document(MEMORY, appender("first"))
        real_write = ledger_mod._write

        def agent_gets_in_first(fd: int, view: memoryview) -> int:
            agent_append(project, "the agent's, just before memdesk's bytes")  # after memdesk checked the file
            return real_write(fd, view)

        with monkeypatch.context() as m:
            m.setattr(ledger_mod, "_write", agent_gets_in_first)
            b.append_document(MEMORY, appender("second"))
        # O_APPEND put memdesk's bytes after the agent's, and the offset it landed at showed the agent's
        # bytes before them: taken into the database once, after memdesk's committed entry, and the file
        # rewritten in the database's order. Nothing overwritten, nothing twice.
        want = HEAD + ENTRY.format("first") + ENTRY.format("second") + ENTRY.format(
            "the agent's, just before memdesk's bytes")
        assert mirror_text(project) == want
        assert sql(pg, "SELECT content FROM memdesk_documents WHERE project_key = %s", key) == [(want,)]
        text = b.read()
        assert text == mirror_text(project) and text.count("the agent's") == 1 and text.count("second") == 1
    finally:
        b.shutdown()


@pytest.mark.parametrize("rewrite", ["keeps the old text", "drops the old text"])
def test_a_mirror_rewritten_in_place_just_before_memdesk_appends_loses_and_repeats_nothing(
        project: Path, key: str, monkeypatch: pytest.MonkeyPatch, rewrite: str):
    b = open_backend(project, key)
    try:
        b.write(HEAD)
        new = (HEAD if rewrite == "keeps the old text" else "# Agent's memory\n") + "- the agent's own line\n"
        real_open = os.open

        def agent_rewrites_first(path, flags, *args):  # noqa: ANN001, ANN202
            if flags & os.O_APPEND and str(path).endswith("memory.md"):  # memdesk is about to append
                (project / MEMORY).write_text(new, encoding="utf-8")  # in place: the same inode
            return real_open(path, flags, *args)

        with monkeypatch.context() as m:
            m.setattr(ledger_mod.os, "open", agent_rewrites_first)
            b.append_document(MEMORY, appender("memdesk's"))
        if rewrite == "drops the old text":
            assert mirror_text(project) == new  # not appended to: the file is no longer what memdesk read
        text = b.read()
        assert mirror_text(project) == text and text.count("memdesk's") == 1
        if rewrite == "keeps the old text":  # an append after all: taken in once, after memdesk's entry
            assert text == HEAD + ENTRY.format("memdesk's") + "- the agent's own line\n"
        else:  # both sides changed the same lines: the database's text wins, the agent's is kept in history
            assert ("mirror-conflict", new) in kept_versions(b)
    finally:
        b.shutdown()


def test_a_hard_linked_or_linked_mirror_is_replaced_never_appended_through(project: Path, key: str):
    b = open_backend(project, key)
    try:
        b.write(HEAD)
        other = project / "elsewhere.md"
        os.link(project / MEMORY, other)  # the same file under another name
        b.append_document(MEMORY, appender("first"))
        assert mirror_text(project) == HEAD + ENTRY.format("first")
        assert other.read_text(encoding="utf-8") == HEAD and os.stat(project / MEMORY).st_nlink == 1
        target = project / ".fusion" / "real.md"
        target.write_text(mirror_text(project), encoding="utf-8")
        (project / MEMORY).unlink()
        (project / MEMORY).symlink_to("real.md")
        b.append_document(MEMORY, appender("second"))  # replaced as any write replaces it
        assert mirror_text(project) == b.read() == HEAD + ENTRY.format("first") + ENTRY.format("second")
        assert target.read_text(encoding="utf-8") == HEAD + ENTRY.format("first")
    finally:
        b.shutdown()


def test_the_note_of_what_was_mirrored_is_rewritten_in_place_never_through_a_link(project: Path, key: str):
    b = open_backend(project, key)
    try:
        b.write(HEAD)
        note = b.mirror._state(MEMORY)  # type: ignore[union-attr]
        inode = os.stat(note).st_ino
        b.append_document(MEMORY, appender("first"))
        assert os.stat(note).st_ino == inode  # rewritten in place
        assert b.mirror.last(MEMORY).length == len(HEAD + ENTRY.format("first"))  # type: ignore[union-attr]
        planted = project / "planted.txt"
        planted.write_text("not memdesk's\n", encoding="utf-8")
        note.unlink()
        os.link(planted, note)  # a hard link to another file: replaced, its other name untouched
        b.append_document(MEMORY, appender("second"))
        assert planted.read_text(encoding="utf-8") == "not memdesk's\n"
        assert os.stat(note).st_nlink == 1 and b.mirror.last(MEMORY).length == len(b.read())  # type: ignore[union-attr]
        note.unlink()
        note.symlink_to(planted)  # a symbolic link: replaced too
        b.append_document(MEMORY, appender("third"))
        assert planted.read_text(encoding="utf-8") == "not memdesk's\n" and not note.is_symlink()
        assert mirror_text(project) == b.read()
    finally:
        b.shutdown()
