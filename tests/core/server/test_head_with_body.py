"""A response's head and its body leave in one send (core.server.linger.LingeringTransport.write): a client already
waiting in ``recv`` wakes once, to the head and the body's first bytes, not once for the head and again for the
body. Two sends of a 0.9 MiB read cost the bench's httpx client about 1 ms of CPU more per response (bench servers:
the static floor's client 2.1-2.3 → 1.2-1.35 ms). The sends are recorded on a real socket's transport."""

from __future__ import annotations

import asyncio
import socket
import threading

from core.server.linger import HOLD_BYTES, MAX_HELD_BYTES, LingeringTransport


class _Recorded:
    """A real transport, its sends recorded (``write``/``writelines``/``close``/``abort``, in order)."""

    def __init__(self, transport) -> None:
        self.transport, self.calls = transport, []

    def __getattr__(self, name):
        return getattr(self.transport, name)

    def write(self, data) -> None:
        self.calls.append(("write", [bytes(data)]))
        self.transport.write(data)

    def writelines(self, chunks) -> None:
        chunks = [bytes(c) for c in chunks]
        self.calls.append(("writelines", chunks))
        self.transport.writelines(chunks)

    def close(self) -> None:
        self.calls.append(("close", []))
        self.transport.close()

    def abort(self) -> None:
        self.calls.append(("abort", []))
        self.transport.abort()


def _drive(steps) -> tuple[list, bytes]:
    """Run ``steps(wrapped, turn)`` over a real socket pair's transport; the sends recorded and what the peer got."""
    async def main():
        loop = asyncio.get_running_loop()
        ours, theirs = socket.socketpair()
        transport, _protocol = await loop.connect_accepted_socket(asyncio.Protocol, ours)
        received: list[bytes] = []

        def peer() -> None:  # reads until the transport closes
            try:
                while chunk := theirs.recv(1 << 20):
                    received.append(chunk)
            except ConnectionResetError:
                pass

        reader = threading.Thread(target=peer)
        reader.start()
        recorded = _Recorded(transport)
        wrapped = LingeringTransport(recorded, loop, lambda: False, seconds=1.0, max_bytes=1024)
        await steps(wrapped, lambda: asyncio.sleep(0))
        if not transport.is_closing():
            transport.close()
        await asyncio.to_thread(reader.join, 30)
        theirs.close()
        return recorded.calls, b"".join(received)

    return asyncio.run(main())


HEAD = b"HTTP/1.1 200 OK\r\ncontent-length: 300000\r\n\r\n"
BODY = b"x" * 300_000


def test_a_head_goes_out_with_the_body_written_after_it_in_one_call():
    async def steps(t, turn):
        t.write(HEAD)
        t.write(BODY)
        await turn()  # both go when the loop turns

    calls, got = _drive(steps)
    assert calls[0] == ("writelines", [HEAD, BODY]) and got == HEAD + BODY


def test_a_small_write_alone_goes_out_when_the_loop_turns_and_order_holds():
    async def steps(t, turn):
        t.write(b"head")
        assert t.get_write_buffer_size() >= 4
        await turn()
        t.write(b"x" * (HOLD_BYTES + 1))  # nothing held: written at once
        t.write(b"a")
        t.write(b"b")
        t.close()  # what is held goes first

    calls, got = _drive(steps)
    assert [c[0] for c in calls[:4]] == ["writelines", "write", "writelines", "close"]
    assert calls[0][1] == [b"head"] and calls[2][1] == [b"a", b"b"]
    assert got == b"head" + b"x" * (HOLD_BYTES + 1) + b"ab"


def test_an_abort_drops_what_is_held():
    async def steps(t, turn):
        t.write(b"never sent")
        t.abort()

    calls, got = _drive(steps)
    assert calls == [("abort", [])] and got == b""


def test_a_small_refusal_arrives_whole_and_the_connection_ends(serve, sample_project):
    srv = serve(sample_project)
    request = f"GET /api/memory HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\n\r\n".encode()  # no token
    with socket.create_connection(("127.0.0.1", srv.port), timeout=30) as sock:
        sock.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data or not data.rstrip().endswith(b"}"):
            chunk = sock.recv(65536)
            assert chunk, data
            data += chunk
    assert data.startswith(b"HTTP/1.1 401") and len(data) < HOLD_BYTES


def test_writes_in_one_turn_are_held_only_up_to_the_bound():
    """A body sent in many writes within one turn of the loop (an ASGI app's generator that never waits: uvicorn
    yields to the loop only when the transport's buffer is over its limit): what is held stays within MAX_HELD_BYTES
    and the rest reaches the transport at once, whose buffer and flow control then bound it, as without the hold."""
    chunk, count = b"y" * 8192, 3 * MAX_HELD_BYTES // 8192

    async def steps(t, turn):
        for _ in range(count):
            t.write(chunk)
        sent = sum(len(c) for _name, chunks in t._transport.calls for c in chunks)
        assert count * len(chunk) - sent <= MAX_HELD_BYTES  # before the loop turns
        await turn()  # the rest goes when it turns

    calls, got = _drive(steps)
    assert got == chunk * count and all(name == "writelines" for name, _ in calls)


def test_a_body_in_pieces_goes_out_with_its_head_in_one_call():
    """GET /api/memory after an append sends its head, then the body's pieces (the old literal's 0.9 MiB view, the
    tail's literal, the end of the JSON: core.server.memory_read.PartsResponse), each a write in the same turn: one
    vectored write, one wake of the client, not one for the head and the MiB and another for the small pieces."""
    pieces = [HEAD, b'{"content":', b"x" * 900_000, b'tail"', b',"path":".fusion/memory.md"}']

    async def steps(t, turn):
        for piece in pieces:
            t.write(piece)
        await turn()

    calls, got = _drive(steps)
    assert calls == [("writelines", pieces)] and got == b"".join(pieces)
