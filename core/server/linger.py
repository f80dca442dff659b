"""A lingering close for ``memdesk serve``: a refusal sent before a request's body was read still reaches the client.

The guard answers a body over the limit (413), a missing token (401) and the like from the headers, before the
body is read, and says ``connection: close``. uvicorn then closes the socket at once, with the rest of the body
still arriving: the kernel answers the client's next bytes with a reset, and a client that writes its whole
body before it reads (Python's ``urllib``, Node's ``http`` behind a reverse proxy: Fusion's dashboard saw a 502
"write ECONNRESET" for a 2 MiB save) gets a broken pipe instead of memdesk's answer. So, as web servers do
(Apache's and nginx's lingering close), when the connection is closed after a complete response while a body
is still arriving, memdesk stops sending (half-close: the client sees the answer and the end of it), reads and
drops what still comes for at most ``seconds`` and ``max_bytes``, then closes. Nothing read then is parsed or
kept; the bounds keep a client that never stops sending from holding the connection.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

__all__ = ["HOLD_BYTES", "MAX_HELD_BYTES", "LingeringTransport"]

#: A write of at most this many bytes is held until the event loop's next turn, with the writes after it in that
#: turn (see :meth:`LingeringTransport.write`).
HOLD_BYTES = 16 * 1024
#: At most this many bytes are held in all (a 1 MiB memory's answer in its pieces fits).
MAX_HELD_BYTES = 2 * 1024 * 1024


class LingeringTransport:
    """``transport`` as uvicorn uses it, with :meth:`close` lingering while ``body_arriving()`` says so."""

    def __init__(self, transport: Any, loop: asyncio.AbstractEventLoop, body_arriving: Callable[[], bool], *,
                 seconds: float, max_bytes: int) -> None:
        self._transport = transport
        self._loop = loop
        self._body_arriving = body_arriving
        self._seconds = seconds
        self._left = max_bytes
        self._timer: asyncio.TimerHandle | None = None
        self._held: list[Any] = []
        self._held_bytes = 0
        self.lingering = False

    def __getattr__(self, name: str) -> Any:  # write, get_extra_info, pause_reading… as the transport has them
        return getattr(self._transport, name)

    def is_closing(self) -> bool:
        return self.lingering or self._transport.is_closing()

    def write(self, data: Any) -> None:
        """Send ``data``; a small write (a response's status line and headers, a small body) is held until the loop's
        next turn, with whatever is written after it in this turn, and they are sent in one system call.

        uvicorn writes a response's head, then its body, each at once: two sends, and on loopback each wakes the
        reading client (measured: the head's send took the event loop about as long as a 0.9 MiB body's). Held,
        the head goes with the body; so does a body sent in pieces (:class:`core.server.memory_read.PartsResponse`:
        a 0.9 MiB literal's view, the tail's, the rest of the JSON). A response whose body follows in another turn
        (streamed, or computed in the thread pool) gets its head sent when the loop turns, one callback later.

        What is held stays within :data:`MAX_HELD_BYTES` in all: a body written in many writes within one turn
        (uvicorn yields to the loop only when the transport's buffer is over its limit) goes on to the transport,
        whose buffer and flow control bound it, instead of piling up here until the loop turns."""
        if self._held:
            self._held.append(data)
            self._held_bytes += len(data)
            if self._held_bytes > MAX_HELD_BYTES:
                self.flush()
            return
        if len(data) > HOLD_BYTES or self._transport.is_closing():
            self._transport.write(data)
            return
        self._held.append(data)
        self._held_bytes = len(data)
        self._loop.call_soon(self.flush)

    def writelines(self, chunks: Any) -> None:
        for chunk in chunks:
            self.write(chunk)

    def flush(self) -> None:
        """Send what is held (one vectored write)."""
        held, self._held, self._held_bytes = self._held, [], 0
        if held and not self._transport.is_closing():
            self._transport.writelines(held)

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def get_write_buffer_size(self) -> int:
        return int(self._transport.get_write_buffer_size()) + self._held_bytes

    def close(self) -> None:
        self.flush()
        if self.lingering or self._transport.is_closing():
            return
        if not self._body_arriving() or not self._transport.can_write_eof():
            self._transport.close()
            return
        self.lingering = True
        self._transport.write_eof()  # the answer already written (and flushed above) goes out, then the end of it
        self._transport.resume_reading()  # reading may be paused with the body's first bytes buffered
        self._timer = self._loop.call_later(self._seconds, self.abort_linger)

    def abort(self) -> None:
        self._held, self._held_bytes = [], 0
        self.stop()
        self._transport.abort()

    def drained(self, count: int) -> None:
        """``count`` more bytes arrived while lingering (dropped); past the bound the connection is closed."""
        self._left -= count
        if self._left < 0:
            self.abort_linger()

    def abort_linger(self) -> None:
        self.stop()
        if not self._transport.is_closing():
            self._transport.close()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
