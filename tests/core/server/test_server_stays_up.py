"""Issue 23, a server that stays up: 2,000 idle or half-sent connections without a token, from many loopback
addresses, do not stop ``memdesk serve`` answering a valid client; the per-address cap resets the excess
at once and the header deadline closes the rest. Bounded loops on loopback only; no wall-clock asserts
(the latencies are measured by ``python -m bench servers``)."""

from __future__ import annotations

import select
import socket
import threading
import time
import weakref

from core.server.limits import Limits, raise_open_files_limit

ATTACK_ADDRESSES = 40  # 127.0.0.2 .. 127.0.0.41: Linux answers on all of 127/8
PER_ADDRESS = 50  # 40 x 50 = 2,000 connections
CAP = 32


_seen_closed: weakref.WeakSet[socket.socket] = weakref.WeakSet()  # not ids: ids are reused


def _closed(sock: socket.socket) -> bool:
    """Whether the server closed or reset ``sock`` (without blocking; poll, as the descriptors pass 1024)."""
    if sock in _seen_closed:
        return True
    poller = select.poll()
    poller.register(sock, select.POLLIN | select.POLLHUP | select.POLLERR)
    if not poller.poll(0):
        return False
    try:
        done = sock.recv(4096) == b""
    except BlockingIOError:
        return False
    except OSError:
        done = True
    if done:
        _seen_closed.add(sock)
    return done


def test_two_thousand_slow_or_idle_connections_leave_valid_requests_answered(serve, token, sample_project):
    raise_open_files_limit()
    srv = serve(sample_project, limits=Limits(header_timeout=2.0, body_timeout=2.0, keep_alive=1,
                                              per_address=CAP))
    attack: list[socket.socket] = []
    for a in range(ATTACK_ADDRESSES):
        for _ in range(PER_ADDRESS):
            s = socket.socket()
            s.bind((f"127.0.0.{a + 2}", 0))
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", srv.port))
            attack.append(s)
    time.sleep(0.3)
    for n, s in enumerate(attack):  # half of them start a request and never finish it
        if n % 2:
            try:
                s.send(b"POST /api/memory/append HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100")
            except OSError:
                pass

    # The valid client, from 127.0.0.1, is answered the whole time.
    client = srv.client(token)
    answered = []
    stop = threading.Event()

    def valid() -> None:
        while not stop.is_set() and len(answered) < 200:
            answered.append(client.get("/api/memory").status_code)

    t = threading.Thread(target=valid)
    t.start()
    # Past the per-address cap, connections were reset at once; the rest close at the header deadline.
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not all(_closed(s) for s in attack):
        time.sleep(0.2)
    stop.set()
    t.join(60)
    closed = sum(_closed(s) for s in attack)
    for s in attack:
        s.close()
    assert closed == len(attack) == ATTACK_ADDRESSES * PER_ADDRESS
    assert answered and set(answered) == {200}
    # A new idle connection is closed by the header deadline too, while a kept-alive valid client still works.
    late = socket.create_connection(("127.0.0.1", srv.port))
    late.setblocking(False)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not _closed(late):
        time.sleep(0.1)
    assert _closed(late)
    late.close()
    assert client.get("/api/memory").status_code == 200


def test_the_cap_is_per_address(serve, token, sample_project):
    srv = serve(sample_project, limits=Limits(header_timeout=30.0, per_address=4))
    held: list[socket.socket] = []
    for _ in range(4):
        s = socket.socket()
        s.bind(("127.0.0.2", 0))
        s.connect(("127.0.0.1", srv.port))
        held.append(s)
    extra = socket.socket()
    extra.bind(("127.0.0.2", 0))
    extra.connect(("127.0.0.1", srv.port))
    extra.settimeout(10)
    try:
        got = extra.recv(10)
    except OSError:
        got = b""
    assert got == b""  # reset at once: the fifth from that address
    assert not any(_closed(s) for s in held)  # the four within the cap stay open
    assert srv.client(token).get("/api/memory").status_code == 200  # another address is not affected
    for s in [*held, extra]:
        s.close()
