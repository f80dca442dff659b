"""The floor under ``GET /api/memory``: the same response body, static, over the same server stack.

``python -m bench.http_floor BODY_FILE`` serves the bytes of ``BODY_FILE`` as ``application/json`` to every
request through :func:`core.server.runner.make_server` (the uvicorn config, httptools protocol and limits
``memdesk serve`` runs), with no memdesk code between the request and the body: what a 0.88 MiB response costs on
loopback by itself, the bench's httpx client receiving it included. :func:`measure` times it from the bench's
process and prints one line, to be read beside the GET figures (their targets stay absolute).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: Requests timed against the static body.
N = 300


def _app(body: bytes) -> Any:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


def serve(body_file: str) -> None:
    """Serve ``body_file``'s bytes on a free loopback port; print the port."""
    from core.server.runner import bind_socket, make_server

    sock = bind_socket("127.0.0.1", 0)
    print(sock.getsockname()[1], flush=True)
    make_server(_app(Path(body_file).read_bytes()), sock).run()


@contextmanager
def static_server(body: bytes, body_file: Path, env: dict[str, str]) -> Iterator[tuple[int, int]]:
    """A :func:`serve` process answering ``body`` (written to ``body_file``), while the block runs: its pid, port."""
    body_file.write_bytes(body)
    proc = subprocess.Popen([sys.executable, "-m", "bench.http_floor", str(body_file)], env=env,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield proc.pid, int(proc.stdout.readline())
    finally:
        proc.terminate()
        proc.wait(30)


def timed(n: int, call: Callable[[int], object]) -> tuple[list[float], float]:
    """``call(i)`` for ``i`` in ``range(n)``: each one's wall time (ms) and the caller's CPU per call (ms)."""
    times, cpu = [], 0.0
    for i in range(n):
        c0, t0 = time.process_time(), time.perf_counter()
        call(i)
        times.append((time.perf_counter() - t0) * 1000)
        cpu += time.process_time() - c0
    return times, cpu / n * 1000


def measure(body: bytes, folder: Path, env: dict[str, str], p95: Any) -> None:
    """Time :data:`N` GETs of ``body`` served static; print p50, p95, and the server's and client's CPU a response."""
    import httpx

    from bench.proc_cost import PhaseCost

    with static_server(body, folder / "static-body.json", env) as (pid, port), \
            httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as c:
        for _ in range(5):
            c.get("/").raise_for_status()
        cost = PhaseCost(pid)
        times, client_cpu = timed(N, lambda _i: c.get("/").raise_for_status())
        server = cost.line(N).strip().split(",")[0].removeprefix("server process: ")
    print(f"floor: the same {len(body) / 1048576:.2f} MiB body, static, same uvicorn stack: p50 "
          f"{statistics.median(times):.2f} ms, p95 {p95(times):.2f} ms  |  server {server}, "
          f"client (httpx) {client_cpu:.2f} ms CPU per response")


if __name__ == "__main__":
    serve(sys.argv[1])
