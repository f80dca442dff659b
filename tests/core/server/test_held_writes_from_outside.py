"""The held small writes of ``memdesk serve`` (core.server.linger.LingeringTransport.write) from outside, on raw sockets:
pipelined reads of the memory (answered on the event loop, several in one turn), HEAD, ``Connection: close`` and a
client that goes away mid-answer; every answer arrives whole and in order, and the server goes on answering."""

from __future__ import annotations

import hashlib
import json
import socket
import time

MEMORY = ".fusion/memory.md"


def _responses(s: socket.socket, n: int, *, heads: tuple[int, ...] = ()) -> list[tuple[bytes, dict[bytes, bytes], bytes]]:
    """``n`` responses (status line, headers, body by Content-Length; none for the indexes in ``heads``: HEAD's)."""
    buf, out = b"", []
    while len(out) < n:
        while b"\r\n\r\n" not in buf:
            got = s.recv(1 << 20)
            assert got, f"closed after {len(out)} responses"
            buf += got
        head, _, buf = buf.partition(b"\r\n\r\n")
        status, *lines = head.split(b"\r\n")
        fields = {k.strip().lower(): v.strip() for k, v in (line.split(b":", 1) for line in lines)}
        length = 0 if len(out) in heads else int(fields[b"content-length"])
        while len(buf) < length:
            got = s.recv(1 << 20)
            assert got, "closed inside a body"
            buf += got
        out.append((status, fields, buf[:length]))
        buf = buf[length:]
    return out


def _request(method: str, port: int, token: str, extra: str = "") -> bytes:
    return (f"{method} /api/memory HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n{extra}"
            "\r\n").encode()


def _want(disk) -> dict:
    data = disk.read_bytes()
    return {"content": data.decode("utf-8"), "path": MEMORY, "hash": hashlib.sha256(data).hexdigest()}


def test_pipelined_reads_head_and_close_each_arrive_whole_and_in_order(serve, tokens, real_project):
    srv = serve(real_project)
    token = tokens.create("reader", scope="read")
    disk = real_project / MEMORY
    with socket.create_connection(("127.0.0.1", srv.port), timeout=30) as s:
        s.sendall(_request("GET", srv.port, token))  # the first serve: in the pool
        ((status, _f, body),) = _responses(s, 1)
        assert status.startswith(b"HTTP/1.1 200") and json.loads(body) == _want(disk)
        # Four reads in one packet, answered on the loop: a HEAD among them, then an append between two packets.
        s.sendall(_request("GET", srv.port, token) * 2 + _request("HEAD", srv.port, token)
                  + _request("GET", srv.port, token))
        got = _responses(s, 4, heads=(2,))
        assert [r[0].split(b" ")[1] for r in got] in ([b"200"] * 4, [b"200", b"200", b"405", b"200"])
        for i in (0, 1, 3):
            assert json.loads(got[i][2]) == _want(disk)
        assert got[2][2] == b""
        with disk.open("ab") as fh:
            fh.write("- appended by another program ✓\n".encode())
        s.sendall(_request("GET", srv.port, token) + _request("GET", srv.port, token, "Connection: close\r\n"))
        got = _responses(s, 2)
        assert all(json.loads(r[2]) == _want(disk) for r in got)
        assert got[1][1].get(b"connection") == b"close"
        s.settimeout(10)
        assert s.recv(1) == b""  # closed after the answer, not before it


def test_a_client_gone_mid_answer_leaves_the_server_answering(serve, tokens, real_project):
    srv = serve(real_project)
    token = tokens.create("reader", scope="read")
    disk = real_project / MEMORY
    disk.write_bytes(disk.read_bytes() * 8)  # 0.8 MB: more than a socket buffer takes at once
    for _ in range(20):
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(_request("GET", srv.port, token) * 3)
        s.recv(100)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # reset on close
        s.close()
        with disk.open("ab") as fh:
            fh.write(b"- more\n")
    time.sleep(0.2)
    c = srv.client(token)
    assert c.get("/api/memory").json() == _want(disk)


def test_a_read_after_an_append_leaves_in_one_send(serve, tokens, real_project, monkeypatch):
    """GET /api/memory after another program's append answers with its head and the body's pieces (the old
    literal's view, the tail's, the JSON's end): the transport gets them all in one vectored write when the response
    is complete (the protocol flushes then), before the read goes on record; not the head and the MiB first and the
    small pieces a turn later, after the read-log task."""
    from core.server import linger

    sent: list[list[int]] = []

    class Recorded:
        def __init__(self, transport) -> None:
            self.transport = transport

        def __getattr__(self, name):
            return getattr(self.transport, name)

        def write(self, data) -> None:
            sent.append([len(data)])
            self.transport.write(data)

        def writelines(self, chunks) -> None:
            chunks = list(chunks)
            sent.append([len(c) for c in chunks])
            self.transport.writelines(chunks)

    from core.server import service

    real_note = service.note_read
    monkeypatch.setattr(service, "note_read", lambda *a, **k: sent.append(["noted"]) or real_note(*a, **k))
    real_init = linger.LingeringTransport.__init__
    monkeypatch.setattr(linger.LingeringTransport, "__init__",
                        lambda self, transport, *a, **k: real_init(self, Recorded(transport), *a, **k))
    srv = serve(real_project)
    c = srv.client(tokens.create("reader", scope="read"))
    disk = real_project / MEMORY
    assert c.get("/api/memory").status_code == 200 and c.get("/api/memory").status_code == 200
    for i in range(3):
        with disk.open("ab") as fh:
            fh.write(f"- appended {i} by another program ✓\n".encode())
        sent.clear()
        r = c.get("/api/memory")
        assert r.json() == _want(disk)
        assert len(sent[0]) > 2 and sum(sent[0][1:]) == len(r.content), sent  # the head and the whole body, together
        assert sent[1:] == [["noted"]], sent  # then the read goes on record: the answer does not wait for it
