"""Listing a big project (issue 23's leftovers): 20,000 agent-memory documents in the layered fixture.

``GET /api/memory/files`` against a real ``memdesk serve`` (own process), with a full token and with a
path-limited read token (it sees one agent folder in ten), and MCP ``resources/list`` over the same server's
streamable HTTP (every page, the cursor followed as the SDK's client does): each request's wall time and the
server's CPU (all its threads, from ``/proc``), beside the floor from the same run: one ``os.scandir`` and
``lstat`` of the same folders in this process (what any listing of these files must at least do).
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "data" / "fusion-layered"  # the layered fixture (its real memory, two agents)
AGENTS = 1000
PER_AGENT = 20  # MEMORY.md, DREAMS.md and 18 daily notes
RUNS = 5


def make_big_project(base: Path) -> Path:
    """The layered fixture with ``AGENTS`` agents of ``PER_AGENT`` documents each (real text, short)."""
    from bench.core_bench import REAL

    root = base / "big"
    shutil.copytree(FIXTURE, root)
    lines = REAL.read_text(encoding="utf-8").splitlines(keepends=True)
    for a in range(AGENTS):
        folder = root / ".fusion" / "agent-memory" / f"agent-{a:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        piece = "".join(lines[(a * 7) % len(lines):(a * 7) % len(lines) + 5])
        (folder / "MEMORY.md").write_text("# Agent Memory\n\n" + piece, encoding="utf-8")
        (folder / "DREAMS.md").write_text("# Dreams\n\n" + piece, encoding="utf-8")
        for day in range(PER_AGENT - 2):
            (folder / f"2026-07-{day + 1:02d}.md").write_text(f"# Daily Memory 2026-07-{day + 1:02d}\n\n" + piece,
                                                                encoding="utf-8")
    return root


def floor_walk(root: Path) -> int:
    """One scandir and lstat of every agent folder and file: the least a listing of them does."""
    n = 0
    base = root / ".fusion" / "agent-memory"
    for agent in os.scandir(base):
        for entry in os.scandir(agent.path):
            os.lstat(entry.path)
            n += 1
    return n


def timed(fn, pid: int) -> tuple[float, float, object]:
    from bench.proc_cost import sample

    before = sample(pid)
    t0 = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - t0
    after = sample(pid)
    cpu = (after[0] - before[0]) if before and after else float("nan")
    return wall * 1000, cpu * 1000, out


def mcp_pages(url: str, token: str) -> tuple[int, int, int]:
    """(resources, pages, bytes of the answers) of ``resources/list`` followed to its end with the SDK."""
    import anyio
    import httpx2
    from mcp.client import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp_types import PaginatedRequestParams

    async def main() -> tuple[int, int, int]:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http, \
                streamable_http_client(url + "/mcp", http_client=http) as (read, write, *_), \
                ClientSession(read, write) as s:
            await s.initialize()
            n = pages = size = 0
            cursor = None
            while True:
                page = await s.list_resources(params=PaginatedRequestParams(cursor=cursor))
                n += len(page.resources)
                size += len(page.model_dump_json(by_alias=True, exclude_none=True))
                pages += 1
                cursor = page.next_cursor
                if cursor is None:
                    return n, pages, size

    return anyio.run(main)


def main() -> None:
    """Print the listing figures."""
    sys.path.insert(0, str(REPO))
    import httpx

    from bench.servers_bench import start_server

    base = Path(tempfile.mkdtemp(prefix="memdesk-bench-listing-"))
    old_config = os.environ.get("MEMDESK_CONFIG_DIR")
    os.environ["MEMDESK_CONFIG_DIR"] = str(base / "user-config")
    proc = None
    try:
        from core.server.tokens import TokenStore

        store = TokenStore()
        full = store.create("bench")
        narrow = store.create("narrow", scope="read", paths=[".fusion/agent-memory/agent-00*/**"])
        root = make_big_project(base)
        env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        proc, port = start_server(root, env)
        url = f"http://127.0.0.1:{port}"
        floors = []
        for _ in range(RUNS):
            t0 = time.perf_counter()
            n = floor_walk(root)
            floors.append((time.perf_counter() - t0) * 1000)
        floor = statistics.median(floors)
        print(f"floor: scandir + lstat of {n:,} agent files in process: median {floor:.1f} ms")
        for name, token in (("full token", full), ("read token limited to agent-00*/**", narrow)):
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120) as c:
                c.get("/api/memory/files")  # warm
                walls, cpus = [], []
                for _ in range(RUNS):
                    wall, cpu, r = timed(lambda c=c: c.get("/api/memory/files"), proc.pid)
                    walls.append(wall)
                    cpus.append(cpu)
                count = len(r.json()["files"])
            print(f"GET /api/memory/files, {name}: {count:,} documents, {len(r.content) / 1e6:.2f} MB; "
                  f"wall median {statistics.median(walls):.0f} ms, server CPU median {statistics.median(cpus):.0f} ms "
                  f"(floor {floor:.1f} ms, {statistics.median(walls) / floor:.1f}×)")
        for name, token in (("full token", full), ("read token limited to agent-00*/**", narrow)):
            mcp_pages(url, token)  # warm
            wall, cpu, (count, pages, size) = timed(lambda token=token: mcp_pages(url, token), proc.pid)
            print(f"MCP resources/list followed to its end (SDK client, new session), {name}: {count:,} resources in "
                  f"{pages} pages, {size / 1e6:.2f} MB; wall {wall:.0f} ms, server CPU {cpu:.0f} ms")
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(10)
        if old_config is None:
            os.environ.pop("MEMDESK_CONFIG_DIR", None)
        else:
            os.environ["MEMDESK_CONFIG_DIR"] = old_config
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
