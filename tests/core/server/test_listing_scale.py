"""Issue 23's leftover 1: ``GET /api/memory/files`` over thousands of agent documents scales, and still shows
each caller only what it may read (through a real ``memdesk serve``).

- The listing costs one ``realpath`` a folder at most, never one a document (before: one for each agent folder,
  and one for each document a path-limited read token was shown: 3.2 s for 20,000 documents in the attack;
  ``python -m bench listing`` prints the figures).
- What each token sees is what :meth:`Access.can` lets it read, document by document, on a hostile folder:
  links inside the agent's folder to the project's memory and out of the project, a link to a document inside
  its paths, a hard link to the project's memory (hidden from a path-limited reader: leftover 3).
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

from core.project import Project
from core.server.access import Access
from tests.core.server.conftest import many_agents

AGENTS = 400
PER_AGENT = 5



def test_listing_thousands_of_documents_costs_no_realpath_per_document(serve, tokens, layered_project,
                                                                        monkeypatch) -> None:
    many_agents(layered_project, AGENTS, PER_AGENT)
    full = tokens.create("owner")
    narrow = tokens.create("narrow", scope="read", paths=[".fusion/agent-memory/agent-00*/**"])
    srv = serve(layered_project, mcp=False)
    owner, reader = srv.client(full), srv.client(narrow)
    assert owner.get("/api/memory/files").status_code == 200  # the project is opened before counting
    calls: list[str] = []
    real = posixpath.realpath

    def counted(path, *args, **kwargs):
        calls.append(os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(posixpath, "realpath", counted)
    everything = owner.get("/api/memory/files")
    by_owner = len(calls)
    calls.clear()
    limited = reader.get("/api/memory/files")
    by_reader = len(calls)
    monkeypatch.setattr(posixpath, "realpath", real)

    paths = [f["path"] for f in everything.json()["files"]]
    assert len(paths) == AGENTS * PER_AGENT + 10, len(paths)  # the fixture's 10 documents beside the agents'
    assert paths[:2] == [".fusion/memory/MEMORY.md", ".fusion/memory/2026-08-20.md"]
    seen = [f["path"] for f in limited.json()["files"]]
    assert len(seen) == 100 * PER_AGENT and all(p.startswith(".fusion/agent-memory/agent-00") for p in seen)
    assert seen == [p for p in paths if p.startswith(".fusion/agent-memory/agent-00")]  # the same order
    # Before: 403 realpaths for the owner (one per agent folder) and 903 for the reader (its 500 documents too).
    assert by_owner <= 10, by_owner
    assert by_reader <= 10 + 100, by_reader  # at most one per folder it is shown


def _hostile(root: Path, outside: Path) -> None:
    bot = root / ".fusion" / "agent-memory" / "bot"
    bot.mkdir(parents=True)
    (bot / "MEMORY.md").write_text("# Agent Memory\n\n- the bot's own\n", encoding="utf-8")
    os.symlink("../../memory/MEMORY.md", bot / "2026-08-21.md")  # to the project's memory: not the bot's
    outside.write_text("# elsewhere\n", encoding="utf-8")
    os.symlink(str(outside), bot / "2026-08-22.md")  # out of the project
    os.symlink("MEMORY.md", bot / "2026-08-23.md")  # to the bot's own document: the bot's
    os.link(root / ".fusion/memory/DREAMS.md", bot / "DREAMS.md")  # another name for the project's dreams
    twin = root / ".fusion" / "agent-memory" / "twin"
    twin.mkdir()
    (twin / "MEMORY.md").write_text("# twin\n", encoding="utf-8")
    os.symlink("../bot", root / ".fusion" / "agent-memory" / "linked")  # a folder link: never listed


def test_each_token_sees_what_it_may_read_on_a_hostile_folder(serve, tokens, layered_project, tmp_path) -> None:
    _hostile(layered_project, tmp_path / "outside.md")
    cases = {
        "owner": Access("owner"),
        "bot-reader": Access("bot-reader", "read", paths=(".fusion/agent-memory/bot/**",)),
        "bot-appender": Access("bot-appender", "append", paths=(".fusion/agent-memory/bot/**",)),
        "memory-reader": Access("memory-reader", "read", paths=(".fusion/memory/*.md",)),
        "star-reader": Access("star-reader", "read", paths=("**/MEMORY.md", "**/2026-08-2?.md")),
    }
    made = {name: tokens.create(name, scope=a.scope, paths=list(a.paths)) for name, a in cases.items()}
    srv = serve(layered_project, mcp=False)
    docs = Project(layered_project).documents()
    for name, who in cases.items():
        got = [f["path"] for f in srv.client(made[name]).get("/api/memory/files").json()["files"]]
        limited = who.scope == "read" and who.paths
        # The rule as it stood, document by document, with hard-linked documents hidden from limited readers.
        rule = [d.path for d in docs if who.can("read", d.path, layered_project)
                and not (limited and os.stat(layered_project / d.path).st_nlink > 1)]
        assert got == rule, (name, got, rule)
    bot = srv.client(made["bot-reader"]).get("/api/memory/files").json()["files"]
    assert [f["path"] for f in bot] == [".fusion/agent-memory/bot/MEMORY.md", ".fusion/agent-memory/bot/2026-08-23.md"]
    star = [f["path"] for f in srv.client(made["star-reader"]).get("/api/memory/files").json()["files"]]
    assert ".fusion/agent-memory/bot/2026-08-21.md" in star  # a link to MEMORY.md, which its globs name
    assert ".fusion/agent-memory/bot/2026-08-22.md" not in star  # leads out of the project
    owner = [f["path"] for f in srv.client(made["owner"]).get("/api/memory/files").json()["files"]]
    assert ".fusion/agent-memory/bot/DREAMS.md" in owner and not any("/linked/" in p for p in owner)
