"""Run the HTTP app with uvicorn on a socket bound first, so the real port is known before serving.

Binding the socket ourselves lets ``--port 0`` pick a free port and still give the guard the port it
must see in ``Host`` headers; the tests run the same server in a thread.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from dataclasses import dataclass

import uvicorn
from starlette.types import ASGIApp

from core.server.limits import DEFAULT_LIMITS, Limits, protocol_class, raise_open_files_limit

__all__ = ["BoundServer", "bind_socket", "is_loopback", "make_server"]


def is_loopback(host: str) -> bool:
    """Whether ``host`` only listens on this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (``0`` picks a free port)."""
    host = host.strip("[]")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP, and without it a
    # response's head and body wait on the client's delayed ACK (~40 ms per small request).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(1024)
    sock.set_inheritable(True)
    return sock


@dataclass
class BoundServer:
    """A uvicorn server and the socket it serves on."""

    server: uvicorn.Server
    sock: socket.socket

    @property
    def port(self) -> int:
        """The port actually bound."""
        return int(self.sock.getsockname()[1])

    def run(self) -> None:
        """Serve until stopped (Ctrl+C, or :meth:`stop` from another thread)."""
        self.server.run(sockets=[self.sock])

    def start_thread(self, timeout: float = 20.0) -> threading.Thread:
        """Serve in a daemon thread; return once the server accepts requests."""
        thread = threading.Thread(target=self.run, name="memdesk-serve", daemon=True)
        thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.01)
        return thread

    def stop(self) -> None:
        """Ask the server to finish its requests and stop."""
        self.server.should_exit = True


def make_server(app: ASGIApp, sock: socket.socket, *, log_level: str = "warning",
                limits: Limits = DEFAULT_LIMITS) -> BoundServer:
    """A uvicorn server for ``app`` on ``sock`` (no access log), with :mod:`core.server.limits`' header and body
    deadlines, per-address and total connection caps, and keep-alive limit."""
    raise_open_files_limit()
    config = uvicorn.Config(app, log_level=log_level, access_log=False, lifespan="on", http=protocol_class(limits),
                            timeout_keep_alive=int(max(1, limits.keep_alive)), server_header=False,
                            proxy_headers=False, timeout_graceful_shutdown=5)
    return BoundServer(uvicorn.Server(config), sock)

