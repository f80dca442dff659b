"""``GET /api/memory``'s fast path (core/server/memory_read.py) against the FastAPI route, differentially.

Two real ``memdesk serve`` servers over two identical projects, one with the fast path and one with it switched
off (its ``served_project`` answering "leave it to the route" for every request). The same requests (query
names, tokens of every scope, a wrong Host, no token) go to both after the same change of the memory on disk
(another writer's append, a same-size rewrite with the old mtime, a truncation, a rewrite, bytes that are not
UTF-8, a link out of the project, an emptied and a removed file): every answer must be the same status, headers
and bytes, every 200 must carry the bytes on disk now, and both servers must put the same reads on record.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
import pytest

from core.server import memory_read, noticing
from core.server.memo import TextFacts
from core.server.tokens import TokenStore
from core.storage import readlog
from core.storage.fileio import content_hash
from core.storage.history import versions as history
from core.storage.history import worker

MEMORY = ".fusion/memory.md"
START = "# Project Memory\n\n- the first entry é\n" + "- a line of an agent's memory\n" * 3000


def _append(disk: Path, text: str) -> None:
    with disk.open("a", encoding="utf-8") as fh:
        fh.write(text)


def _same_size_same_mtime(disk: Path) -> None:
    """Rewrite one character in place, keeping the size and the modification time."""
    st = disk.stat()
    data = bytearray(disk.read_bytes())
    data[2] = ord("Q")
    disk.write_bytes(bytes(data))
    os.utime(disk, ns=(st.st_atime_ns, st.st_mtime_ns))


def _link_out(disk: Path) -> None:
    outside = disk.parent.parent.parent / "outside.md"
    outside.write_text("# not the project's\n", encoding="utf-8")
    disk.unlink()
    disk.symlink_to(outside)


#: (label, what happens to the memory on disk before the requests)
CHANGES = [
    ("first serve", lambda disk: None),
    ("unchanged", lambda disk: None),
    ("another writer appends", lambda disk: _append(disk, "- appended by another program\n")),
    ("appends again", lambda disk: _append(disk, "- and again ✓ \"quoted\" \\ back\n")),
    ("same size, same mtime", _same_size_same_mtime),
    ("truncated", lambda disk: disk.write_bytes(disk.read_bytes()[:5000])),
    ("rewritten, not an append", lambda disk: disk.write_text("# Rewritten\n\n- one line\n", encoding="utf-8")),
    ("grows after the rewrite", lambda disk: _append(disk, "- grown\n")),
    ("not UTF-8", lambda disk: disk.write_bytes(b"# Memory\n\n- bad \xff\xfe bytes\n")),
    ("UTF-8 again", lambda disk: disk.write_text(START, encoding="utf-8")),
    ("emptied", lambda disk: disk.write_text("", encoding="utf-8")),
    ("removed", lambda disk: disk.unlink()),
    ("back", lambda disk: disk.write_text(START, encoding="utf-8")),
    ("a link out of the project", _link_out),
]


def _requests(tokens: dict[str, str]) -> list[tuple[str, str, list[tuple[str, str]]]]:
    def h(token: str, *more: tuple[str, str]) -> list[tuple[str, str]]:
        return [("Authorization", f"Bearer {token}"), ("User-Agent", "agent/2"), *more]

    full = tokens["full"]
    return [
        ("plain", "", h(full)),
        ("project", "project={p}", h(full)),
        ("projectId by folder", "projectId={root}", h(tokens["reader"])),
        ("not served", "project=/etc", h(full)),
        ("both names", "project={p}&projectId={p}", h(full)),
        ("name repeated", "project={p}&project={p}", h(full)),
        ("blank", "project=", h(full)),
        ("unknown query name", "project={p}&x=1", h(full)),
        ("two user agents", "", h(full, ("User-Agent", "second/1"))),
        ("narrow path token", "", h(tokens["narrow"])),
        ("other project's token", "", h(tokens["elsewhere"])),
        ("append-only agent", "", h(tokens["bot"])),
        ("wrong token", "", h("not-a-token")),
        ("wrong host", "", h(full, ("Host", "evil.example"))),
    ]


@pytest.fixture
def two(tmp_path: Path, serve, monkeypatch: pytest.MonkeyPatch):
    made = []
    for name in ("fast", "route"):
        root = tmp_path / name / "proj"
        (root / ".fusion").mkdir(parents=True)
        (root / MEMORY).write_text(START, encoding="utf-8")
        made.append(root)
    found = memory_read.served_project
    switched_off: set[int] = set()
    used: list[int] = []

    def maybe(api, scope):
        if scope["server"][1] in switched_off:
            return None
        used.append(scope["server"][1])
        return found(api, scope)

    monkeypatch.setattr(memory_read, "served_project", maybe)
    fast = serve(made[0], mcp=False)
    route = serve(made[1], mcp=False)
    switched_off.add(route.port)
    return fast, route, made[0], made[1], used


def test_the_fast_read_answers_every_request_as_the_route_does(two, tokens: TokenStore):
    fast, route, fast_root, route_root, used = two
    made = {"full": tokens.create("agent-1"), "reader": tokens.create("reader", scope="read"),
            "narrow": tokens.create("narrow", scope="read", paths=[".fusion/memory/MEMORY.md"]),
            "elsewhere": tokens.create("elsewhere", projects=["other"]),
            "bot": tokens.create("bot", scope="append", paths=[".fusion/agent-memory/bot/**"])}
    differ, served_bytes = [], 0
    with httpx.Client(timeout=60) as c:
        for change_label, change in CHANGES:
            for root in (fast_root, route_root):
                change(root / MEMORY)
            for label, query, headers in _requests(made):
                answers = []
                for srv, root in ((fast, fast_root), (route, route_root)):
                    url = f"{srv.url}/api/memory?{query.format(p='proj', root=root)}"
                    sent = [(k, v.replace("{port}", str(srv.port))) for k, v in headers]
                    r = c.get(url, headers=sent)
                    if r.status_code == 200:  # the bytes on disk now, never a stale cache
                        disk = root / MEMORY
                        now = disk.read_bytes().decode("utf-8") if disk.exists() else ""
                        assert r.json()["content"] == now and r.json()["hash"] == content_hash(now), (change_label, label)
                        served_bytes += 1
                    head = {k: v for k, v in r.headers.items() if k != "date"}
                    answers.append((r.status_code, head, r.content.replace(str(srv.port).encode(), b"PORT")))
                if answers[0] != answers[1]:
                    differ.append(f"{change_label} / {label}: fast {answers[0]!r:.600} / route {answers[1]!r:.600}")
    assert differ == [], "\n".join(differ)
    assert served_bytes > 2 * len(CHANGES) and used, "the fast path answered nothing"
    # Both put the same reads on record (client, token, document, hash, lines), none for a refused request.
    rows = {root: [(e.client, e.token, e.path, e.hash, e.start_line, e.end_line, e.total_lines, e.size)
                   for e in readlog.query(root=root) if e.via == "http"] for root in (fast_root, route_root)}
    assert rows[fast_root] == rows[route_root] and len(rows[fast_root]) >= 2 * len(CHANGES)
    # (an append token reads every document; its paths limit what it adds to)
    assert {r[1] for r in rows[fast_root]} == {"agent-1", "reader", "bot"} and {r[0] for r in rows[fast_root]} == {"agent/2"}
    # Another writer's appends are history's, as theirs, on both.
    noticing.flush()
    worker.settled()
    for root in (fast_root, route_root):
        theirs = [e for e in history.list_events(root, MEMORY) if "appended by another program" in e.text]
        assert theirs and all(e.author == "program" for e in theirs), root


def test_a_grown_read_works_on_bytes_and_never_builds_or_compares_the_whole_text(tmp_path: Path, monkeypatch):
    """After another writer's append the served read compares bytes and decodes only the tail: no text is compared
    (TextFacts.is_text is not asked) and the whole text is not built until somebody asks for it; the
    noticer is told the text only grew and records every append, the texts joined on its own thread."""
    from core.project import Project
    from core.server import service

    root = tmp_path / "proj"
    (root / ".fusion").mkdir(parents=True)
    disk = root / MEMORY
    disk.write_text(START, encoding="utf-8")
    p = Project(root)
    service.text_facts(p, MEMORY, p.read(MEMORY))  # served once
    told: list[bool | None] = []
    real_notice = noticing._Noticer.notice

    def spy(self, project, rel, before, after, grown_=None):
        told.append(grown_)
        return real_notice(self, project, rel, before, after, grown_)

    monkeypatch.setattr(noticing._Noticer, "notice", spy)
    compared: list[int] = []
    real_is_text = TextFacts.is_text
    monkeypatch.setattr(TextFacts, "is_text", lambda self, text: compared.append(len(text)) or real_is_text(self, text))
    for i in range(3):
        _append(disk, f"- outside append {i} “é”\n")
        rel, facts = service.read_unchanged(p, None)
        whole = disk.read_bytes()
        assert facts is not None and rel == MEMORY and facts.data == whole and facts.size == len(whole)
        assert facts.hash == content_hash(whole.decode()) and facts.lines == whole.decode().count("\n") + 1
        assert facts._lazy[1], "the whole text was built by the read"
        assert json.loads(b"".join(facts.json_parts())) == whole.decode()
        assert service.read_unchanged(p, None)[1] is facts  # the same bytes again: the same facts, nothing noticed
    assert told == [True, True, True] and compared == []
    assert facts.text == disk.read_text(encoding="utf-8") and not facts._lazy[1]  # joined once, when asked
    noticing.flush()
    worker.settled()
    texts = [e.text for e in history.list_events(root, MEMORY)]
    assert all(any(f"outside append {i}" in t for t in texts) for i in range(3)), texts
