"""The local server, started from the app: ``memdesk serve`` (HTTP API + MCP at ``/mcp``) in this process.

It serves the open project on this machine only (127.0.0.1), with the user's API tokens, on the port
chosen (``0`` picks a free one), in a daemon thread (uvicorn, as ``memdesk serve`` runs it), until
stopped or the project closes. :func:`mcp_config` gives the ``mcpServers`` block an agent host
(Claude Desktop, Cursor, Codex…) reads: over stdio (the host starts ``memdesk mcp`` itself; no token)
or over HTTP to this running server (with a token's ``Authorization`` header).
"""

from __future__ import annotations

import json
import shutil
import sys
import threading
from pathlib import Path
from typing import Any, Literal

from PySide6.QtCore import QObject, Signal

from gui.serial_worker import SerialWorker

DEFAULT_PORT = 8765
HOST = "127.0.0.1"


def memdesk_command() -> str:
    """The ``memdesk`` command an agent host should run: the one beside this Python, else on PATH."""
    beside = Path(sys.executable).with_name("memdesk")
    if beside.exists():
        return str(beside)
    return shutil.which("memdesk") or "memdesk"


def mcp_config(project: Path, how: Literal["stdio", "http"], url: str | None = None,
               token: str | None = None) -> str:
    """The ``{"mcpServers": {"memdesk": …}}`` block for an agent host, as pretty JSON."""
    entry: dict[str, Any]
    if how == "stdio":
        entry = {"command": memdesk_command(), "args": ["mcp", "--project", str(project)]}
    else:
        entry = {"type": "http", "url": f"{url or f'http://{HOST}:{DEFAULT_PORT}'}/mcp",
                 "headers": {"Authorization": f"Bearer {token or '<a token from Preferences ▸ API tokens>'}"}}
    return json.dumps({"mcpServers": {"memdesk": entry}}, indent=2, ensure_ascii=False)


class LocalServer(QObject):
    """One in-process server for one project; ``stateChanged`` after a start or stop."""

    stateChanged = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._bound: Any = None
        self._thread: threading.Thread | None = None
        self.root: Path | None = None
        #: Why the last start failed (one line), or ``None``.
        self.error: str | None = None
        #: Binds, builds the app (it opens the project) and joins the server's thread off the GUI thread.
        self._worker = SerialWorker(self)

    @property
    def running(self) -> bool:
        """Whether it is serving."""
        return self._bound is not None and self._thread is not None and self._thread.is_alive()

    @property
    def port(self) -> int | None:
        """The port it serves on (the real one when 0 was asked)."""
        return self._bound.port if self.running else None

    @property
    def url(self) -> str | None:
        """``http://127.0.0.1:PORT`` while serving."""
        return f"http://{HOST}:{self.port}" if self.running else None

    def start(self, root: Path, port: int) -> bool:
        """Serve ``root`` on ``port``; False (with :attr:`error`) when it cannot: the extra missing, the port taken."""
        self.stop()
        self.error = None
        if not 0 <= port <= 65535:
            self.error = f"{port} is not a port number (0-65535)"
            self.stateChanged.emit()
            return False
        try:
            from core.server.http import create_app
            from core.server.runner import bind_socket, make_server
            from core.server.service import ServedProjects
            from core.server.tokens import TokenStore
        except ModuleNotFoundError as exc:
            self.error = (f"the server needs the 'servers' extra (missing: {exc.name}); install it with "
                          "pip install 'memdesk[servers]' (./run.sh installs it)")
            self.stateChanged.emit()
            return False
        try:
            sock = self._worker.call(lambda: bind_socket(HOST, port), "")
        except OSError as exc:
            self.error = f"cannot listen on {HOST}:{port}: {exc.strerror or exc}"
            self.stateChanged.emit()
            return False

        def serve() -> tuple[Any, threading.Thread]:  # opens the project, reads the tokens, starts uvicorn
            app = create_app(ServedProjects([root]), TokenStore(), port=sock.getsockname()[1], host=HOST)
            bound = make_server(app, sock)
            return bound, bound.start_thread()

        try:
            bound, self._thread = self._worker.call(serve, "Starting the local server…")
        except Exception as exc:
            sock.close()
            self.error = f"the server did not start: {exc}"
            self.stateChanged.emit()
            return False
        self._bound, self.root = bound, root
        self.stateChanged.emit()
        return True

    def stop(self) -> None:
        """Stop serving (requests in flight finish first, a few seconds at most)."""
        bound, thread = self._bound, self._thread
        self._bound = self._thread = None
        if bound is not None:
            def join() -> None:  # on the worker: the window paints while requests in flight finish
                bound.stop()
                if thread is not None:
                    thread.join(8)
                try:
                    bound.sock.close()
                except OSError:
                    pass

            self._worker.call(join, "Stopping the local server…")
            self.stateChanged.emit()
