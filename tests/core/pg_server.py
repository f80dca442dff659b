"""A throwaway PostgreSQL 15 cluster for the postgres backend's tests (and its benchmark).

``initdb`` + ``pg_ctl start`` in a temp folder, on a free loopback port, with password (SCRAM) auth
over TCP so a wrong password is really refused. PostgreSQL refuses to run as root, so when the tests
run as root the server runs as the ``postgres`` system user (``runuser``) in a folder that user owns.
The session fixture :func:`pg_server` skips only when the binaries are absent (and fails instead when
``MEMDESK_REQUIRE_POSTGRES=1``, as ``.ci/run`` sets); CI installs them and fails loudly without them.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PG_BIN_ENV = "MEMDESK_PG_BIN"
REQUIRE_ENV = "MEMDESK_REQUIRE_POSTGRES"
DEFAULT_PG_BIN = "/usr/lib/postgresql/15/bin"
SUPERUSER = "memdesk"
PASSWORD = "pw-Zq8!x3@lk:/s"  # URL-unfriendly characters on purpose: the DSN must be quoted and redacted
DATABASE = "memdesk_test"


def pg_bin() -> Path:
    """The folder of ``initdb``/``pg_ctl`` (``$MEMDESK_PG_BIN`` or Debian's PostgreSQL 15 folder)."""
    return Path(os.environ.get(PG_BIN_ENV, DEFAULT_PG_BIN))


def binaries_missing() -> str | None:
    """Why a cluster cannot be started here (``None`` when it can)."""
    missing = [n for n in ("initdb", "pg_ctl", "postgres") if not (pg_bin() / n).is_file()]
    if missing:
        return f"PostgreSQL binaries {', '.join(missing)} not found in {pg_bin()} (install postgresql-15)"
    if os.geteuid() == 0 and (shutil.which("runuser") is None or _postgres_uid() is None):
        return "running as root needs runuser and a 'postgres' system user to start PostgreSQL"
    return None


def _postgres_uid() -> tuple[int, int] | None:
    import pwd

    try:
        entry = pwd.getpwnam("postgres")
    except KeyError:
        return None
    return entry.pw_uid, entry.pw_gid


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PgServer:
    """A running (or stopped) throwaway cluster."""

    base: Path
    port: int

    @property
    def data(self) -> Path:
        return self.base / "data"

    def dsn(self, *, password: str = PASSWORD, database: str = DATABASE) -> str:
        """A key=value DSN for the test database (password quoted for libpq)."""
        quoted = password.replace("\\", "\\\\").replace("'", "\\'")
        return f"host=127.0.0.1 port={self.port} dbname={database} user={SUPERUSER} password='{quoted}'"

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = list(args)
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=120)

    def init(self) -> None:
        """Create the cluster (SCRAM auth over TCP; ``fsync`` stays on: the crash test relies on it)."""
        pwfile = self.base / "pw"
        pwfile.write_text(PASSWORD + "\n", encoding="utf-8")
        if os.geteuid() == 0:
            uid, gid = _postgres_uid()  # type: ignore[misc]
            for p in (self.base, pwfile):
                os.chown(p, uid, gid)
        self._run(str(pg_bin() / "initdb"), "-D", str(self.data), "-U", SUPERUSER, "--pwfile", str(pwfile),
                  "--auth-host=scram-sha-256", "--auth-local=trust", "-E", "UTF8", "--locale=C.UTF-8")
        pwfile.unlink()

    def start(self) -> None:
        """Start the server on :attr:`port` (loopback only, its socket in :attr:`base`)."""
        opts = f"-k {self.base} -p {self.port} -c listen_addresses=127.0.0.1 -c max_connections=200"
        self._run(str(pg_bin() / "pg_ctl"), "-D", str(self.data), "-o", opts, "-l", str(self.base / "log"),
                  "-w", "-t", "60", "start")

    def stop(self, mode: str = "fast") -> None:
        """Stop the server; ``mode="immediate"`` is a crash (no checkpoint, clients cut off)."""
        self._run(str(pg_bin() / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def running(self) -> bool:
        """Whether the server answers ``pg_ctl status``."""
        return self._run(str(pg_bin() / "pg_ctl"), "-D", str(self.data), "status", check=False).returncode == 0

    def ensure_running(self) -> None:
        """Start the server again when a test left it stopped."""
        if not self.running():
            self.start()

    def create_database(self, name: str) -> None:
        """Create database ``name`` (as the superuser, over the Unix socket)."""
        import psycopg

        with psycopg.connect(host=str(self.base), port=self.port, user=SUPERUSER, dbname="postgres",
                             autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')


def start_server() -> PgServer:
    """Initialise and start a new cluster with the test database; the caller stops it."""
    base = Path(tempfile.mkdtemp(prefix="memdesk-pg-"))
    os.chmod(base, 0o700)
    server = PgServer(base, free_port())
    try:
        server.init()
        server.start()
        server.create_database(DATABASE)
    except BaseException:
        server.stop("immediate")
        shutil.rmtree(base, ignore_errors=True)
        raise
    return server


def stop_server(server: PgServer) -> None:
    """Stop the cluster and remove its folder."""
    server.stop("fast")
    shutil.rmtree(server.base, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """One throwaway cluster for the whole test session (skipped only without PostgreSQL binaries)."""
    reason = binaries_missing()
    if reason and os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason}; {REQUIRE_ENV}=1 (CI) requires PostgreSQL", pytrace=False)
    if reason:
        pytest.skip(reason)
    server = start_server()
    try:
        yield server
    finally:
        stop_server(server)


@pytest.fixture
def pg(pg_server: PgServer) -> PgServer:
    """The session cluster, running (a test that stopped it has it started again)."""
    pg_server.ensure_running()
    return pg_server


@pytest.fixture
def pg_connection(pg: PgServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A user config (``MEMDESK_CONFIG_DIR``) holding the connection ``team`` to the test database."""
    from core.settings.connections import set_connection

    config_dir = tmp_path / "user-config"
    monkeypatch.setenv("MEMDESK_CONFIG_DIR", str(config_dir))
    set_connection("team", pg.dsn())
    return "team"


def project_key() -> str:
    """A project key no other test uses (all tests share one database)."""
    return f"test-{uuid.uuid4().hex[:12]}"
