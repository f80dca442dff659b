"""Real servers for the server tests: uvicorn on a free loopback port in a thread, and ``memdesk mcp`` as a
subprocess; tokens in a temporary user config folder."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from core.server.http import create_app
from core.server.runner import BoundServer, bind_socket, make_server
from core.server.service import ServedProjects
from core.server.tokens import TokenStore

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def tokens(user_config_dir: Path) -> TokenStore:
    """The user's token store, in a temporary config folder."""
    return TokenStore()


@pytest.fixture
def token(tokens: TokenStore) -> str:
    """A token named ``agent-a``."""
    return tokens.create("agent-a")


@dataclass
class Running:
    """A server running in this process, and clients for it."""

    bound: BoundServer
    served: ServedProjects
    thread: threading.Thread
    clients: list[httpx.Client] = field(default_factory=list)

    @property
    def port(self) -> int:
        return self.bound.port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self, token: str | None, headers: dict[str, str] | None = None) -> httpx.Client:
        """An httpx client for this server carrying ``token`` (none when ``None``) and ``headers``."""
        sent = {"Authorization": f"Bearer {token}"} if token else {}
        c = httpx.Client(base_url=self.url, headers={**sent, **(headers or {})}, timeout=60)
        self.clients.append(c)
        return c


@pytest.fixture
def serve(tokens: TokenStore) -> Iterator:
    """Start a real server over the given project folders; ``serve(root, ...)`` returns :class:`Running`."""
    running: list[Running] = []

    def start(*roots: Path, registry=None, mcp: bool = True, limits=None) -> Running:
        served = ServedProjects(roots, registry=registry)
        sock = bind_socket("127.0.0.1", 0)
        app = create_app(served, tokens, port=sock.getsockname()[1], mcp=mcp)
        bound = make_server(app, sock) if limits is None else make_server(app, sock, limits=limits)
        r = Running(bound, served, bound.start_thread())
        running.append(r)
        return r

    yield start
    for r in running:
        for c in r.clients:
            c.close()
        r.bound.stop()
    for r in running:
        r.thread.join(15)


def cli_env(user_config_dir: Path) -> dict[str, str]:
    """The environment of a ``python -m core.cli`` child: this worktree first, the test's user config."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["MEMDESK_CONFIG_DIR"] = str(user_config_dir)
    return env


def mcp_command(root: Path) -> list[str]:
    """The command line of ``memdesk mcp`` for ``root``."""
    return [sys.executable, "-m", "core.cli", "mcp", "--project", str(root)]


def serve_process(root: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    """``memdesk serve --project root --port 0`` as its own process with ``env``; the process and the URL it
    says it serves on (its stderr is left for the caller to read on)."""
    server = subprocess.Popen([sys.executable, "-m", "core.cli", "serve", "--project", str(root), "--port", "0"],
                              cwd=REPO, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert server.stderr is not None
    for line in server.stderr:
        if "memdesk: serving" in line:
            return server, line.split(" on ", 1)[1].split(" ", 1)[0]
    server.kill()
    raise AssertionError("memdesk serve did not start")


def many_agents(root: Path, agents: int, per_agent: int) -> None:
    """``agents`` agents' folders under ``root``, each with a MEMORY.md and ``per_agent - 1`` daily notes."""
    for a in range(agents):
        folder = root / ".fusion" / "agent-memory" / f"agent-{a:04d}"
        folder.mkdir(parents=True)
        (folder / "MEMORY.md").write_text(f"# Agent Memory\n\n- agent {a} keeps leases short\n", encoding="utf-8")
        for day in range(per_agent - 1):
            (folder / f"2026-07-{day + 1:02d}.md").write_text(f"# Daily Memory\n\n- day {day}\n", encoding="utf-8")
