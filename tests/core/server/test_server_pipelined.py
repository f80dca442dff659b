"""Valid requests on one connection pass serve's header and framing limits (core/server/limits.py): pipelined
requests with their bodies in one write, a chunked body with a small trailer, then more requests kept alive.
Each is answered, none with 431 and none left hanging (the socket has a timeout)."""

from __future__ import annotations

import json
import socket
from pathlib import Path


def _read_responses(s: socket.socket, n: int) -> list[bytes]:
    """``n`` responses (status line and body), read by Content-Length."""
    buf, out = b"", []
    while len(out) < n:
        while b"\r\n\r\n" not in buf:
            got = s.recv(65536)
            assert got, f"closed after {len(out)} responses"
            buf += got
        head, _, buf = buf.partition(b"\r\n\r\n")
        length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        while len(buf) < length:
            got = s.recv(65536)
            assert got, "closed inside a body"
            buf += got
        out.append(head.split(b"\r\n", 1)[0] + b" " + buf[:length])
        buf = buf[length:]
    return out


def test_pipelined_chunked_and_kept_alive_requests_are_all_answered(serve, token, sample_project: Path):
    srv = serve(sample_project)
    auth = b"Authorization: Bearer " + token.encode() + b"\r\n"
    host = b"Host: 127.0.0.1:%d\r\n" % srv.port

    def append(text: str, big: int = 0) -> bytes:
        body = json.dumps({"content": text + " " + "x" * big}).encode()
        return (b"POST /api/memory/append HTTP/1.1\r\n" + host + auth + b"Content-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n" % len(body) + body)

    body = json.dumps({"content": "sent in chunks"}).encode()
    chunked = (b"POST /api/memory/append HTTP/1.1\r\n" + host + auth + b"Content-Type: application/json\r\n"
               b"Transfer-Encoding: chunked\r\n\r\n" + b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 7]), body[i:i + 7])
                                                               for i in range(0, len(body), 7))
               + b"0\r\nX-Trailer: ok\r\n\r\n")
    s = socket.create_connection(("127.0.0.1", srv.port))
    s.settimeout(30)
    try:
        s.sendall(append("pipelined one") + append("pipelined two", 200_000) + append("pipelined three"))
        s.sendall(chunked)
        got = _read_responses(s, 4)
        for i in range(5):  # kept alive
            s.sendall(append(f"kept alive {i}", 30_000 * i))
            got += _read_responses(s, 1)
    finally:
        s.close()
    assert all(r.startswith(b"HTTP/1.1 200 ") for r in got), [r[:200] for r in got]
    text = (sample_project / ".fusion" / "memory.md").read_text(encoding="utf-8")
    for line in ("pipelined one", "pipelined two", "pipelined three", "sent in chunks", "kept alive 4"):
        assert line in text, line
