"""A valid chunked body in small chunks is not taken for endless framing (core/server/limits.py, after ec1ce4f).

A client that streams a document line by line (an ``httpx`` generator: one chunk a yield) sends ~6 bytes of
chunk framing per chunk; a 1 MB body in 48-byte chunks carries ~130 KB of framing. Counted against the 64 KiB
bound of what is not body, the server hung up without an answer. The attacks of test_server_header_limits.py
(one-byte chunks, endless extensions, endless trailers) are still cut there.
"""

from __future__ import annotations

import json


def test_a_memory_streamed_in_small_chunks_is_written_whole(serve, token, sample_project):
    srv = serve(sample_project)
    c = srv.client(token)
    text = "".join(f"- line {i} of a memory streamed line by line\n" for i in range(20_000))
    body = json.dumps({"content": text}).encode()
    assert len(body) > 900_000

    def lines():
        for i in range(0, len(body), 48):
            yield body[i:i + 48]

    r = c.put("/api/memory", content=lines(), headers={"Content-Type": "application/json"})
    assert r.status_code == 200, r.text[:300]
    assert c.get("/api/memory").json()["content"] == text
