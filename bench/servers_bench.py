"""Server figures on a 1 MiB memory, each beside the in-process call it wraps, measured in the same run.

- ``GET /api/memory``: requests per second and p95, beside ``Project.read()``, on an unchanged memory and
  with another writer changing it before every read (nothing derived from the last read can be reused);
- ``POST /api/memory/append``: requests per second and p95, beside ``Project.append()``;
- MCP ``memory_append`` round trips over stdio (``memdesk mcp`` as a subprocess), beside ``Project.append()``,
  on the sample project's memory and on the 1 MiB one.
``memdesk serve`` runs in its own process (uvicorn on a loopback port) and the client keeps its
connection alive; default settings; every append is a different entry. Targets: read p95 ≤ 5 ms, append p95 ≤ 2× in-process, MCP p95 ≤ 20 ms.
Under each HTTP figure, the server process's CPU time and context switches per request (``/proc``; they hardly
move with the machine's load, where latencies do) beside the in-process call's CPU.
Under the POST figure, the bench client's own CPU per request and the same requests answered static by the same
uvicorn stack (:mod:`bench.post_floor`): what HTTP and the client cost with no memdesk code in between. Under the GET figures, the
bench's client's CPU per response and the floor of HTTP itself (:mod:`bench.http_floor`: the same body, static,
over the same uvicorn stack).
Then issue 23's figures (:mod:`bench.servers_round2`): memory_get windowed against whole, the cost of
read logging, and a valid client's p95 under 2,000 held connections.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
N_READS = 300
N_APPENDS = 200
N_CHANGED = 100


def p95(times: list[float]) -> float:
    """The 95th percentile of ``times`` (ms)."""
    ordered = sorted(times)
    return ordered[max(0, int(len(ordered) * 0.95) - 1)]


def interleaved(served: Callable[[int], object], local: Callable[[int], object], n: int,
                settle: Callable[[], object] | None = None, settle_served: Callable[[], object] | None = None
                ) -> tuple[list[float], float, list[float], float]:
    """Time ``served(i)`` and ``local(i)`` alternately, so the machine's load weighs on both alike.

    ``settle()``, untimed, after each ``local(i)``: the in-process call's own work left running in the
    background (its history job) ends before the next served call is timed (else it runs in the client's
    process while a request is timed). ``settle_served()``, untimed, after each ``served(i)``: the same for
    the server's work after its answer (its history job and syncs), which else runs while the floor is timed."""
    a: list[float] = []
    b: list[float] = []
    total_a = total_b = 0.0
    for i in range(n):
        for fn, out in ((served, a), (local, b)):
            t0 = time.perf_counter()
            fn(i)
            dt = time.perf_counter() - t0
            out.append(dt * 1000)
            if out is a:
                total_a += dt
                if settle_served is not None:
                    settle_served()
            else:
                total_b += dt
                if settle is not None:
                    settle()
    return a, total_a, b, total_b


def report(name: str, times: list[float], total: float, floor: list[float], floor_total: float,
           target: str) -> None:
    """One figure and its in-process floor on one line."""
    print(f"{name}: {len(times) / total:,.0f} req/s, p50 {statistics.median(times):.2f} ms, p95 {p95(times):.2f} ms"
          f"  |  in-process: {len(floor) / floor_total:,.0f}/s, p50 {statistics.median(floor):.2f} ms, "
          f"p95 {p95(floor):.2f} ms  |  target {target}")


def _entry(tag: str, i: int) -> str:
    return f"{tag} entry {i}: retries back off exponentially from 200 ms, capped at 30 s ({time.time_ns()})"


def make_project(base: Path, name: str, text: str) -> Path:
    """A seed-layout project holding ``text`` as its memory."""
    root = base / name
    (root / ".fusion").mkdir(parents=True)
    (root / ".fusion" / "memory.md").write_text(text, encoding="utf-8")
    return root


def start_server(root: Path, env: dict[str, str]) -> tuple[subprocess.Popen, int]:
    """``memdesk serve --project root --port 0`` in its own process (as deployed); its process and port."""
    proc = subprocess.Popen([sys.executable, "-m", "core.cli", "serve", "--project", str(root), "--port", "0"],
                            env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    line = ""
    while "serving" not in line:
        line = proc.stderr.readline()
        if not line:
            raise RuntimeError("memdesk serve did not start")
    return proc, int(line.rsplit(":", 1)[1].split(" ")[0])


def bench_http(base: Path, text: str, token: str, env: dict[str, str]) -> None:
    import httpx

    from bench.proc_cost import PhaseCost
    from core.project import Project

    served_root = make_project(base, "served", text)
    floor_root = make_project(base, "floor", text)
    proc, port = start_server(served_root, env)
    floor = Project(floor_root)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {token}"},
                          timeout=60) as c:
            for i in range(5):  # warm: connection, imports, first append's rotation
                c.get("/api/memory")
                c.post("/api/memory/append", json={"content": _entry("warm-http", i)})
                floor.read()
                floor.append(_entry("warm-floor", i), author="bench", source="bench")
            size = len(c.get("/api/memory").json()["content"].encode("utf-8"))
            print(f"memory size: {size / 1048576:.2f} MiB")
            cost = PhaseCost(proc.pid)
            client_cpu = [0.0]

            def get() -> None:
                c0 = time.process_time()
                c.get("/api/memory").raise_for_status()
                client_cpu[0] += time.process_time() - c0

            reads, reads_total, floor_reads, floor_reads_total = interleaved(
                lambda i: get(), cost.floor(lambda i: floor.read()), N_READS)
            report("GET /api/memory (unchanged)", reads, reads_total, floor_reads, floor_reads_total, "p95 ≤ 5 ms")
            print(cost.line(N_READS))

            def changed(root: Path, read: Callable[[], object]) -> Callable[[int], object]:
                def run(i: int) -> object:
                    # Untimed: another writer adds a line, so every read sees different text (the slow path).
                    with (root / ".fusion/memory.md").open("a", encoding="utf-8") as fh:
                        fh.write(f"\n- {_entry('other writer', i)}")
                    t0 = time.perf_counter()
                    read()
                    return time.perf_counter() - t0
                return run

            http_changed = changed(served_root, get)
            floor_changed = changed(floor_root, floor.read)
            cost = PhaseCost(proc.pid)
            a = [http_changed(i) * 1000 for i in range(N_CHANGED)]
            b = [cost.floor(floor_changed)(i) * 1000 for i in range(N_CHANGED)]
            report("GET /api/memory (changed before each read)", a, sum(a) / 1000, b, sum(b) / 1000, "p95 ≤ 5 ms")
            print(cost.line(N_CHANGED))
            print(f"  bench's client (httpx): {client_cpu[0] / (N_READS + N_CHANGED) * 1000:.2f} ms CPU per GET")
            lean_client_reads(port, token, served_root, changed)
            from bench.http_floor import measure as http_floor

            http_floor(c.get("/api/memory").content, base, env, p95)  # the same body, static: what HTTP costs

            post_cpu = [0.0]
            answers: list[bytes] = []

            def post(i: int) -> None:
                c0 = time.process_time()
                r = c.post("/api/memory/append", json={"content": _entry("http", i)})
                assert r.status_code == 200 and r.json()["status"] == "written", r.text
                post_cpu[0] += time.process_time() - c0
                answers[:] = [r.content]

            def local(i: int) -> None:
                assert floor.append(_entry("floor", i), author="bench", source="bench").status == "written"

            from bench.proc_cost import quiet
            from core.storage.history.worker import settled

            cost = PhaseCost(proc.pid)
            # The floor's history job (the server's runs in the server, counted in its CPU) is waited for
            # untimed and its CPU counted as the floor's; the server's is waited for (its threads all asleep)
            # untimed before the floor is timed: both sides then do, count and finish the same work.
            appends, appends_total, floor_appends, floor_appends_total = interleaved(
                post, cost.floor(local), N_APPENDS, settle=cost.floor_extra(settled),
                settle_served=lambda: quiet(proc.pid))
            report("POST /api/memory/append", appends, appends_total, floor_appends, floor_appends_total,
                   "p95 ≤ 2× in-process")
            print(cost.line(N_APPENDS))
            print(f"  bench's client (httpx): {post_cpu[0] / N_APPENDS * 1000:.2f} ms CPU per POST")
            print(f"append p95 ratio (HTTP / in-process): {p95(appends) / p95(floor_appends):.2f}×")
            from bench.post_floor import measure as post_floor

            post_floor(answers[0], base, env, token, _entry, p95)  # what HTTP alone costs the same requests
    finally:
        proc.terminate()
        proc.wait(30)
        proc.stderr.close()


def lean_client_reads(port: int, token: str, root: Path,
                      changed: Callable[[Path, Callable[[], object]], Callable[[int], object]]) -> None:
    """The same two GET figures read by the standard library's ``http.client`` (one kept-alive connection, the
    body read in one call) instead of httpx, whose pure-Python receive of a 0.9 MiB body costs ~2 ms of CPU by
    itself: how much of the figure is the bench's own client. Printed beside the figures, which stay httpx's."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": f"Bearer {token}"}

    def get() -> None:
        conn.request("GET", "/api/memory", headers=headers)
        r = conn.getresponse()
        r.read()
        assert r.status == 200, r.status

    try:
        for _ in range(5):
            get()
        unchanged = []
        for _ in range(N_READS):
            t0 = time.perf_counter()
            get()
            unchanged.append((time.perf_counter() - t0) * 1000)
        grown = [changed(root, get)(i) * 1000 for i in range(N_CHANGED)]
    finally:
        conn.close()
    print(f"  the same reads by http.client: unchanged p50 {statistics.median(unchanged):.2f} ms, p95 "
          f"{p95(unchanged):.2f} ms; changed before each read p50 {statistics.median(grown):.2f} ms, p95 "
          f"{p95(grown):.2f} ms")


def bench_mcp(base: Path, text: str, env: dict[str, str], what: str) -> None:
    import anyio
    from mcp import types
    from mcp.client import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from core.project import Project

    served_root = make_project(base, f"mcp-{what}", text)
    floor = Project(make_project(base, f"mcp-floor-{what}", text))
    times: list[float] = []

    async def main() -> float:
        params = StdioServerParameters(command=sys.executable, args=["-m", "core.cli", "mcp", "--project",
                                                                     str(served_root)], env=env)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, client_info=types.Implementation(name="bench", version="1")) as s:
                await s.initialize()
                for i in range(5):
                    await s.call_tool("memory_append", {"content": _entry("warm-mcp", i)})
                    floor.append(_entry("warm-floor", i), author="bench", source="bench")
                total = 0.0
                for i in range(N_APPENDS):
                    t0 = time.perf_counter()
                    r = await s.call_tool("memory_append", {"content": _entry("mcp", i)})
                    dt = time.perf_counter() - t0
                    times.append(dt * 1000)
                    total += dt
                    assert not r.is_error and r.structured_content["status"] == "written", r
                    # The in-process call right after, so the machine's load weighs on both alike.
                    t0 = time.perf_counter()
                    floor.append(_entry("floor", i), author="bench", source="bench")
                    floor_times.append((time.perf_counter() - t0) * 1000)
                return total

    floor_times: list[float] = []
    total = anyio.run(main)
    floor_total = sum(floor_times) / 1000
    report(f"MCP memory_append (stdio, {what})", times, total, floor_times, floor_total, "p95 ≤ 20 ms")


def main() -> None:
    """Print the server figures."""
    sys.path.insert(0, str(REPO))
    from bench.core_bench import REAL
    from core.storage import fileio

    base = Path(tempfile.mkdtemp(prefix="memdesk-bench-servers-"))
    old_config = os.environ.get("MEMDESK_CONFIG_DIR")
    os.environ["MEMDESK_CONFIG_DIR"] = str(base / "user-config")
    try:
        from core.server.tokens import TokenStore

        token = TokenStore().create("bench")
        env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        # Room for the appends of the run: the memory starts just under 1 MiB and stays under the limit.
        # The real agent-written memory repeated (its entries are undated, so the line budget never
        # rotates them out): just under 1 MiB, with room for the run's appends.
        real = REAL.read_text(encoding="utf-8")
        text = real * ((fileio.MAX_FILE_SIZE - 64 * 1024) // len(real.encode("utf-8")))
        bench_http(base, text, token, env)
        bench_mcp(base, (REPO / "resources/sample/.fusion/memory.md").read_text(encoding="utf-8"), env,
                  "sample memory")
        bench_mcp(base, text, env, "1 MiB memory")
        from bench.servers_round2 import (
            run as round2,  # issue 23: windowed get, read logging, held connections
        )

        round2(base, text, token, env)
    finally:
        if old_config is None:
            os.environ.pop("MEMDESK_CONFIG_DIR", None)
        else:
            os.environ["MEMDESK_CONFIG_DIR"] = old_config
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
