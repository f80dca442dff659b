"""Issue 23's server figures, each beside its floor from the same run (called by ``python -m bench servers``):

- MCP ``memory_get`` windowed (120 lines, the default) against the whole document (its resource read) on the
  1 MiB memory, over stdio: the window's p95 beside the whole's;
- the cost of putting a read on record, per request: ``note_read`` timed alone, and ``GET /api/memory`` p95
  with and without it (interleaved), beside 5 % of the read's p95 (the ceiling);
- 2,000 idle or half-sent connections without a token, from 40 loopback addresses, against ``memdesk serve``:
  a valid client's p95 during them beside its quiet p95 × 3 (the ceiling).
"""

from __future__ import annotations

import os
import socket
import statistics
import sys
import time
from pathlib import Path

from bench.servers_bench import make_project, p95, start_server

N_WINDOW = 100
N_LOGGED = 300
N_VALID = 200


def bench_window(base: Path, text: str, env: dict[str, str]) -> None:
    """memory_get's default window against the whole document, over stdio."""
    import anyio
    from mcp.client import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    root = make_project(base, "window", text)

    async def main() -> tuple[list[float], list[float], int, int]:
        params = StdioServerParameters(command=sys.executable, args=["-m", "core.cli", "mcp", "--project", str(root)],
                                       env=env)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                uri = "memdesk://window/.fusion/memory.md"
                for _ in range(3):
                    await s.call_tool("memory_get", {})
                    await s.read_resource(uri)
                win: list[float] = []
                whole: list[float] = []
                got = size = 0
                for _ in range(N_WINDOW):
                    t0 = time.perf_counter()
                    r = await s.call_tool("memory_get", {})
                    win.append((time.perf_counter() - t0) * 1000)
                    t0 = time.perf_counter()
                    w = await s.read_resource(uri)
                    whole.append((time.perf_counter() - t0) * 1000)
                    got, size = len(r.structured_content["content"]), len(w.contents[0].text)
                return win, whole, got, size

    win, whole, got, size = anyio.run(main)
    print(f"MCP memory_get, default window (120 lines, {got / 1024:.1f} KiB): p50 {statistics.median(win):.2f} ms, "
          f"p95 {p95(win):.2f} ms  |  whole document ({size / 1048576:.2f} MiB, resource read): "
          f"p50 {statistics.median(whole):.2f} ms, p95 {p95(whole):.2f} ms  |  target: window p95 < whole p95 "
          f"({p95(whole) / max(p95(win), 1e-9):.1f}× faster)")


def bench_read_logging(base: Path, text: str, token: str) -> None:
    """What recording a read adds to a request: alone, and as GET /api/memory p95 with and without it."""
    import httpx

    from core.server import service
    from core.server.http import create_app
    from core.server.runner import bind_socket, make_server
    from core.server.service import ServedProjects
    from core.server.tokens import TokenStore
    from core.storage import readlog

    root = make_project(base, "logged", text)
    served = ServedProjects([root])
    sock = bind_socket("127.0.0.1", 0)
    bound = make_server(create_app(served, TokenStore(), port=sock.getsockname()[1], mcp=False), sock)
    bound.start_thread()
    real = service.note_read

    def off(*_a: object, **_k: object) -> None:
        return None

    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{bound.port}", headers={"Authorization": f"Bearer {token}"},
                          timeout=60) as c:
            for _ in range(10):
                c.get("/api/memory").raise_for_status()
            on_t: list[float] = []
            off_t: list[float] = []
            for _ in range(N_LOGGED):
                for fn, out in ((real, on_t), (off, off_t)):
                    service.note_read = fn  # type: ignore[assignment]
                    t0 = time.perf_counter()
                    c.get("/api/memory").raise_for_status()
                    out.append((time.perf_counter() - t0) * 1000)
    finally:
        service.note_read = real  # type: ignore[assignment]
        bound.stop()
    readlog.flush()
    n = 20_000
    t0 = time.perf_counter()
    for _ in range(n):
        real("logged", root, ".fusion/memory.md", "0" * 64, len(text), 1, 100, 100, client="bench", token="bench",
             via="http")
    each = (time.perf_counter() - t0) / n * 1000
    readlog.flush(60)
    ceiling = p95(off_t) * 0.05
    print(f"read logging: {each * 1000:.1f} µs per read recorded (queued; one thread inserts in batches)  |  "
          f"GET /api/memory p95 {p95(on_t):.2f} ms logged vs {p95(off_t):.2f} ms not (p50 "
          f"{statistics.median(on_t):.2f} vs {statistics.median(off_t):.2f})  |  ceiling 5 % of the read's p95 = "
          f"{ceiling * 1000:.0f} µs: {'within' if each <= ceiling else 'OVER'}")


def bench_slow_connections(base: Path, text: str, token: str, env: dict[str, str]) -> None:
    """A valid client's p95 while 2,000 idle or half-sent connections without a token are held open."""
    import httpx

    from core.server.limits import raise_open_files_limit

    raise_open_files_limit()
    root = make_project(base, "held", text)
    proc, port = start_server(root, env)
    attack: list[socket.socket] = []
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {token}"},
                          timeout=60) as c:
            for _ in range(10):
                c.get("/api/memory").raise_for_status()
            quiet = []
            for _ in range(N_VALID):
                t0 = time.perf_counter()
                c.get("/api/memory").raise_for_status()
                quiet.append((time.perf_counter() - t0) * 1000)
            for a in range(40):
                for i in range(50):
                    s = socket.socket()
                    s.bind((f"127.0.0.{a + 2}", 0))
                    s.setblocking(False)
                    s.connect_ex(("127.0.0.1", port))
                    attack.append(s)
                    if i % 2:
                        time.sleep(0)
            time.sleep(0.5)
            for n, s in enumerate(attack):
                if n % 2:
                    try:
                        s.send(b"GET /api/memory HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                    except OSError:
                        pass
            held = []
            for _ in range(N_VALID):
                t0 = time.perf_counter()
                c.get("/api/memory").raise_for_status()
                held.append((time.perf_counter() - t0) * 1000)
        print(f"under {len(attack):,} idle/half-sent connections (40 addresses, no token): GET /api/memory p95 "
              f"{p95(held):.2f} ms (p50 {statistics.median(held):.2f})  |  quiet p95 {p95(quiet):.2f} ms × 3 = "
              f"{p95(quiet) * 3:.2f} ms ceiling: {'within' if p95(held) <= p95(quiet) * 3 else 'OVER'}")
    finally:
        for s in attack:
            s.close()
        proc.terminate()
        proc.wait(30)
        if proc.stderr:
            proc.stderr.close()


def run(base: Path, text: str, token: str, env: dict[str, str]) -> None:
    """All three, on the 1 MiB memory."""
    os.environ.setdefault("MEMDESK_CONFIG_DIR", str(base / "user-config"))
    bench_window(base, text, env)
    bench_read_logging(base, text, token)
    bench_slow_connections(base, text, token, env)
