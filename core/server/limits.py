"""Connection limits of ``memdesk serve``: slow and idle connections cannot hold the server.

uvicorn limits how long a connection may sit idle between requests (``timeout_keep_alive``); it has no
deadline for a request's headers or body, and no per-client cap. :func:`protocol_class` adds them to
uvicorn's httptools protocol, before any byte reaches the app (so before the token check):

- **header timeout**: a request's headers must be complete within ``header_timeout`` seconds of the
  connection opening (or of the request's first byte on a kept-alive connection), else the connection
  is closed: an idle connection that never sends, or one that trickles its headers, goes;
- **header size**: a request line and headers over ``header_bytes`` are refused with 431 and the connection
  closed (httptools sets no limit: one connection sending an endless header held the event loop for
  seconds and grew the server by ~1.7 GB in 8 s); after the headers, the bytes that are not body (chunk
  sizes and extensions, trailers) are held to the same bound (plus the body's own size, so a body in small
  chunks passes), and the connection is closed past it;
- **body timeout**: a body must be complete within ``body_timeout`` seconds of its headers;
- **per-address cap**: at most ``per_address`` open connections from one client address; more are
  reset at once, so one client cannot take the connections every other client needs;
- **total cap**: at most ``max_connections`` open connections in all (reset past it);
- **idle keep-alive**: ``keep_alive`` seconds (uvicorn's own ``timeout_keep_alive``);
- **lingering close**: a connection closed after its answer while a body is still arriving (a 413 or 401 sent
  from the headers) reads and drops the rest for at most ``linger`` seconds and ``linger_bytes``, so the client
  gets the answer instead of a reset (:mod:`core.server.linger`).

Responses that stream (MCP's event streams) are not cut: the deadlines end when a request has arrived.
"""

from __future__ import annotations

import asyncio
import logging
import resource
from dataclasses import dataclass
from typing import Any

from core.server.guard import MAX_BODY_BYTES
from core.server.linger import LingeringTransport

log = logging.getLogger(__name__)

__all__ = ["DEFAULT_LIMITS", "Limits", "protocol_class", "raise_open_files_limit"]


@dataclass(frozen=True)
class Limits:
    """The numbers (seconds and connection counts)."""

    header_timeout: float = 10.0
    header_bytes: int = 64 * 1024
    body_timeout: float = 30.0
    keep_alive: float = 5.0
    per_address: int = 64
    max_connections: int = 8192
    linger: float = 2.0
    linger_bytes: int = 8 * 1024 * 1024


DEFAULT_LIMITS = Limits()


def raise_open_files_limit(wanted: int = 65536) -> int:
    """Raise this process's soft limit of open files toward ``wanted`` (never past the hard limit); the limit now.

    Each connection is a file descriptor: with the common soft limit of 1024, a thousand idle
    connections would leave none for the next client or for the project's files."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            return target
        except (ValueError, OSError) as exc:
            log.warning("could not raise the open-files limit from %d to %d: %s", soft, target, exc)
    return soft


class _HeadTooLarge(Exception):
    """Raised in the parser's headers-complete callback to stop parsing a request refused with 431."""


def protocol_class(limits: Limits = DEFAULT_LIMITS) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol with ``limits`` (httptools; uvicorn's h11 protocol when httptools is missing,
    with the caps and the first request's header deadline only)."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as Base
        staged = True
    except ImportError:  # pragma: no cover - httptools is in the servers extra
        from uvicorn.protocols.http.h11_impl import H11Protocol as Base  # type: ignore[assignment]
        staged = False

    per_address: dict[str, int] = {}

    too_large = (b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8\r\n"
                 b"connection: close\r\ncontent-length: %d\r\n\r\n%s")
    too_large_why = b"request line and headers over %d bytes; nothing was done" % limits.header_bytes

    class Limited(Base):  # type: ignore[misc, valid-type]
        _host: str | None = None
        _timer: asyncio.TimerHandle | None = None
        _in_head = True  # the bytes arriving are a request line and headers (counted against header_bytes)
        _head_bytes = 0
        _heads = 0  # requests whose headers have ended on this connection
        _refused = False  # answered 431 and closing
        _wire_bytes = 0  # after the headers: the bytes received, and those of them that were body
        _body_bytes = 0

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            host = self.client[0] if self.client else "?"
            count = per_address.get(host, 0)
            if count >= limits.per_address or len(self.connections) > limits.max_connections:
                transport.abort()  # reset before reading a byte: the cap costs nothing to enforce
                return
            per_address[host] = count + 1
            self._host = host
            if staged:
                self._arm(limits.header_timeout)
                self.transport = LingeringTransport(transport, self.loop, self._answered_mid_body,  # type: ignore[assignment]  # uvicorn uses it as one
                                                    seconds=limits.linger, max_bytes=limits.linger_bytes)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            if isinstance(self.transport, LingeringTransport):
                self.transport.stop()
            if self._host is not None:
                left = per_address.get(self._host, 1) - 1
                if left > 0:
                    per_address[self._host] = left
                else:
                    per_address.pop(self._host, None)
                self._host = None
            super().connection_lost(exc)

        def _arm(self, seconds: float) -> None:
            self._disarm()
            self._timer = self.loop.call_later(seconds, self._expire)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _answered_mid_body(self) -> bool:
            """The request's answer is complete while its body is still arriving (refused from its headers)."""
            return not self._in_head and self.cycle is not None and self.cycle.response_complete

        def _expire(self) -> None:
            self._timer = None
            if not self.transport.is_closing():
                self.transport.close()

        if staged:
            def data_received(self, data: bytes) -> None:
                if isinstance(self.transport, LingeringTransport) and self.transport.lingering:
                    self.transport.drained(len(data))  # the rest of a refused body: dropped, not parsed
                    return
                head, heads = self._in_head, self._heads
                super().data_received(data)  # at most one read's bytes (256 KiB) past the limit are parsed
                if self._heads != heads:
                    return  # a request's headers ended within these bytes (a whole small request may come in one read)
                if head:
                    self._head_bytes += len(data)
                    if self._head_bytes > limits.header_bytes:
                        self._refuse_head()
                elif not self._in_head:
                    # After the headers: what is not body (chunk sizes, extensions, trailers) is bounded too.
                    # Framing in proportion to a body is a body sent in small chunks (a generator's lines: ~6
                    # bytes a chunk), not an attack: it is allowed up to the body's size (at most the guard's
                    # limit) beyond the bound; one-byte chunks (6 of framing a byte) and trailers still stop.
                    self._wire_bytes += len(data)
                    framing = self._wire_bytes - self._body_bytes
                    if framing > limits.header_bytes + min(self._body_bytes, MAX_BODY_BYTES) and \
                            not self.transport.is_closing():
                        self.transport.close()

            def _refuse_head(self) -> None:
                if not self.transport.is_closing():
                    self._refused = True
                    self.transport.write(too_large % (len(too_large_why), too_large_why))
                    self.transport.close()

            def send_400_response(self, msg: str) -> None:
                if not self._refused:  # after a 431 the parser's stop is no second answer
                    super().send_400_response(msg)

            def on_body(self, body: bytes) -> None:
                self._body_bytes += len(body)
                super().on_body(body)

            def on_response_complete(self) -> None:
                if isinstance(self.transport, LingeringTransport):
                    self.transport.flush()  # the whole answer goes now, in one send, before any background task
                super().on_response_complete()

            def on_message_begin(self) -> None:
                super().on_message_begin()
                if self._timer is None:  # a kept-alive connection's next request: its headers' deadline
                    self._arm(limits.header_timeout)

            def on_headers_complete(self) -> None:
                self._in_head, self._wire_bytes, self._body_bytes = False, 0, 0
                self._heads += 1
                # Headers that ended within one read were not counted as they came: their size, exactly.
                size = len(self.url) + sum(len(n) + len(v) + 4 for n, v in self.headers)
                if size > limits.header_bytes:
                    self._refuse_head()
                    raise _HeadTooLarge  # stops the parser here: the request never reaches the app
                self._arm(limits.body_timeout)
                super().on_headers_complete()

            def on_message_complete(self) -> None:
                self._in_head, self._head_bytes = True, 0
                self._disarm()
                super().on_message_complete()

    Limited.__name__ = Limited.__qualname__ = f"Limited{Base.__name__}"
    return Limited
