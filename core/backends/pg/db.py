"""The pooled connection to the shared database, with every driver error turned into a ``MemoryBackendError``.

Opening checks the server with one direct connection first (so "server down" and "password refused" get
their own clear message instead of a pool timeout), migrates the schema on it, and only then starts the
``psycopg_pool.ConnectionPool``. A connection taken from the pool is checked first, so a server that was
restarted costs one reconnect, not an error.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from core.backends.pg import schema
from core.errors import MemoryBackendError
from core.settings.connections import CONNECT_TIMEOUT_S, one_line, redact_dsn, scrub

log = logging.getLogger(__name__)

#: Seconds a caller waits for a pooled connection before the server counts as unavailable.
POOL_TIMEOUT_S = 5.0
#: SQLSTATEs (and libpq texts) of a server that refused the login.
_AUTH_STATES = {"28P01", "28000"}
LOCK_WAIT = "30 s"
_AUTH_MESSAGES = ("authentication failed", "no pg_hba.conf entry", "password must be", "does not exist")


def connect_kwargs() -> dict[str, object]:
    """Options of every connection memdesk makes (fail fast, named in ``pg_stat_activity``)."""
    return {"connect_timeout": CONNECT_TIMEOUT_S, "application_name": "memdesk"}


class PgDatabase:
    """A connection pool over one DSN; :meth:`transaction` and :meth:`connection` map driver errors."""

    def __init__(self, dsn: str, backend_id: str = "postgres", *, max_size: int = 4) -> None:
        self.dsn = dsn
        self.backend_id = backend_id
        self.max_size = max_size
        self.pool: ConnectionPool | None = None
        self.schema_version = 0

    def open(self) -> None:
        """Check the server, migrate the schema and start the pool (``BACKEND_UNAVAILABLE`` when it cannot)."""
        try:
            with psycopg.connect(self.dsn, **connect_kwargs()) as conn:  # type: ignore[arg-type]
                self.schema_version = schema.migrate(conn, self.backend_id)
        except psycopg.Error as exc:
            raise self.error(exc, "cannot open the database") from exc
        # Autocommit: a read is one statement with nothing to end after it (off, every read cost a COMMIT
        # round trip when its connection went back); a write is a transaction() block, BEGIN to COMMIT.
        self.pool = ConnectionPool(self.dsn, min_size=1, max_size=self.max_size,
                                   kwargs={**connect_kwargs(), "autocommit": True},
                                   check=ConnectionPool.check_connection, timeout=POOL_TIMEOUT_S,
                                   name="memdesk", open=True)

    def close(self) -> None:
        """Close every pooled connection."""
        pool, self.pool = self.pool, None
        if pool is not None:
            pool.close()

    def error(self, exc: BaseException, doing: str) -> MemoryBackendError:
        """A one-line ``MemoryBackendError`` for a driver error, the password masked."""
        where = redact_dsn(self.dsn)
        detail = scrub(one_line(str(exc)), self.dsn) or type(exc).__name__
        state = getattr(exc, "sqlstate", None)
        # A refused login at connect time carries no SQLSTATE in psycopg: libpq's text says it.
        if state in _AUTH_STATES or any(m in detail for m in _AUTH_MESSAGES):
            return MemoryBackendError(f"{doing}: the server refused the login ({where}): {detail}",
                                      "BACKEND_UNAVAILABLE", self.backend_id, exc)
        if state == "55P03":
            return MemoryBackendError(f"{doing}: another writer holds the document (waited "
                                      f"{LOCK_WAIT}); try again", "WRITE_FAILED", self.backend_id, exc)
        if isinstance(exc, PoolTimeout | psycopg.OperationalError | psycopg.InterfaceError):
            return MemoryBackendError(f"{doing}: the PostgreSQL server is unavailable ({where}): {detail}",
                                      "BACKEND_UNAVAILABLE", self.backend_id, exc)
        return MemoryBackendError(f"{doing}: {detail}", "WRITE_FAILED", self.backend_id, exc)

    @contextmanager
    def connection(self, doing: str = "database request") -> Iterator[psycopg.Connection]:
        """A pooled connection in autocommit mode (for reads; writes use :meth:`transaction`); driver errors
        become ``MemoryBackendError``."""
        if self.pool is None:
            raise MemoryBackendError("the database is closed", "NOT_INITIALIZED", self.backend_id)
        try:
            with self.pool.connection() as conn:
                yield conn
        except MemoryBackendError:
            raise
        except (psycopg.Error, PoolTimeout) as exc:
            raise self.error(exc, doing) from exc

    @contextmanager
    def transaction(self, doing: str = "database write") -> Iterator[psycopg.Connection]:
        """One transaction: committed when the block ends, rolled back when it raises."""
        with self.connection(doing) as conn, conn.transaction():
            yield conn
