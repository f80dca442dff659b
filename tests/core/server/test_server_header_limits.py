"""Issue 23 item 4, attacked: a request's line and headers are bounded in size. httptools sets no limit, so
one connection without a token sending an endless header (one long value, or thousands of headers) kept
the event loop parsing: valid requests waited ~9 s and the server grew by ~1.7 GB in 8 s, until the header
deadline. Now past 64 KiB the server answers 431 and closes. Bounded loops on loopback only, no clock
asserts (the latencies are measured by ``python -m bench servers``)."""

from __future__ import annotations

import socket

import pytest

from core.server.limits import DEFAULT_LIMITS

SEND_AT_MOST = 32 << 20  # without a limit the server would take all of it (and more) within its header deadline


def _endless(port: int, head: bytes, chunk: bytes) -> tuple[int, bytes]:
    """Send ``head`` then ``chunk`` over and over; the bytes sent before the server closed, and what it said."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(30)
    sent = 0
    try:
        s.sendall(head)
        while sent < SEND_AT_MOST:
            s.sendall(chunk)
            sent += len(chunk)
    except OSError:
        pass
    said = b""
    try:
        while len(said) < 4096:
            got = s.recv(4096)
            if not got:
                break
            said += got
    except OSError:
        pass
    s.close()
    return sent, said


@pytest.mark.parametrize("shape", ["one endless value", "thousands of headers", "an endless request line"])
def test_endless_headers_are_refused_and_valid_requests_still_answered(serve, token, sample_project, shape):
    srv = serve(sample_project)
    start = b"GET /api/memory HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    head, chunk = {"one endless value": (start + b"X-Big: ", b"a" * 65536),
                   "thousands of headers": (start, b"".join(b"X-H%d: v\r\n" % i for i in range(6000))),
                   "an endless request line": (b"GET /api/memory?x=", b"a" * 65536)}[shape]
    sent, said = _endless(srv.port, head, chunk)
    assert sent < SEND_AT_MOST, "the server took 32 MiB of headers and kept the connection"
    assert said == b"" or said.startswith(b"HTTP/1.1 431 "), said[:200]
    assert srv.client(token).get("/api/memory").status_code == 200


@pytest.mark.parametrize("shape", ["endless trailers", "an endless chunk extension", "one-byte chunks"])
@pytest.mark.parametrize("with_token", [True, False])
def test_endless_chunk_framing_after_the_headers_is_cut(serve, token, sample_project, shape, with_token):
    """After the headers, what is not body (chunk sizes, extensions, trailers) is bounded too: endless trailers
    grew the server by 1.9 GB in 8 s and stalled valid requests for seconds, with or without a token."""
    srv = serve(sample_project)
    auth = b"Authorization: Bearer " + token.encode() + b"\r\n" if with_token else b""
    start = (b"POST /api/memory/search HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth +
             b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    head, chunk = {"endless trailers": (start + b"2\r\n{}\r\n0\r\n", b"".join(b"X-T%d: v\r\n" % i for i in range(6000))),
                   "an endless chunk extension": (start + b"1;", b"a" * 65536),
                   "one-byte chunks": (start, b"1\r\n \r\n" * 10000)}[shape]
    sent, _ = _endless(srv.port, head, chunk)
    assert sent < SEND_AT_MOST, "the server took 32 MiB of chunk framing and kept the connection"
    assert srv.client(token).get("/api/memory").status_code == 200


def test_headers_within_the_limit_and_large_bodies_pass(serve, token, sample_project):
    srv = serve(sample_project)
    c = srv.client(token)
    near = "a" * (DEFAULT_LIMITS.header_bytes - 2048)
    assert c.get("/api/memory", headers={"X-Near": near}).status_code == 200
    over = c.get("/api/memory", headers={"X-Over": "a" * (DEFAULT_LIMITS.header_bytes + 1)})
    assert over.status_code == 431 and "headers over 65536 bytes" in over.text
    # A body is not a header: a 1 MiB append body arriving with its headers in the same reads passes.
    big = c.post("/api/memory/append", json={"content": "big " * 200_000})
    assert big.status_code in (200, 400, 413) and big.status_code != 431, big.text[:200]
    # A chunked body in ordinary chunks is all body: it passes whole.
    def chunks():
        body = b'{"query": "' + b"word " * 50_000 + b'"}'
        for i in range(0, len(body), 4096):
            yield body[i:i + 4096]

    streamed = c.post("/api/memory/search", content=chunks(), headers={"Content-Type": "application/json"})
    assert streamed.status_code in (200, 400), streamed.text[:200]
    assert c.get("/api/memory").status_code == 200


def test_a_whole_request_arriving_in_one_read_is_not_taken_for_headers(serve, token, sample_project):
    """Headers and a 200 KB body written at once reach the server in one read: the bytes after the headers are
    body, not headers (counted as headers, such a request was refused with 431 now and then)."""
    srv = serve(sample_project)
    body = b'{"query": "' + b"w" * 200_000 + b'"}'
    request = (b"POST /api/memory/search HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token.encode() +
               b"\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    for _ in range(5):
        s = socket.create_connection(("127.0.0.1", srv.port))
        s.settimeout(30)
        s.sendall(request)
        said = s.recv(4096)
        s.close()
        assert said.startswith(b"HTTP/1.1 ") and not said.startswith(b"HTTP/1.1 431"), said[:200]
