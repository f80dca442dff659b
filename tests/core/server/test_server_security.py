"""What ``memdesk serve`` refuses: requests without a valid token, a foreign Host, oversize bodies (before they
are read whole); tokens kept hashed in the user's config; no route runs a command or opens a connection."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.core.server.conftest import cli_env

MEMORY = ".fusion/memory.md"
ROUTES = [("GET", "/api/memory"), ("PUT", "/api/memory"), ("GET", "/api/memory/files"),
          ("GET", "/api/memory/file?path=.fusion/memory.md"), ("PUT", "/api/memory/file"),
          ("POST", "/api/memory/append"), ("GET", "/api/memory/backend"), ("GET", "/api/memory/insights"),
          ("PUT", "/api/memory/insights"), ("GET", "/api/memory/audit"), ("GET", "/api/memory/stats"),
          ("POST", "/api/memory/search"), ("GET", "/docs"), ("GET", "/openapi.json"), ("POST", "/mcp")]


def test_every_route_needs_a_valid_bearer_token(serve, token, tokens, sample_project):
    srv = serve(sample_project)
    before = (sample_project / MEMORY).read_bytes()
    body = {"content": "written without a token", "path": MEMORY, "query": "x"}
    for headers in ({}, {"Authorization": "Bearer mdk_not-a-real-token"}, {"Authorization": f"Basic {token}"},
                    {"Authorization": "Bearer"}, {"Authorization": token}):
        c = srv.client(None, headers=headers)
        for method, url in ROUTES:
            r = c.request(method, url, json=body if method != "GET" else None)
            assert r.status_code == 401, (headers, url)
            assert r.headers["www-authenticate"].startswith("Bearer")
            assert "memdesk tokens create" in r.json()["error"]
    assert (sample_project / MEMORY).read_bytes() == before
    ok = srv.client(token)
    assert ok.get("/docs").status_code == 200
    assert "/api/memory/append" in ok.get("/openapi.json").json()["paths"]


def test_a_revoked_token_is_refused_at_its_next_request(serve, tokens, user_config_dir, sample_project):
    keep = tokens.create("keeper")
    gone = tokens.create("leaver")
    srv = serve(sample_project)
    assert srv.client(gone).get("/api/memory").status_code == 200
    out = subprocess.run([sys.executable, "-m", "core.cli", "tokens", "revoke", "leaver"], capture_output=True,
                         text=True, env=cli_env(user_config_dir), timeout=120)
    assert out.returncode == 0, out.stderr
    assert srv.client(gone).get("/api/memory").status_code == 401
    assert srv.client(keep).get("/api/memory").status_code == 200


def test_a_foreign_host_header_is_refused_before_anything_runs(serve, token, sample_project):
    srv = serve(sample_project)
    c = srv.client(token)
    before = (sample_project / MEMORY).read_bytes()
    for host in ("evil.example", f"evil.example:{srv.port}", f"127.0.0.1:{srv.port + 1}", "127.0.0.1.nip.io",
                 f"localhost.evil.example:{srv.port}", ""):
        r = c.put("/api/memory", json={"content": "rebound"}, headers={"Host": host})
        assert r.status_code == 421, host
        assert "Host" in r.json()["error"]
    assert (sample_project / MEMORY).read_bytes() == before
    for host in (f"127.0.0.1:{srv.port}", f"localhost:{srv.port}", f"LOCALHOST:{srv.port}", f"[::1]:{srv.port}"):
        assert c.get("/api/memory", headers={"Host": host}).status_code == 200, host


def _raw(port: int, head: str, body_parts: list[bytes]) -> bytes:
    """Send a request's head and part of its body on a raw socket; return what the server answers."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sender = threading.Thread(target=lambda: _send_all(sock, head.encode() + b"".join(body_parts)), daemon=True)
    sender.start()
    answer = b""
    try:
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    finally:
        sock.close()
    return answer


def _send_all(sock: socket.socket, data: bytes) -> None:
    try:
        sock.sendall(data)
    except OSError:
        pass  # the server answered and closed before taking it all: that is the point


def test_a_body_over_the_limit_is_refused_from_its_content_length_before_it_is_sent(serve, token, sample_project):
    srv = serve(sample_project)
    before = (sample_project / MEMORY).read_bytes()
    head = (f"PUT /api/memory HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\nAuthorization: Bearer {token}\r\n"
            "Content-Type: application/json\r\nContent-Length: 5000000\r\n\r\n")
    # Only 1 KB of the announced 5 MB is ever sent: an answer proves the server did not wait for the rest.
    answer = _raw(srv.port, head, [b'{"content": "' + b"a" * 1000])
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert (sample_project / MEMORY).read_bytes() == before


def test_a_chunked_body_over_the_limit_is_refused_while_it_streams(serve, token, sample_project):
    srv = serve(sample_project)
    before = (sample_project / MEMORY).read_bytes()
    head = (f"PUT /api/memory HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\nAuthorization: Bearer {token}\r\n"
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = b"b" * 65536
    parts = [f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n" for _ in range(20)]  # 1.25 MiB, never finished
    answer = _raw(srv.port, head, parts)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert (sample_project / MEMORY).read_bytes() == before


def test_a_body_within_the_limit_reaches_the_backend_limit(serve, token, sample_project):
    from core.server.guard import MAX_BODY_BYTES

    c = serve(sample_project).client(token)
    content = "é" * ((1_048_576 // 2) + 1)  # 1 MiB + 2 bytes of UTF-8 in a body under the request limit
    body = json.dumps({"content": content}, ensure_ascii=False).encode("utf-8")
    assert len(body) < MAX_BODY_BYTES
    r = c.put("/api/memory", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["code"] == "QUOTA_EXCEEDED"


def test_tokens_are_kept_hashed_in_the_user_config_never_in_a_project(serve, tokens, user_config_dir,
                                                                       sample_project):
    env = cli_env(user_config_dir)
    out = subprocess.run([sys.executable, "-m", "core.cli", "tokens", "create", "desktop-host", "--json"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    raw = json.loads(out.stdout)["token"]
    assert raw.startswith("mdk_") and len(raw) > 40
    stored = (user_config_dir / "tokens.json").read_text(encoding="utf-8")
    assert raw not in stored and "desktop-host" in stored
    assert stat.S_IMODE(os.stat(user_config_dir / "tokens.json").st_mode) == 0o600
    listed = subprocess.run([sys.executable, "-m", "core.cli", "tokens", "list", "--json"], capture_output=True,
                            text=True, env=env, timeout=120)
    assert [t["name"] for t in json.loads(listed.stdout)] == ["desktop-host"]
    assert raw not in listed.stdout and "sha256" not in listed.stdout
    again = subprocess.run([sys.executable, "-m", "core.cli", "tokens", "create", "desktop-host"],
                           capture_output=True, text=True, env=env, timeout=120)
    assert again.returncode == 2 and "exists already" in again.stderr
    missing = subprocess.run([sys.executable, "-m", "core.cli", "tokens", "revoke", "nobody"], capture_output=True,
                             text=True, env=env, timeout=120)
    assert missing.returncode == 2 and "no token named 'nobody'" in missing.stderr

    c = serve(sample_project).client(raw)
    assert c.post("/api/memory/append", json={"content": "written with the desktop token"}).status_code == 200
    for path in sample_project.rglob("*"):
        if path.is_file():
            assert raw.encode() not in path.read_bytes(), path
            assert path.name != "tokens.json"


def test_no_route_runs_a_command_or_opens_a_connection(serve, token, sample_project):
    seen: list[tuple[str, object]] = []
    watching = threading.Event()
    main = threading.main_thread()

    def hook(event: str, args: tuple) -> None:
        # Only the server's threads count; the test's own client connects from the main thread.
        if not watching.is_set() or threading.current_thread() is main:
            return
        if event in {"subprocess.Popen", "os.system", "os.posix_spawn", "os.exec", "os.fork", "socket.connect",
                     "socket.getaddrinfo", "socket.sendto", "urllib.Request", "http.client.connect"}:
            seen.append((event, args[1:] if event == "socket.connect" else args[:1]))

    sys.addaudithook(hook)  # hooks cannot be removed; this one is inert once `watching` is cleared
    c = serve(sample_project).client(token)
    watching.set()
    try:
        c.get("/api/memory")
        doc = c.get("/api/memory/file", params={"path": MEMORY}).json()
        c.put("/api/memory/file", json={"path": MEMORY, "content": doc["content"] + "\nx\n", "expectedHash": doc["hash"]})
        c.put("/api/memory", json={"content": doc["content"]})
        c.post("/api/memory/append", json={"content": "an entry, with nothing run"})
        c.get("/api/memory/files")
        c.get("/api/memory/backend")
        c.get("/api/memory/insights")
        c.put("/api/memory/insights", json={"content": "# Memory Insights\n"})
        c.get("/api/memory/audit")
        c.get("/api/memory/stats")
        c.post("/api/memory/search", json={"query": "lease", "derived": True})
        c.post("/api/memory/search", json={"query": "lease"})
        time.sleep(0.2)
    finally:
        watching.clear()
    assert seen == []


def _start_cli_server(args: list[str], env: dict[str, str]) -> tuple[subprocess.Popen, list[str]]:
    proc = subprocess.Popen([sys.executable, "-m", "core.cli", "serve", *args], env=env, stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, text=True)
    lines: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        if "serving" in line:
            break
    return proc, lines


@pytest.mark.parametrize("host, warns", [("127.0.0.1", False), ("0.0.0.0", True)])
def test_serve_binds_loopback_by_default_and_warns_otherwise(tokens, user_config_dir, sample_project, host, warns):
    import httpx

    token = tokens.create("cli")
    proc, lines = _start_cli_server(["--project", str(sample_project), "--port", "0", "--host", host,
                                     "--allow-host", "Devbox.lan"], cli_env(user_config_dir))
    try:
        text = "".join(lines)
        assert "serving sample" in text, text
        assert ("not only on this machine" in text) is warns
        port = int(text.rsplit(":", 1)[1].split(" ")[0])
        r = httpx.get(f"http://127.0.0.1:{port}/api/memory", headers={"Authorization": f"Bearer {token}"}, timeout=30)
        assert r.status_code == 200
        assert r.json()["content"] == (sample_project / MEMORY).read_text(encoding="utf-8")
        auth = {"Authorization": f"Bearer {token}"}
        named = httpx.get(f"http://127.0.0.1:{port}/api/memory", headers={**auth, "Host": f"devbox.lan:{port}"})
        assert named.status_code == 200
        other = httpx.get(f"http://127.0.0.1:{port}/api/memory", headers={**auth, "Host": f"other.lan:{port}"})
        assert other.status_code == 421
    finally:
        proc.terminate()
        proc.wait(30)
        proc.stderr.close()


def test_serve_refuses_a_missing_project_and_a_busy_port(tokens, user_config_dir, sample_project, tmp_path):
    env = cli_env(user_config_dir)
    out = subprocess.run([sys.executable, "-m", "core.cli", "serve", "--project", str(tmp_path / "nope")],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 2 and "does not exist" in out.stderr
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    try:
        out = subprocess.run([sys.executable, "-m", "core.cli", "serve", "--project", str(sample_project),
                              "--port", str(busy.getsockname()[1])], capture_output=True, text=True, env=env,
                             timeout=120)
        assert out.returncode == 1 and "cannot listen on 127.0.0.1:" in out.stderr
    finally:
        busy.close()


def test_tokens_file_that_is_broken_refuses_everyone_and_is_not_overwritten(serve, tokens, user_config_dir,
                                                                           sample_project):
    token = tokens.create("a")
    srv = serve(sample_project)
    path = Path(user_config_dir) / "tokens.json"
    path.write_text("{broken", encoding="utf-8")
    r = srv.client(token).get("/api/memory")
    assert r.status_code == 503 and "tokens" in r.json()["error"]
    out = subprocess.run([sys.executable, "-m", "core.cli", "tokens", "create", "b"], capture_output=True, text=True,
                         env=cli_env(user_config_dir), timeout=120)
    assert out.returncode == 2 and "not a memdesk tokens file" in out.stderr
    assert path.read_text(encoding="utf-8") == "{broken"


def test_the_memdesk_entry_point_hands_the_server_commands_to_the_cli(user_config_dir):
    code = "import sys; from gui.main import main; sys.exit(main(sys.argv[1:]))"
    env = cli_env(user_config_dir)
    made = subprocess.run([sys.executable, "-c", code, "tokens", "create", "entry", "--json"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert made.returncode == 0, made.stderr
    listed = subprocess.run([sys.executable, "-c", code, "tokens", "list"], capture_output=True, text=True, env=env,
                            timeout=120)
    assert listed.returncode == 0 and listed.stdout.startswith("entry ")
    helped = subprocess.run([sys.executable, "-c", code, "mcp", "--help"], capture_output=True, text=True, env=env,
                            timeout=120)
    assert helped.returncode == 0 and "--project" in helped.stdout
