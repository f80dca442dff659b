"""A search query that cannot be one is a 400 that says so (issue 19, item 3), over a real HTTP server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.mark.parametrize(("query", "said"), [("lease\u0000clock", "NUL character (at character 5)"),
                                             ("lease\u0007", "control character U+0007"),
                                             ("x" * 5000, "5,000 characters long")])
@pytest.mark.parametrize("backend", ["file", "sqlite"])
def test_a_bad_search_query_is_a_400_naming_the_problem(serve, token, sample_project: Path, query: str, said: str,
                                                        backend: str):
    if backend != "file":
        cfg = sample_project / ".fusion" / "config.json"
        data = json.loads(cfg.read_text(encoding="utf-8")) if cfg.exists() else {}
        cfg.write_text(json.dumps({**data, "memoryBackend": backend}), encoding="utf-8")
    c = serve(sample_project).client(token)
    r = c.post("/api/memory/search", json={"query": query, "derived": True})
    assert r.status_code == 400, r.text
    body = r.json()
    assert said in body["error"] and "search query" in body["error"] and "write" not in body["error"].lower()
    assert "\n" not in body["error"]
    ok = c.post("/api/memory/search", json={"query": "lease", "derived": True})
    assert ok.status_code == 200  # the server keeps working
