"""A response's head and its body handed to the socket together.

uvicorn writes a response's head (status line and headers) as soon as the app starts the response and its
body in a second write when the app sends it. On loopback with ``TCP_NODELAY`` each write goes out at once,
so the client wakes for a segment of a hundred bytes, parses it, and then reads the body as it trickles in.
For ``GET /api/memory`` (a 0.9 MiB body) that cost the bench's httpx client 0.3-0.7 ms of CPU per response
and the server 0.2 ms (a static 0.9 MiB body over the same stack, alternated: ``bench/http_floor.py``).

:class:`HeadWithBody` is the transport one request's cycle writes to: the head of a response that has a
``Content-Length`` greater than zero is held until its first body bytes, and the two are written with one
``writelines`` (uvloop sends them with one ``writev``, no copy). Everything else passes straight through: a
``HEAD`` response (no body follows), a chunked or streamed one (MCP's event streams: their head must not wait
for the first event), an empty body, ``100 Continue``. A held head is written before the connection closes
(an app that started a response and failed), and dropped only with the connection itself (``abort``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["HeadWithBody"]


class HeadWithBody:
    """``transport`` as one request's uvicorn cycle uses it, the response's head joined to its body."""

    __slots__ = ("_cycle", "_held", "_transport", "_waiting")

    def __init__(self, transport: Any, cycle: Any) -> None:
        self._transport = transport
        self._cycle = cycle  # uvicorn's RequestResponseCycle: response_started, chunked_encoding, …
        self._held: bytes | None = None
        self._waiting = cycle.scope.get("method") != "HEAD"  # for the head (a HEAD response has no body)

    def __getattr__(self, name: str) -> Any:  # get_extra_info, is_closing, pause_reading… as the transport has them
        return getattr(self._transport, name)

    def write(self, data: bytes) -> None:
        held = self._held
        if held is not None:
            self._held = None
            self._transport.writelines((held, data))
            return
        if self._waiting and self._cycle.response_started:
            # uvicorn sets response_started, then writes the head: this is it (100 Continue came before).
            self._waiting = False
            if self._cycle.chunked_encoding is False and self._cycle.expected_content_length > 0:
                self._held = data
                return
        self._transport.write(data)

    def flush(self) -> None:
        """Write a held head now."""
        held, self._held = self._held, None
        if held is not None:
            self._transport.write(held)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._held = None
        self._transport.abort()
