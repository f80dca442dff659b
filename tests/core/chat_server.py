"""A tiny OpenAI-compatible chat-completions server on loopback, with scripted replies, for tests.

``POST /v1/chat/completions`` answers with the next scripted :class:`Scripted` reply (or the
default one) and records every request, so a test can check what was sent (the Authorization
header, the model, the prompt). Replies can be slow (for timeouts), fail with any HTTP status,
carry any content, or run a hook while "the model is thinking" (to change the memory meanwhile).
"""

from __future__ import annotations

import json
import shutil
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLE_FUSION = REPO / "resources" / "sample" / ".fusion"
GOOD_REPLY = (SAMPLE_FUSION / "extraction-reply.json").read_text(encoding="utf-8")
API_KEY_ENV = "MEMDESK_TEST_API_KEY"
API_KEY = "sk-test-0123456789"


@dataclass
class Scripted:
    """One scripted answer: an HTTP status, and either chat ``content`` or a raw ``body``."""

    content: str | None = None
    status: int = 200
    body: bytes | None = None
    delay_s: float = 0.0
    hook: Callable[[], None] | None = None

    def payload(self) -> bytes:
        """The response body."""
        if self.body is not None:
            return self.body
        return json.dumps({
            "id": "chatcmpl-test", "object": "chat.completion", "model": "test-model",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": self.content}}],
        }).encode("utf-8")


def _reply_with(**changes: Any) -> str:
    data = json.loads(GOOD_REPLY)
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return json.dumps(data)


# The replies of item 4 of the issue, plus a good one.
GOOD = Scripted(GOOD_REPLY)
FENCED = Scripted("Here is the result:\n```json\n" + GOOD_REPLY + "\n```")
MALFORMED = Scripted('Sure! {"summary": "oops", "insights": [ {"category": "pattern", ')
EMPTY = Scripted("")
UNAUTHORIZED = Scripted(status=401, body=b'{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}')
SERVER_ERROR = Scripted(status=500, body=b'{"error": {"message": "The server had an error while processing your request"}}')
NO_PRUNE = Scripted(_reply_with(prunedMemory=None))
BAD_PRUNE = Scripted(_reply_with(prunedMemory="# Project Memory\n\n## Context\n\n- Node 20 LTS and Postgres 15.\n"))
NOT_JSON_BODY = Scripted(status=200, body=b"<html>gateway says hi</html>")


def slow(seconds: float = 5.0) -> Scripted:
    """A good reply that arrives only after ``seconds``."""
    return Scripted(GOOD_REPLY, delay_s=seconds)


@dataclass
class Recorded:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class ChatServer:
    """The server; ``base_url`` ends in ``/v1``; ``script(...)`` queues the next replies."""

    default: Scripted = field(default_factory=lambda: GOOD)
    requests: list[Recorded] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._queue: deque[Scripted] = deque()
        self._stop = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def script(self, *replies: Scripted) -> None:
        """Answer the next requests with ``replies``, in order; then the default."""
        self._queue.extend(replies)

    def start(self) -> ChatServer:
        """Start serving on a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving (slow replies are cut short)."""
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def _next(self) -> Scripted:
        return self._queue.popleft() if self._queue else self.default

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (quiet)
                return

            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body: Any = json.loads(raw)
                except ValueError:
                    body = raw
                server.requests.append(Recorded("POST", self.path, dict(self.headers.items()), body))
                if self.path != "/v1/chat/completions":
                    self._send(404, b'{"error": {"message": "not found"}}')
                    return
                reply = server._next()
                if reply.hook is not None:
                    reply.hook()
                if reply.delay_s and server._stop.wait(reply.delay_s):
                    return
                self._send(reply.status, reply.payload())

            def _send(self, status: int, payload: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:  # the client gave up (timeout test)
                    pass

        return Handler


# Fixtures are registered under their ``name``; tests/conftest.py loads this module as a plugin.
@pytest.fixture(name="chat_server")
def chat_server_fixture() -> Iterator[ChatServer]:
    """A running chat-completions server on 127.0.0.1."""
    server = ChatServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(name="user_config_dir")
def user_config_dir_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty user config folder (``MEMDESK_CONFIG_DIR``) so tests never touch the real one."""
    folder = tmp_path / "user-config"
    monkeypatch.setenv("MEMDESK_CONFIG_DIR", str(folder))
    return folder


@pytest.fixture(name="tidepool")
def tidepool_fixture(tmp_path: Path, user_config_dir: Path) -> Path:
    """The sample project's memory and insights (memory.md, memory-insights.md, config.json) in tmp_path."""
    root = tmp_path / "tidepool"
    (root / ".fusion").mkdir(parents=True)
    for name in ("memory.md", "memory-insights.md", "config.json"):
        shutil.copyfile(SAMPLE_FUSION / name, root / ".fusion" / name)
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    """The bytes of the memory and insights files (to prove a failure changed neither)."""
    out = {}
    for name in ("memory.md", "memory-insights.md"):
        path = root / ".fusion" / name
        out[name] = path.read_bytes() if path.exists() else b""
    return out


def audit_state(root: Path) -> dict[str, Any]:
    """The audit state file's JSON."""
    return json.loads((root / ".fusion" / "memory-audit-state.json").read_text(encoding="utf-8"))
