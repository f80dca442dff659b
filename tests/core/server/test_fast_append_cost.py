"""What the fast append (core/server/fast_append.py) was made cheaper by, and what it must still do.

* the append runs on the appends' own threads (``memdesk-append``), never on the event loop, and its answer
  and its bytes on disk are the route's (the differential, test_fast_append_differential.py, holds the rest);
* the per-request config stamp (two ``os.stat`` on strings, no ``Path`` built) still sees what it saw before:
  a changed ``.fusion/config.json`` (a switch to ``readonly`` is obeyed at the next append) and a
  ``.fusion/memory`` folder made (the layered layout), and nothing else (an append leaves the model cached).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from core.server import service
from core.server.tokens import TokenStore

MEMORY = ".fusion/memory.md"


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "alpha"
    (root / ".fusion").mkdir(parents=True)
    (root / MEMORY).write_text("# Project Memory\n\n- the first entry\n", encoding="utf-8")
    return root


def test_the_append_runs_on_the_append_threads_not_the_event_loop(tmp_path: Path, serve, tokens: TokenStore,
                                                                  monkeypatch) -> None:
    root = _project(tmp_path)
    srv = serve(root, mcp=False)
    srv.served.get(None)  # the model is built: the next append takes the fast path
    ran_on: list[str] = []
    real = service.append

    def spied(*args, **kwargs):
        ran_on.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(service, "append", spied)
    c = srv.client(tokens.create("agent-1"))
    for i in range(3):
        r = c.post("/api/memory/append", json={"content": f"Leases renew at two thirds of their term ({i})"})
        assert r.status_code == 200 and r.json()["status"] == "written", r.text
    assert len(ran_on) == 3 and all(name.startswith("memdesk-append") for name in ran_on), ran_on
    text = (root / MEMORY).read_text(encoding="utf-8")
    assert all(f"Leases renew at two thirds of their term ({i})" in text for i in range(3))


def test_the_cached_model_follows_config_and_layout_but_not_appends(tmp_path: Path, serve,
                                                                     tokens: TokenStore) -> None:
    root = _project(tmp_path)
    srv = serve(root, mcp=False)
    c = srv.client(tokens.create("agent-1"))
    first = srv.served.get(None)
    assert c.post("/api/memory/append", json={"content": "one entry"}).status_code == 200
    assert srv.served.cached(None) is first  # the append changed no settings: the model (and its indexes) stay

    (root / ".fusion" / "config.json").write_text(json.dumps({"memoryBackend": "readonly"}), encoding="utf-8")
    assert srv.served.cached(None) is None  # a changed settings file: the next request builds the model again
    before = (root / MEMORY).read_bytes()
    r = c.post("/api/memory/append", json={"content": "refused while read-only"})
    assert r.status_code == 409 and r.json()["code"] == "READ_ONLY", r.text
    assert (root / MEMORY).read_bytes() == before

    (root / ".fusion" / "config.json").write_text("{}", encoding="utf-8")
    again = srv.served.get(None)
    assert srv.served.cached(None) is again
    (root / ".fusion" / "memory").mkdir()  # the layered layout appears
    assert srv.served.cached(None) is None
    assert service._config_stamp(root) != service._config_stamp(tmp_path / "elsewhere")
