"""What HTTP itself costs a ``POST /api/memory/append``, beside the figure: the same request and answer with no
append between them.

:func:`measure` sends :data:`N` append requests (the bench's own bodies, the same client and headers) to
:mod:`bench.http_floor`'s static server (the uvicorn config, httptools protocol and limits ``memdesk serve``
runs, answering every request with the append's own answer, static) and prints their p50 and p95, the
server's CPU and context switches a request, and the bench client's CPU a request: the part of the served
append's time that neither the server's memdesk code nor the append does. Read beside the figure; the
figure's target (HTTP p95 ≤ 2× the in-process append) stays what it is.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path

#: Requests timed against the static answer.
N = 200


def measure(answer: bytes, folder: Path, env: dict[str, str], token: str, entry: Callable[[str, int], str],
            p95: Callable[[list[float]], float]) -> None:
    """Time :data:`N` append requests answered with ``answer``, static; print one line."""
    import httpx

    from bench.http_floor import static_server, timed
    from bench.proc_cost import PhaseCost

    def post(i: int) -> None:
        r = c.post("/api/memory/append", json={"content": entry("static", i)})
        assert r.status_code == 200 and r.json()["status"] == "written", r.text

    with static_server(answer, folder / "static-append-answer.json", env) as (pid, port), \
            httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {token}"},
                         timeout=60) as c:
        for i in range(5):
            c.post("/api/memory/append", json={"content": entry("warm-static", i)}).raise_for_status()
        cost = PhaseCost(pid)
        times, client_cpu = timed(N, post)
        server = cost.line(N).strip().removeprefix("server process: ")
    print(f"  floor of HTTP: the same requests, answered static by the same uvicorn stack: p50 "
          f"{statistics.median(times):.2f} ms, p95 {p95(times):.2f} ms  |  server {server}, "
          f"client (httpx) {client_cpu:.2f} ms CPU per request")
