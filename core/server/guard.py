"""The ASGI layer in front of every route of ``memdesk serve``: Host check, bearer token, body limit.

It runs before any route, in this order, and refuses with one JSON line:
- a ``Host`` that is not the server's own (DNS rebinding: a web page that made ``evil.example``
  resolve to 127.0.0.1 still sends ``Host: evil.example``) → 421;
- no ``Authorization: Bearer <token>``, or a token not in the user's token file → 401;
- a body over :data:`MAX_BODY_BYTES` → 413, decided from ``Content-Length`` before reading, or by
  counting while reading and stopping at the limit, so an oversize body is never held whole.
The name of the token that was accepted is put in ``scope["state"]["memdesk_author"]``, its scope
(:class:`core.server.access.Access`) in ``scope["state"]["memdesk_access"]``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from core.server.tokens import TokenStore
from core.storage.readlog import client_label

log = logging.getLogger(__name__)

#: One memory file is at most 1 MiB; a JSON body carrying one needs some room for keys and escapes.
MAX_BODY_BYTES = 1_048_576 + 65_536
AUTHOR_KEY = "memdesk_author"
#: The token's :class:`core.server.access.Access` (its scope), for the routes and the MCP tools.
ACCESS_KEY = "memdesk_access"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def split_host(value: str) -> tuple[str, int | None]:
    """Split a ``Host`` header into a lower-case name (IPv6 without brackets) and its port."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    else:
        name, _, port = value.rpartition(":") if value.count(":") == 1 else (value, "", "")
        if not name:
            name, port = value, ""
    if port and not port.isdigit():
        return "", None
    return name, int(port) if port else None


def bearer(value: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header value."""
    if not value:
        return None
    scheme, _, token = value.strip().partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


class Guard:
    """Wrap an ASGI app with the Host check, the bearer-token check and the body limit."""

    def __init__(self, app: ASGIApp, *, tokens: TokenStore, host_names: Iterable[str], port: int,
                 max_body: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.tokens = tokens
        self.host_names = {n.lower().strip("[]") for n in host_names}
        self.port = port
        self.max_body = max_body

    def host_ok(self, value: str | None) -> bool:
        """Whether a ``Host`` header names this server (a known name, and this port or none)."""
        if not value:
            return False
        name, port = split_host(value)
        return name in self.host_names and port in (None, self.port)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "websocket":  # no route speaks websocket; refuse before anything runs
                await send({"type": "websocket.close", "code": 1008})
                return
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if not self.host_ok(headers.get("host")):
            log.warning("refused a request with Host %r", headers.get("host"))
            await _refuse(send, 421, "the Host header does not name this server (requests must come to "
                          f"127.0.0.1:{self.port} or localhost:{self.port})")
            return
        try:
            info = self.tokens.lookup(bearer(headers.get("authorization")))
        except ValueError as exc:  # a broken tokens file: nobody gets in, and the operator is told why
            await _refuse(send, 503, f"cannot check tokens: {exc}")
            return
        author = info.name if info is not None else None
        if info is None:
            await _refuse(send, 401, "a valid token is required: send 'Authorization: Bearer <token>' "
                          "(create one with `memdesk tokens create NAME`)",
                          [(b"www-authenticate", b'Bearer realm="memdesk"')])
            return
        state = scope.setdefault("state", {})
        state[AUTHOR_KEY] = author
        state[ACCESS_KEY] = info.access
        length = headers.get("content-length")
        if length is not None:
            if not length.strip().isdigit():
                await _refuse(send, 400, f"Content-Length {length!r} is not a number")
                return
            if int(length) > self.max_body:
                await _refuse(send, 413, _too_big(int(length), self.max_body))
                return
        body = await self._read_body(receive)
        if body is None:
            await _refuse(send, 413, _too_big(None, self.max_body))
            return
        await self.app(scope, _replay(body, receive), send)

    async def _read_body(self, receive: Receive) -> list[Message] | None:
        """Read the request body, at most ``max_body`` bytes; ``None`` when it is longer."""
        messages: list[Message] = []
        total = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                return messages  # the client went away; the app sees the disconnect
            total += len(message.get("body", b""))
            if total > self.max_body:
                return None
            if not message.get("more_body", False):
                return messages


def _too_big(length: int | None, limit: int) -> str:
    said = f"{length:,} bytes" if length is not None else "more than that"
    return (f"request body is {said}; the limit is {limit:,} bytes (a memory file is at most 1 MiB). "
            "Nothing was read or written.")


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """A ``receive`` that gives the buffered body first, then whatever the client sends next."""
    pending = list(messages)

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay


#: The code of each refusal made before a request reaches a route.
_GUARD_CODES = {400: "INVALID_ARGUMENT", 401: "UNAUTHORIZED", 413: "QUOTA_EXCEEDED", 421: "WRONG_HOST",
                503: "TOKENS_UNAVAILABLE"}


async def _refuse(send: Send, status: int, message: str,
                  extra: list[tuple[bytes, bytes]] | None = None) -> None:
    code = _GUARD_CODES.get(status, "REFUSED")  # Fusion's {error, details: {code, backend}}, memdesk's code beside
    body = json.dumps({"error": message, "code": code, "details": {"code": code, "backend": None}}).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"connection", b"close"), *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def author(request: Request) -> str | None:
    """The name of the token the guard accepted for this request."""
    return request.scope.get("state", {}).get(AUTHOR_KEY)


def client_name(request: Request) -> str | None:
    """The HTTP client's own name (its ``User-Agent``), one printable line cut to 120 characters."""
    return client_label(request.headers.get("user-agent"))
