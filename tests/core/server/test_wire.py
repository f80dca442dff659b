"""A response's head goes out with its body's first bytes (core/server/wire.py): one ``writelines``, never a head
left waiting (a HEAD response, a stream, an empty body, 100 Continue, an app that fails after starting)."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from types import SimpleNamespace

from core.server.wire import HeadWithBody

HEAD = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n"


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    def write(self, data: bytes) -> None:
        self.calls.append(("write", data))

    def writelines(self, parts: tuple[bytes, ...]) -> None:
        self.calls.append(("writelines", tuple(parts)))

    def close(self) -> None:
        self.calls.append(("close", None))

    def abort(self) -> None:
        self.calls.append(("abort", None))

    def get_extra_info(self, name: str) -> str:
        return f"info:{name}"


def _cycle(method: str = "GET", chunked: bool | None = False, length: int = 5) -> SimpleNamespace:
    return SimpleNamespace(scope={"method": method}, response_started=False, chunked_encoding=chunked,
                           expected_content_length=length)


def _start(wire: HeadWithBody, cycle: SimpleNamespace) -> None:
    cycle.response_started = True  # as uvicorn's send: started, then the head written
    wire.write(HEAD)


def test_the_head_waits_for_the_body_and_goes_with_it():
    t, cycle = Recorder(), _cycle()
    wire = HeadWithBody(t, cycle)
    wire.write(b"HTTP/1.1 100 Continue\r\n\r\n")  # before the response: straight out
    _start(wire, cycle)
    assert t.calls == [("write", b"HTTP/1.1 100 Continue\r\n\r\n")]
    wire.write(b"hello")
    wire.write(b"more")
    assert t.calls[1:] == [("writelines", (HEAD, b"hello")), ("write", b"more")]
    assert wire.get_extra_info("peername") == "info:peername"


def test_what_has_no_body_to_wait_for_goes_at_once():
    for cycle in (_cycle(method="HEAD"), _cycle(chunked=True), _cycle(chunked=None), _cycle(length=0)):
        t = Recorder()
        wire = HeadWithBody(t, cycle)
        _start(wire, cycle)
        assert t.calls == [("write", HEAD)], cycle


def test_a_held_head_is_written_before_the_close_and_dropped_by_an_abort():
    t, cycle = Recorder(), _cycle()
    wire = HeadWithBody(t, cycle)
    _start(wire, cycle)
    wire.close()  # the app started the response and failed: uvicorn closes the connection
    assert t.calls == [("write", HEAD), ("close", None)]
    t, cycle = Recorder(), _cycle()
    wire = HeadWithBody(t, cycle)
    _start(wire, cycle)
    wire.abort()
    assert t.calls == [("abort", None)]


def _raw(port: int, request: bytes, wait_for: bytes, timeout: float = 5.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(request)
        got = b""
        deadline = time.monotonic() + timeout
        while wait_for not in got and time.monotonic() < deadline:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
        return got


def test_head_requests_and_100_continue_are_answered_at_once_by_a_real_server(serve, tokens, tmp_path: Path):
    root = tmp_path / "proj"
    (root / ".fusion").mkdir(parents=True)
    (root / ".fusion" / "memory.md").write_text("# Project Memory\n\n- one\n", encoding="utf-8")
    srv = serve(root)
    token = tokens.create("agent-w")
    host = f"Host: 127.0.0.1:{srv.port}\r\nAuthorization: Bearer {token}\r\n".encode()
    t0 = time.monotonic()
    head = _raw(srv.port, b"HEAD /api/memory HTTP/1.1\r\n" + host + b"\r\n", b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 ") and head.endswith(b"\r\n\r\n") and time.monotonic() - t0 < 4
    get = _raw(srv.port, b"GET /api/memory HTTP/1.1\r\n" + host + b"\r\n", b'"}')
    head_part, _, got_body = get.partition(b"\r\n\r\n")
    assert head_part.startswith(b"HTTP/1.1 200 OK\r\n") and b"- one" in got_body
    assert f"content-length: {len(got_body)}".encode() in head_part  # the whole body, after the whole head
    body = b'{"content":"sent after 100 Continue"}'
    with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
        s.sendall(b"POST /api/memory/append HTTP/1.1\r\n" + host + b"Content-Type: application/json\r\n"
                  b"Expect: 100-continue\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n")
        interim = s.recv(65536)
        assert interim.startswith(b"HTTP/1.1 100 Continue"), interim  # not held back waiting for a body
        s.sendall(body)
        answer = b""
        while b'"status"' not in answer:
            answer += s.recv(65536)
    assert b"200 OK" in answer and b'"written"' in answer
    assert "sent after 100 Continue" in (root / ".fusion" / "memory.md").read_text(encoding="utf-8")
