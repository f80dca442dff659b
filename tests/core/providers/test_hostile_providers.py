"""Hostile model providers: trickling and huge HTTP replies, escaping and flooding commands (items 9, 14, 15)."""

from __future__ import annotations

import functools
import json
import socket
import sys
import textwrap
import threading
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from core.providers import CommandProvider, OpenAIProvider, ProviderError, ProviderRequest, create_provider
from core.settings.user_config import ProviderConfig

REQUEST = ProviderRequest("the prompt", "# Project Memory\n")
REPLY = json.dumps({"summary": "ok", "insights": [], "prunedMemory": None})
CHAT = json.dumps({"choices": [{"message": {"role": "assistant", "content": REPLY}}]}).encode()


# -- a raw HTTP server whose handler writes whatever a test wants, as slowly as it wants -----------------

class RawServer:
    """Loopback server: reads one request, then ``respond(socket)`` writes the reply."""

    def __init__(self, respond: Callable[[socket.socket, threading.Event], None]) -> None:
        self.respond = respond
        self.stop = threading.Event()
        self.requests = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            while len(body) < length:
                body += conn.recv(65536)
            self.requests += 1
            try:
                self.respond(conn, self.stop)
            except OSError:  # the client gave up: that is the point of these tests
                pass

    def close(self) -> None:
        self.stop.set()
        self.sock.close()
        self.thread.join(2)


@pytest.fixture
def raw_server() -> Iterator[Callable[..., RawServer]]:
    servers: list[RawServer] = []

    def make(respond: Callable[[socket.socket, threading.Event], None]) -> RawServer:
        servers.append(RawServer(respond))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


def _trickle(conn: socket.socket, stop: threading.Event) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
    while not stop.wait(1.0):
        conn.sendall(b" ")  # one byte a second: every read succeeds, the reply never ends


@functools.cache
def _gzip_bomb() -> bytes:
    """About 250 KB of gzip that inflates to 256 MiB, built without holding the 256 MiB."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b"[" * (1024 * 1024)
    return b"".join(packer.compress(block) for _ in range(256)) + packer.flush()


def _flood(announce: bool, gzip_bomb: bool = False) -> Callable[[socket.socket, threading.Event], None]:
    total = 200 * 1024 * 1024

    def respond(conn: socket.socket, stop: threading.Event) -> None:
        if gzip_bomb:
            body = _gzip_bomb()
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
            return
        length = b"Content-Length: %d\r\n" % total if announce else b"Connection: close\r\n"
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + length + b"\r\n")
        block = b"x" * 65536
        for _ in range(total // len(block)):
            if stop.is_set():
                return
            conn.sendall(block)

    return respond


def test_trickling_server_hits_the_overall_deadline(raw_server):
    server = raw_server(_trickle)
    provider = OpenAIProvider("slow", server.base_url, "m", None, timeout_s=5, deadline_s=2.5)
    started = time.monotonic()
    with pytest.raises(ProviderError) as err:
        provider.complete(REQUEST)
    assert err.value.kind == "timeout" and "2.5 s deadline" in err.value.message
    assert time.monotonic() - started < 5  # the step timeout (5 s) never fired: the deadline did


@pytest.mark.parametrize("how", ["content-length", "no-length", "gzip-bomb"])
def test_huge_reply_hits_the_cap_and_memory_stays_small(raw_server, how):
    server = raw_server(_flood(how == "content-length", gzip_bomb=how == "gzip-bomb"))
    provider = OpenAIProvider("big", server.base_url, "m", None, timeout_s=10, max_reply_bytes=1024 * 1024)
    _gzip_bomb()  # built before measuring: only the client's memory counts
    tracemalloc.start()
    try:
        with pytest.raises(ProviderError) as err:
            provider.complete(REQUEST)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert err.value.kind == "bad_reply" and "1 MiB allowed (maxReplyBytes)" in err.value.message
    assert peak < 16 * 1024 * 1024, f"peak {peak:,} bytes"


def test_deeply_nested_json_reply_is_a_bad_reply(raw_server):
    body = b"[" * 200_000 + b"]" * 200_000

    def respond(conn: socket.socket, _stop: threading.Event) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)

    with pytest.raises(ProviderError) as err:
        OpenAIProvider("deep", raw_server(respond).base_url, "m", None, 5).complete(REQUEST)
    assert err.value.kind == "bad_reply"


def test_redirect_is_not_followed_and_the_key_goes_nowhere(monkeypatch):
    monkeypatch.setenv("MEMDESK_HOSTILE_KEY", "sk-secret")
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(307, headers={"Location": "http://evil.example/steal"})

    provider = OpenAIProvider("r", "http://api.example/v1", "m", "MEMDESK_HOSTILE_KEY", 5,
                              transport=httpx.MockTransport(handler))
    with pytest.raises(ProviderError) as err:
        provider.complete(REQUEST)
    assert err.value.kind == "config" and "evil.example" in err.value.message
    assert [r.url.host for r in seen] == ["api.example"] and "sk-secret" not in err.value.message


@pytest.mark.parametrize("encoding", ["identity", "gzip", "deflate"])
def test_good_reply_still_arrives(raw_server, encoding):
    body = {"identity": CHAT, "gzip": zlib.compress(CHAT, wbits=31), "deflate": zlib.compress(CHAT)}[encoding]

    def respond(conn: socket.socket, _stop: threading.Event) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Encoding: %s\r\nContent-Length: %d\r\n\r\n"
                     % (encoding.encode(), len(body)) + body)

    assert OpenAIProvider("ok", raw_server(respond).base_url, "m", None, 5).complete(REQUEST) == REPLY


def test_limits_come_from_the_users_provider_config():
    config = ProviderConfig.model_validate({"kind": "openai", "baseUrl": "http://h/v1", "model": "m",
                                            "maxReplyBytes": 4096, "deadlineS": 7})
    provider = create_provider("x", config)
    assert (provider.max_reply_bytes, provider.deadline_s) == (4096, 7)
    for bad in ({"maxReplyBytes": 10}, {"maxReplyBytes": 2**40}, {"deadlineS": 0}, {"deadlineS": 10**9}):
        with pytest.raises(ValueError):
            ProviderConfig.model_validate({"kind": "command", "command": ["x"], **bad})


# -- command provider --------------------------------------------------------------------------------------

def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0]
        return state == "Z"
    except (FileNotFoundError, IndexError):
        return True


def _wait_gone(pid: int, seconds: float = 5) -> bool:
    deadline = time.monotonic() + seconds
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return _gone(pid)


def _command(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return [sys.executable, str(path)]


ESCAPER = """
    import os, subprocess, sys, time
    # A grandchild that leaves the session and keeps our stdout open for a minute.
    child = subprocess.Popen([sys.executable, "-c", "import os, time; os.setsid(); time.sleep(60)"])
    open({pidfile!r}, "w").write(str(child.pid))
    sys.stdin.read()
    sys.stdout.write({reply!r})
    sys.stdout.flush()
    {after}
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="descendants are tracked through /proc")
@pytest.mark.parametrize("after", ["exit", "hang-timeout", "hang-cancel"])
def test_setsid_grandchild_is_ended_and_cannot_hold_the_reply(tmp_path, after):
    pidfile = tmp_path / "grandchild.pid"
    argv = _command(tmp_path, ESCAPER.format(pidfile=str(pidfile), reply=REPLY,
                                             after="time.sleep(60)" if after.startswith("hang") else ""))
    cancel = (lambda: pidfile.exists()) if after == "hang-cancel" else (lambda: False)
    provider = CommandProvider("escaper", argv, timeout_s=3 if after == "hang-timeout" else 30)
    started = time.monotonic()
    if after == "exit":
        assert provider.complete(REQUEST) == REPLY  # a valid reply is not turned into a timeout
    else:
        with pytest.raises(ProviderError) as err:
            provider.complete(REQUEST, cancel=cancel)
        assert err.value.kind == ("timeout" if after == "hang-timeout" else "cancelled")
    assert time.monotonic() - started < 10
    pid = int(pidfile.read_text())
    assert _wait_gone(pid), "the setsid grandchild survived"


DAEMON = """
    import os, sys, time
    sys.stdin.read()
    if os.fork() == 0:          # double fork: the grandchild is re-parented and leaves the session
        os.setsid()
        if os.fork() == 0:
            open({pidfile!r}, "w").write(str(os.getpid()))
            time.sleep(60)
        os._exit(0)
    sys.stdout.write({reply!r})
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe holders are found through /proc")
def test_double_forked_daemon_holding_the_pipe_is_ended(tmp_path):
    pidfile = tmp_path / "daemon.pid"
    argv = _command(tmp_path, DAEMON.format(pidfile=str(pidfile), reply=REPLY))
    started = time.monotonic()
    assert CommandProvider("daemon", argv, timeout_s=30).complete(REQUEST) == REPLY
    assert time.monotonic() - started < 10
    deadline = time.monotonic() + 5
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _wait_gone(int(pidfile.read_text())), "the daemon survived"


def test_flood_of_stdout_hits_the_cap_and_memory_stays_small(tmp_path):
    argv = _command(tmp_path, """
        import sys
        block = b"x" * 65536
        for _ in range(1600):   # 100 MiB
            sys.stdout.buffer.write(block)
    """)
    tracemalloc.start()
    try:
        with pytest.raises(ProviderError) as err:
            CommandProvider("flood", argv, 30, max_reply_bytes=1024 * 1024).complete(REQUEST)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert err.value.kind == "bad_reply" and "more than 1 MiB on stdout (maxReplyBytes)" in err.value.message
    assert peak < 16 * 1024 * 1024, f"peak {peak:,} bytes"


def test_command_never_runs_in_the_project(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    marker = tmp_path / "pwned"
    (project / "tool.py").write_text(f"open({str(marker)!r}, 'w').write('ran the project code')\n")
    provider = CommandProvider("tool", [sys.executable, "-m", "tool"], 10)
    with pytest.raises(ProviderError):  # no module named tool in a fresh folder
        provider.complete(ProviderRequest("p", "m", None, project))
    assert not marker.exists()


def test_deadline_shortens_a_long_command_timeout(tmp_path):
    argv = _command(tmp_path, "import time; time.sleep(30)")
    started = time.monotonic()
    with pytest.raises(ProviderError) as err:
        CommandProvider("slow", argv, timeout_s=60, deadline_s=1.0).complete(REQUEST)
    assert err.value.kind == "timeout" and time.monotonic() - started < 6
