"""``POST /api/memory/append`` answered without FastAPI's generic layers (core/server/fast_append.py) says what
the FastAPI route says, byte for byte, for every outcome and refusal.

A real ``memdesk serve`` app over two identical projects: each request goes to ``alpha`` the ordinary way (the
fast path answers it) and to ``beta`` with one more query name, which the fast path leaves to the FastAPI route.
The two answers must be the same status and the same JSON (the project's name aside), and the files the same.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.server import fast_append
from core.server.tokens import TokenStore

MEMORY = ".fusion/memory.md"


@pytest.fixture
def pair(tmp_path: Path, serve, tokens: TokenStore, monkeypatch: pytest.MonkeyPatch):
    alpha = tmp_path / "alpha"
    (alpha / ".fusion").mkdir(parents=True)
    (alpha / MEMORY).write_text("# Project Memory\n\n- the first entry\n", encoding="utf-8")
    beta = tmp_path / "beta"
    shutil.copytree(alpha, beta)
    answered: list[bool] = []
    parse = fast_append._parse

    def spied(*args):
        found = parse(*args)
        answered.append(found is not None)
        return found

    monkeypatch.setattr(fast_append, "_parse", spied)
    srv = serve(alpha, beta, mcp=False)
    for key in ("alpha", "beta"):  # the first request of a project builds its model (in the pool, by the route)
        srv.served.get(key)
    return srv, alpha, beta, answered


def _both(client, answered: list[bool], body: str | bytes, *, content_type: str = "application/json"):
    """The same request to alpha (fast path) and to beta (the FastAPI route); both answers."""
    headers = {"Content-Type": content_type}
    data = body if isinstance(body, bytes) else body.encode()
    answered.clear()
    fast = client.post("/api/memory/append?project=alpha", content=data, headers=headers)
    took = list(answered)
    route = client.post("/api/memory/append?project=beta&via=route", content=data, headers=headers)
    return fast, route, took


def _same(fast, route) -> dict:
    assert fast.status_code == route.status_code, (fast.text, route.text)
    assert fast.headers["content-type"] == route.headers["content-type"]
    assert fast.content.replace(b"alpha", b"beta") == route.content, (fast.text, route.text)
    return fast.json()


def test_every_outcome_and_refusal_is_the_routes(pair, tokens: TokenStore):
    srv, alpha, beta, answered = pair
    c = srv.client(tokens.create("agent-1"))
    entry = json.dumps({"content": "Leases renew at two thirds of their term"})

    fast, route, took = _both(c, answered, entry)
    assert took == [True]  # the fast path answered alpha's
    assert _same(fast, route)["status"] == "written"
    fast, route, took = _both(c, answered, entry)
    assert took == [True] and _same(fast, route)["status"] == "skipped_duplicate"
    fast, route, took = _both(c, answered, json.dumps({"content": "   "}))
    assert took == [True] and _same(fast, route)["status"] == "skipped_empty" and fast.status_code == 400

    # Raised in the pool by the append (a seed project has no daily layer): the app's own handler answers.
    fast, route, took = _both(c, answered, json.dumps({"content": "x", "layer": "daily"}))
    assert took == [True] and fast.status_code == 400
    assert _same(fast, route)["details"]["code"] == "INVALID_CONFIG"

    # Left to the route before anything is done: an unknown key, not JSON, not JSON's type, not an object.
    for body, kind in ((json.dumps({"content": "y", "expectedhash": "abc"}), "application/json"),
                       ("{not json", "application/json"), (json.dumps({"content": "z"}), "text/plain"),
                       (json.dumps(["content"]), "application/json")):
        fast, route, took = _both(c, answered, body, content_type=kind)
        assert took == [False], body
        _same(fast, route)
        assert fast.status_code in (400, 422) or fast.json()["status"] in ("written", "skipped_duplicate"), fast.text

    # An unknown project: 404 from the route, whatever the path.
    missing = c.post("/api/memory/append?project=gamma", json={"content": "w"})
    assert missing.status_code == 404 and missing.json()["code"] == "PROJECT_NOT_SERVED"

    assert (alpha / MEMORY).read_text(encoding="utf-8") == (beta / MEMORY).read_text(encoding="utf-8")
    assert "Leases renew at two thirds of their term" in (alpha / MEMORY).read_text(encoding="utf-8")


def test_a_token_scoped_elsewhere_is_refused_and_nothing_is_written(pair, tokens: TokenStore):
    srv, alpha, beta, answered = pair
    before = (alpha / MEMORY).read_bytes()
    bot = srv.client(tokens.create("bot", scope="append", paths=[".fusion/agent-memory/bot/**"]))
    fast, route, took = _both(bot, answered, json.dumps({"content": "an agent writes the shared memory"}))
    assert took == [True]
    assert _same(fast, route)["code"] == "SCOPE" and fast.status_code == 403
    reader = srv.client(tokens.create("reader", scope="read"))
    fast, route, took = _both(reader, answered, json.dumps({"content": "a reader appends"}))
    assert took == [True] and fast.status_code == 403
    _same(fast, route)
    assert (alpha / MEMORY).read_bytes() == before == (beta / MEMORY).read_bytes()


def test_a_token_for_another_project_is_left_to_the_route(pair, tokens: TokenStore):
    srv, alpha, _beta, answered = pair
    before = (alpha / MEMORY).read_bytes()
    other = srv.client(tokens.create("other", scope="write", projects=["beta"]))
    answered.clear()
    r = other.post("/api/memory/append?project=alpha", json={"content": "not my project"})
    assert answered == [False] and r.status_code == 403 and r.json()["code"] == "SCOPE"
    assert (alpha / MEMORY).read_bytes() == before
