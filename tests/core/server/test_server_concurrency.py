"""Eight clients append at once, through HTTP, MCP over HTTP and ``memdesk mcp`` subprocesses over stdio: every one
of the 400 entries lands exactly once and nothing that was there before is lost."""

from __future__ import annotations

import re
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.core.server.test_server_mcp import run_http, run_stdio

PER_CLIENT = 50


def _entry(client: str, i: int) -> str:
    return f"[{client}-n{i:03d}] observed while appending concurrently: the lease clock comes from now()"


def _mcp_appends(client: str):
    async def body(s) -> list[str]:
        statuses = []
        for i in range(PER_CLIENT):
            r = await s.call_tool("memory_append", {"content": _entry(client, i)})
            statuses.append("error" if r.is_error else r.structured_content["status"])
        return statuses

    return body


@pytest.mark.parametrize("layout", ["seed", "layered"])
def test_400_appends_from_8_clients_land_exactly_once(serve, tokens, user_config_dir, sample_project,
                                                      layered_project, layout):
    root = sample_project if layout == "seed" else layered_project
    target = ".fusion/memory.md" if layout == "seed" else f".fusion/memory/{datetime.now(UTC).date()}.md"
    before = (root / target).read_text(encoding="utf-8") if (root / target).exists() else ""
    token = tokens.create("swarm")
    srv = serve(root)
    results: dict[str, list[str]] = {}
    errors: list[BaseException] = []

    def http_client(name: str) -> None:
        c = srv.client(token)
        results[name] = [c.post("/api/memory/append", json={"content": _entry(name, i)}).json()["status"]
                         for i in range(PER_CLIENT)]

    def stdio_client(name: str) -> None:
        results[name] = run_stdio(root, user_config_dir, _mcp_appends(name), client=name)

    def mcp_http_client(name: str) -> None:
        results[name] = run_http(srv.url, token, _mcp_appends(name), client=name)

    def guarded(fn, name: str) -> None:
        try:
            fn(name)
        except BaseException as exc:  # reported below with the client's name
            errors.append(exc)

    clients = ([(http_client, f"http{i}") for i in range(3)] + [(stdio_client, f"stdio{i}") for i in range(3)]
               + [(mcp_http_client, f"mcphttp{i}") for i in range(2)])
    threads = [threading.Thread(target=guarded, args=(fn, name)) for fn, name in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    assert not errors, errors
    assert sorted(results) == sorted(name for _fn, name in clients)
    assert all(statuses == ["written"] * PER_CLIENT for statuses in results.values()), results

    after = (root / target).read_text(encoding="utf-8")
    if before:
        assert after.startswith(before)
    for _fn, name in clients:
        for i in range(PER_CLIENT):
            assert after.count(_entry(name, i)) == 1, (name, i)
    assert len(re.findall(r"^\[[a-z]+\d-n\d{3}\] ", after, flags=re.M)) == 8 * PER_CLIENT


def test_the_operators_save_and_the_agents_appends_never_lose_each_other(serve, token, sample_project: Path):
    """An operator saving with the hash they started from cannot silently drop an agent's append."""
    c = serve(sample_project).client(token)
    start = c.get("/api/memory").json()
    assert c.post("/api/memory/append", json={"content": "an agent's entry meanwhile"}).status_code == 200
    r = c.put("/api/memory", json={"content": start["content"] + "\n\nthe operator's edit\n",
                                   "expectedHash": start["hash"]})
    assert r.status_code == 409
    text = (sample_project / ".fusion/memory.md").read_text(encoding="utf-8")
    assert "an agent's entry meanwhile" in text and "the operator's edit" not in text
