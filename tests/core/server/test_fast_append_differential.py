"""``POST /api/memory/append``'s fast path (core/server/fast_append.py) against the FastAPI route, differentially.

Two real ``memdesk serve`` servers over two identical projects, one with the fast path and one with it
switched off (its ``_parse`` answering "leave it to the route" for every request). The same requests, valid
and hostile (bodies, content types, repeated headers, query names, scopes, paths out of the project, a
secret for the firewall, an oversize body, a wrong Host), go to both in the same order: every answer must
be the same status and the same bytes, and the two projects' files the same afterwards.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from core.server import fast_append
from core.server.tokens import TokenStore

MEMORY = ".fusion/memory.md"


def _requests(tokens: dict[str, str]) -> list[tuple[str, str, list[tuple[str, str]], bytes]]:
    """(label, query, headers, body): ``{p}`` in the query is the project's key."""
    j = "application/json"
    full, reader, bot = tokens["full"], tokens["reader"], tokens["bot"]

    def h(token: str = full, kind: str | None = j, *more: tuple[str, str]) -> list[tuple[str, str]]:
        out = [("Authorization", f"Bearer {token}")]
        if kind is not None:
            out.append(("Content-Type", kind))
        return out + list(more)

    def body(value: object) -> bytes:
        return json.dumps(value).encode()

    return [
        ("written", "project={p}", h(), body({"content": "Leases renew at two thirds of their term"})),
        ("duplicate", "project={p}", h(), body({"content": "Leases renew at two thirds of their term"})),
        ("empty", "project={p}", h(), body({"content": " \n\t "})),
        ("projectId", "projectId={p}", h(), body({"content": "named by projectId"})),
        ("by folder", "project={root}", h(), body({"content": "named by its folder"})),
        ("by another folder", "project=/etc", h(), body({"content": "a folder not served"})),
        ("both names", "project={p}&projectId={p}", h(), body({"content": "named twice"})),
        ("name repeated", "project={p}&project={p}", h(), body({"content": "repeated name"})),
        ("blank name", "project=", h(), body({"content": "blank project"})),
        ("unknown query", "project={p}&x=1", h(), body({"content": "unknown query name"})),
        ("charset", "project={p}", h(full, "application/json; charset=utf-8"), body({"content": "with charset"})),
        ("upper type", "project={p}", h(full, "APPLICATION/JSON"), body({"content": "upper-case type"})),
        ("+json", "project={p}", h(full, "application/merge-patch+json"), body({"content": "merge-patch"})),
        ("no type", "project={p}", h(full, None), body({"content": "no content type"})),
        ("text/plain", "project={p}", h(full, "text/plain"), body({"content": "plain text"})),
        ("two types, text first", "project={p}", h(full, "text/plain", ("Content-Type", j)),
         body({"content": "two content types"})),
        ("two types, json first", "project={p}", h(full, j, ("Content-Type", "text/plain")),
         body({"content": "two content types, json first"})),
        ("duplicate keys", "project={p}", h(), b'{"content":"first","content":"last of two keys"}'),
        ("bom", "project={p}", h(), b'\xef\xbb\xbf' + body({"content": "after a BOM"})),
        ("utf-16", "project={p}", h(), json.dumps({"content": "utf-16 body"}).encode("utf-16")),
        ("lone surrogate", "project={p}", h(), b'{"content":"a \\ud800 lone surrogate"}'),
        ("bad utf-8", "project={p}", h(), b'{"content":"\xff\xfe bad bytes"}'),
        ("nul", "project={p}", h(), body({"content": "a\u0000b nul"})),
        ("not json", "project={p}", h(), b"{not json"),
        ("empty body", "project={p}", h(), b""),
        ("array", "project={p}", h(), body(["content"])),
        ("null content", "project={p}", h(), body({"content": None})),
        ("number content", "project={p}", h(), body({"content": 5})),
        ("object content", "project={p}", h(), body({"content": {"a": 1}})),
        ("unknown key", "project={p}", h(), body({"content": "y", "expectedhash": "abc"})),
        ("bad layer", "project={p}", h(), body({"content": "x", "layer": "weekly"})),
        ("daily in seed", "project={p}", h(), body({"content": "x", "layer": "daily"})),
        ("deep", "project={p}", h(), b'{"content":' + b"[" * 5000 + b"]" * 5000 + b"}"),
        ("path up", "project={p}", h(), body({"content": "out", "path": "../../escaped.md"})),
        ("path absolute", "project={p}", h(), body({"content": "out", "path": "/tmp/escaped-r6.md"})),
        ("path memdesk state", "project={p}", h(), body({"content": "state", "path": ".fusion/memdesk/x.md"})),
        ("agent up", "project={p}", h(), body({"content": "out", "agent": "../../x"})),
        ("agent", "project={p}", h(), body({"content": "an agent's own line", "agent": "bot"})),
        ("secret", "project={p}", h(), body({"content": "key AKIAIOSFODNN7EXAMPLE and "
                                                       "ghp_abcdefghijklmnopqrstuvwxyz0123456789"})),
        ("reader", "project={p}", h(reader), body({"content": "a reader appends"})),
        ("reader, empty", "project={p}", h(reader), body({"content": "  "})),
        ("bot elsewhere", "project={p}", h(bot), body({"content": "bot writes the shared memory"})),
        ("bot own", "project={p}", h(bot), body({"content": "bot's own", "agent": "bot"})),
        ("no token", "project={p}", [("Content-Type", j)], body({"content": "anonymous"})),
        ("wrong token", "project={p}", h("not-a-token"), body({"content": "wrong token"})),
        ("wrong host", "project={p}", h(full, j, ("Host", "evil.example")), body({"content": "rebinding"})),
        ("oversize", "project={p}", h(), body({"content": "x" * (1_200_000)})),
        ("last", "project={p}", h(), body({"content": "the last entry"})),
    ]


@pytest.fixture
def two(tmp_path: Path, serve, tokens: TokenStore, monkeypatch: pytest.MonkeyPatch):
    made = []
    for name in ("fast", "route"):
        root = tmp_path / name / "proj"
        (root / ".fusion").mkdir(parents=True)
        (root / MEMORY).write_text("# Project Memory\n\n- the first entry\n", encoding="utf-8")
        made.append(root)
    fast_root, route_root = made
    parse = fast_append._parse
    switched_off: set[int] = set()

    def maybe(api, scope, body):
        return None if scope["server"][1] in switched_off else parse(api, scope, body)

    monkeypatch.setattr(fast_append, "_parse", maybe)
    fast = serve(fast_root, mcp=False)
    route = serve(route_root, mcp=False)
    switched_off.add(route.port)
    return fast, route, fast_root, route_root


def test_the_fast_path_answers_every_request_as_the_route_does(two, tokens: TokenStore):
    fast, route, fast_root, route_root = two
    made = {"full": tokens.create("agent-1"), "reader": tokens.create("reader", scope="read"),
            "bot": tokens.create("bot", scope="append", paths=[".fusion/agent-memory/bot/**"])}
    for srv in (fast, route):
        srv.served.get("proj")  # the model built, as after a first request
    differ = []
    with httpx.Client(timeout=60) as c:
        for label, query, headers, data in _requests(made):
            answers = []
            for srv, root in ((fast, fast_root), (route, route_root)):
                url = f"{srv.url}/api/memory/append?{query.format(p='proj', root=root)}"
                sent = [(k, v.replace("{port}", str(srv.port))) for k, v in headers]
                r = c.post(url, content=data, headers=sent)
                body = re.sub(rb"\d{8}-[0-9a-f]{8}", b"INBOX-ID", r.content)  # a held entry's id is its own
                answers.append((r.status_code, r.headers.get("content-type"), body.replace(str(srv.port).encode(), b"PORT")))
            if answers[0] != answers[1]:
                differ.append(f"{label}: fast {answers[0]!r} / route {answers[1]!r}")
    assert differ == [], "\n".join(differ)
    files = sorted(p.relative_to(fast_root).as_posix() for p in fast_root.rglob("*.md"))
    assert files == sorted(p.relative_to(route_root).as_posix() for p in route_root.rglob("*.md"))
    for rel in files:
        assert (fast_root / rel).read_bytes() == (route_root / rel).read_bytes(), rel
    text = (fast_root / MEMORY).read_text(encoding="utf-8")
    assert "the last entry" in text and "Leases renew" in text
    assert not (fast_root.parent / "escaped.md").exists() and not Path("/tmp/escaped-r6.md").exists()


def test_a_body_that_is_not_utf8_is_named_as_such(two, tokens: TokenStore):
    """FastAPI's own 400 for a body it cannot decode said "no such route or method here" (the 404/405 text)."""
    fast, _route, fast_root, _ = two
    before = (fast_root / MEMORY).read_bytes()
    c = fast.client(tokens.create("agent-u"))
    r = c.post("/api/memory/append", content=b'{"content":"\xff\xfe bad"}', headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["code"] == "INVALID_ARGUMENT"
    assert "UTF-8" in r.json()["error"] and "no such route" not in r.json()["error"], r.text
    assert c.post("/api/memory/nothing-here", json={}).json()["error"].endswith("/docs lists the routes")
    assert (fast_root / MEMORY).read_bytes() == before
